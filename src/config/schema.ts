// The one configuration schema: every option, its type, bounds, default and description.
// Keys here are camelCase; the option names users write are the dotted kebab-case form (options.ts).

import { z } from 'zod';
import { parseHostAllowList } from '../lib/index.js';

const port = (fallback: number, description: string) =>
  z.int().min(0).max(65_535).default(fallback).describe(description);
const positiveInt = (fallback: number, description: string) => z.int().min(1).default(fallback).describe(description);
const nonNegativeInt = (fallback: number, description: string) =>
  z.int().min(0).default(fallback).describe(description);

/** Bytes a measurement message holds beside its payload (topic, packet id), with room to spare. */
const MEASUREMENT_HEADER_ROOM = 1_024;

/** An ISO 8601 duration (PnYnMnWnDTnHnMnS), or empty. */
const ISO_DURATION = /^$|^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?$/;
/** Five or six cron fields (checked in full when the job is scheduled). */
const CRON = /^\S+( \S+){4,5}$/;

function isHostAllowList(value: string): boolean {
  try {
    parseHostAllowList(value);
    return true;
  } catch {
    return false;
  }
}

/** The TLS options: key and certificate set together; the redirect port with HTTPS only, on a port of its own. */
function tlsPairIssues(config: { server: TlsOptions & { port: number; redirectPort: number }; mqtt: TlsOptions & { port: number; wsPort: number; tlsPort: number } },
  ctx: z.RefinementCtx): void {
  for (const group of ['server', 'mqtt'] as const) {
    const { tlsKey, tlsCert } = config[group];
    if (tlsKey !== '' && tlsCert === '') ctx.addIssue({ code: 'custom', path: [group, 'tlsCert'], message: `needed with ${group}.tls-key` });
    if (tlsKey === '' && tlsCert !== '') ctx.addIssue({ code: 'custom', path: [group, 'tlsKey'], message: `needed with ${group}.tls-cert` });
  }
  const { server, mqtt } = config;
  if (server.redirectPort < 0) return;
  if (server.tlsKey === '' || server.tlsCert === '') {
    ctx.addIssue({ code: 'custom', path: ['server', 'redirectPort'], message: 'needs server.tls-key and server.tls-cert (it redirects to HTTPS)' });
  }
  if (server.redirectPort > 0 && [server.port, mqtt.port, mqtt.wsPort, mqtt.tlsPort].includes(server.redirectPort)) {
    ctx.addIssue({ code: 'custom', path: ['server', 'redirectPort'], message: 'must differ from server.port, mqtt.port, mqtt.ws-port and mqtt.tls-port' });
  }
}

const RETENTION_RULE = z.strictObject({
  tenant: z.string().regex(/^[A-Za-z0-9_-]*$/, 'a tenant name (letters, digits, _ and -)'),
  type: z.string().min(1).optional(),
  raw: z.string().regex(ISO_DURATION).refine((v) => /[1-9]/.test(v), 'longer than zero').optional(),
  minute: z.string().regex(ISO_DURATION).refine((v) => /[1-9]/.test(v), 'longer than zero').optional(),
  hour: z.string().regex(ISO_DURATION).refine((v) => /[1-9]/.test(v), 'longer than zero').optional(),
});

/** The retention rules as they are written in history.retention-rules. */
export type RetentionRuleOption = z.infer<typeof RETENTION_RULE>;

/** history.retention-rules: a JSON array of rules, at most one per tenant and type. */
function retentionRuleIssues(text: string, ctx: z.RefinementCtx): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'expected a JSON array of retention rules' });
    return;
  }
  const rules = z.array(RETENTION_RULE).safeParse(parsed);
  if (!rules.success) {
    for (const issue of rules.error.issues) ctx.addIssue({ code: 'custom', message: `rule ${issue.path.join('.')}: ${issue.message}` });
    return;
  }
  const seen = new Set<string>();
  for (const r of rules.data) {
    const key = `${r.tenant} ${r.type ?? ''}`;
    if (seen.has(key)) ctx.addIssue({ code: 'custom', message: `two rules for tenant '${r.tenant}'${r.type ? ` and type ${r.type}` : ''}` });
    seen.add(key);
  }
}

/** The rules of history.retention-rules (checked at start-up). */
export const parseRetentionRules = (text: string): RetentionRuleOption[] => z.array(RETENTION_RULE).parse(JSON.parse(text));

/** federation.downlink needs an upstream, attributes and exactly one way for notifications to arrive. */
function downlinkIssues(federation: { upstream: { url: string }; downlink: { types: string; attributes: string; mqttUrl: string; endpoint: string; endpointToken: string } },
  ctx: z.RefinementCtx): void {
  const { downlink } = federation;
  if (downlink.types === '') return;
  const at = (key: string): string[] => ['federation', 'downlink', key];
  if (federation.upstream.url === '') ctx.addIssue({ code: 'custom', path: at('types'), message: 'needs federation.upstream.url (the broker the subscription is kept on)' });
  if (downlink.attributes === '') ctx.addIssue({ code: 'custom', path: at('attributes'), message: 'needed with federation.downlink.types (the attributes the cloud may write)' });
  if ((downlink.mqttUrl === '') === (downlink.endpoint === '')) {
    ctx.addIssue({ code: 'custom', path: at('mqttUrl'), message: 'exactly one of federation.downlink.mqtt-url and federation.downlink.endpoint is needed with federation.downlink.types' });
  }
  if (downlink.endpoint !== '' && downlink.endpointToken === '') ctx.addIssue({ code: 'custom', path: at('endpointToken'), message: 'needed with federation.downlink.endpoint' });
}

/** federation.register needs an upstream. */
function registerIssues(federation: { upstream: { url: string }; register: { enabled: boolean; only: boolean } }, ctx: z.RefinementCtx): void {
  if (federation.register.enabled && federation.upstream.url === '') {
    ctx.addIssue({ code: 'custom', path: ['federation', 'register', 'enabled'], message: 'needs federation.upstream.url (the broker the gateway registers with)' });
  }
  if (federation.register.only && !federation.register.enabled) {
    ctx.addIssue({ code: 'custom', path: ['federation', 'register', 'only'], message: 'needs federation.register.enabled' });
  }
}

interface TlsOptions {
  tlsKey: string;
  tlsCert: string;
}

// NOTE: groups use `prefault({})`, not `default({})`: a default is returned as is, while a prefault is
// parsed, so the defaults of the options inside the group apply.
export const configSchema = z
  .strictObject({
    server: z
      .strictObject({
        port: port(1026, 'HTTP listen port (0 picks a free port)'),
        host: z.string().min(1).default('0.0.0.0').describe('HTTP listen address'),
        shutdownTimeout: positiveInt(10_000, 'Milliseconds to drain in-flight work on SIGTERM before closing'),
        publicUrl: z.string().regex(/^$|^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, 'expected an http(s) URL such as http://gateway.local:1026, or empty').default('')
          .describe('The URL receivers reach this broker at, for links to contexts it serves (empty: http://127.0.0.1:<port>)'),
        // Bounds of the HTTP listener on slow or many clients.
        headersTimeout: positiveInt(10_000, 'Milliseconds a client has to send a request line and its headers (then 408 and the connection closes)'),
        requestTimeout: positiveInt(30_000, 'Milliseconds a client has to send a whole request, body included (then 408 and the connection closes)'),
        keepAliveTimeout: positiveInt(5_000, 'Milliseconds an idle keep-alive HTTP connection stays open'),
        maxConnections: positiveInt(1_024, 'Most open HTTP connections (WebSocket ones included); further ones are closed at once'),
        // HTTPS on server.port, and the plain port that only redirects to it.
        tlsKey: z.string().default('').describe('PEM private key file: with server.tls-cert, server.port serves HTTPS (TLS 1.2 or later); reloaded on SIGHUP and when the file changes'),
        tlsCert: z.string().default('').describe('PEM certificate file of HTTPS, the gateway\'s certificate first, then any intermediate ones (needs server.tls-key)'),
        redirectPort: z.int().min(-1, 'expected a port from 0 to 65535, or -1 for off')
          .max(65_535, 'expected a port from 0 to 65535, or -1 for off').default(-1)
          .describe('Plain HTTP port answering every request with 308 to the same path over HTTPS on server.port (-1: off; needs server.tls-key and server.tls-cert)'),
      })
      .prefault({}),
    storage: z
      .strictObject({
        dir: z.string().min(1).default('./data').describe('Directory holding the SQLite database'),
        busyTimeout: nonNegativeInt(5_000, 'Milliseconds SQLite waits for a lock before failing'),
        minFreeBytes: nonNegativeInt(67_108_864, 'Free bytes the disk of storage.dir must keep: below, writes get 507 and MQTT measurements are refused (QoS 1: not acknowledged) (0: off)'),
        walLimitBytes: z.int().min(1_048_576, 'expected at least 1048576 (1 MiB)').max(1_073_741_824, 'expected at most 1073741824 (1 GiB)')
          .default(4_194_304)
          .describe('WAL size past which a checkpoint copies it into the database file, and that it is trimmed back to: larger writes fewer bytes per update (SD wear), holds more disk and makes the start after a crash read more'),
        commitWindow: z.int().min(0).max(1_000, 'expected at most 1000 (milliseconds)').default(0)
          .describe('Milliseconds the first write waits for others to share its commit (0: the next turn of the event loop): at low, steady rates, such as measurements spread over the second, a few tens divide the bytes written per write (SD wear), paid in write and PUBACK latency'),
        checkpointSchedule: z.string().regex(CRON, 'expected a cron expression of 5 or 6 fields')
          .default('* * * * *').describe('When a passive WAL checkpoint copies committed pages into the database file (cron, UTC)'),

        // The disk budget (docs/history.md, Disk budget).
        maxBytes: nonNegativeInt(0, 'Disk budget of the database, in bytes of pages in use (WAL not counted): above 95%, the oldest raw history buckets whose summaries exist are dropped, then the oldest minute summaries, down to 90%; when nothing can go, writes get 507 and MQTT measurements are refused (QoS 1: not acknowledged) (0: off)'),
      })
      .prefault({}),
    mqtt: z
      .strictObject({
        port: port(1883, 'TCP port of the embedded MQTT broker (0 picks a free port)'),
        host: z.string().min(1).default('0.0.0.0').describe('Listen address of the embedded MQTT broker (TCP and WebSocket)'),
        wsPort: z.int().min(-1, 'expected a port from 0 to 65535, or -1 for off')
          .max(65_535, 'expected a port from 0 to 65535, or -1 for off').default(-1)
          .describe('WebSocket port of the embedded MQTT broker, for browser dashboards (-1: off; 0 picks a free port)'),
        connectTimeout: positiveInt(5_000, 'Milliseconds allowed for connecting to an outside MQTT broker that receives notifications'),
        tlsPort: z.int().min(-1, 'expected a port from 0 to 65535, or -1 for off')
          .max(65_535, 'expected a port from 0 to 65535, or -1 for off').default(-1)
          .describe('MQTT over TLS port of the embedded broker (-1: off; needs mqtt.tls-key and mqtt.tls-cert)'),
        tlsKey: z.string().default('').describe('PEM private key file of the MQTT TLS listener; with mqtt.tls-cert, mqtt.ws-port serves wss:// too; reloaded on SIGHUP and when the file changes'),
        tlsCert: z.string().default('').describe('PEM certificate (chain) file of the MQTT TLS listener and of wss:// on mqtt.ws-port (needs mqtt.tls-key)'),
        defaultEntityType: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'expected an NGSI-LD type name such as Device').default('Device')
          .describe('Entity type of a device not in the device registry (entity id urn:ngsi-ld:<type>:<deviceId>)'),
        autoprovision: z.enum(['auto', 'true', 'false']).default('auto')
          .describe('Create the entity of an unknown device on its first measurement (auto: on when authentication is off)'),
        maxPayload: positiveInt(65_536, 'Largest measurement message accepted, in bytes (larger: dropped and counted)'),

        // What a client of the embedded broker may cost before it is authenticated (every listener).
        // NOTE: 256 KiB: a measurement is at most mqtt.max-payload (64 KiB) plus its topic, a CONNECT
        // with a token a few KiB; the margin lets mqtt.max-payload grow fourfold without this option.
        maxPacketBytes: z.int().min(1_024).max(268_435_455).default(262_144)
          .describe('Largest MQTT packet a client may send, in bytes of remaining length, checked from its fixed header before the rest is read (larger: the connection is closed at once; at least mqtt.max-payload + 1024)'),
        clientConnectTimeout: positiveInt(10_000, 'Milliseconds a client of the embedded broker has, from opening its connection (TLS or WebSocket handshake included), to send its whole CONNECT packet (later: the connection is closed)'),
        maxConnectionsPerAddress: positiveInt(64, 'Connections open at once to the embedded broker from one IP address, CONNECT pending included (more: refused at once)'),
        maxConnections: positiveInt(1_024, 'Connections open at once to the embedded broker over every listener, CONNECT pending included (more: refused at once)'),

        // MQTT 5 on the embedded broker.
        notificationExpiry: nonNegativeInt(86_400, 'Seconds a notification published on the embedded broker lives: MQTT 5 subscribers get it with its Message Expiry Interval (what is left of it), and one queued for an offline persistent session is dropped once they have passed (0: never)'),
      })
      .prefault({}),
    pagination: z
      .strictObject({
        limitDefault: positiveInt(20, 'Entities per page when a query gives no limit'),
        limitMax: positiveInt(1_000, 'Largest limit a query may ask for (above: 403 TooManyResults)'),
      })
      .prefault({}),
    temporal: z
      .strictObject({
        limit: positiveInt(
          10_000,
          'Most instances per attribute in one temporal response (more: 206 with Content-Range)',
        ),
      })
      .prefault({}),
    contexts: z
      .strictObject({
        allowRemote: z.boolean().default(true)
          .describe('Fetch @context documents that are not bundled from public addresses (loopback, link-local and private ones only from contexts.allowed-hosts)'),
        allowedHosts: z.string().refine(isHostAllowList, 'expected comma-separated hosts, host:port, IP addresses or CIDR ranges such as 192.168.1.0/24, or empty')
          .default('')
          .describe('Hosts @contexts are fetched from even at loopback, link-local or private addresses (host, host:port, IP address or CIDR range, comma-separated); with contexts.allow-remote off, the only ones. The hosts of federation.upstream.url and federation.upstream.context are allowed too'),
        fetchTimeout: positiveInt(5_000, 'Milliseconds allowed for fetching a remote @context'),
        maxBytes: positiveInt(1_048_576, 'Largest remote @context document accepted, in bytes'),
      })
      .prefault({}),
    http: z
      .strictObject({
        bodyLimit: positiveInt(2_097_152, 'Largest request body accepted, in bytes (above: 413)'),
        // NOTE: at most 128: the walkers over parsed values recurse once per level, and jsonld's cost
        // for an inline @context of nested scoped contexts grows with the cube of its nesting.
        maxJsonDepth: z.int().min(2).max(128).default(64)
          .describe('Deepest nesting of arrays and objects in a request body (above: 400; 2 to 128)'),
      })
      .prefault({}),
    log: z
      .strictObject({
        level: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info').describe('Least severe level logged'),
        format: z.enum(['auto', 'json', 'pretty']).default('auto')
          .describe('Log lines on stderr: one JSON object per line (for journald), or a human form (auto: pretty on a terminal, else JSON)'),
      })
      .prefault({}),
    metrics: z
      .strictObject({
        enabled: z.boolean().default(true)
          .describe('Serve GET /metrics (Prometheus text format; outside /ngsi-ld, so it needs no token even with authentication on)'),
      })
      .prefault({}),
    dashboard: z
      .strictObject({
        enabled: z.boolean().default(true)
          .describe('Serve the LAN dashboard at /ui/ (it reads, and issues device commands for subjects that may write them) (GET / redirects there) and MQTT over WebSocket at /mqtt on the HTTP port, for its live updates'),
      })
      .prefault({}),
    history: z
      .strictObject({
        bucket: z.enum(['day', 'month']).default('month').describe('Time span of one history table'),
        retention: z.string().regex(ISO_DURATION, 'expected an ISO 8601 duration such as P90D, or empty')
          .refine((v) => v === '' || /[1-9]/.test(v), 'a retention period must be longer than zero')
          .default('').describe('How long attribute history is kept, as an ISO 8601 duration (P90D); empty keeps it for ever'),
        retentionSchedule: z.string().regex(CRON, 'expected a cron expression of 5 or 6 fields')
          .default('0 * * * *').describe('When the history retention job runs (cron, UTC)'),
        rollups: z.boolean().default(true)
          .describe('Keep per-minute and per-hour summaries of every attribute\'s history (count, sum, min, max, ...): aggregations by whole minutes or hours read them, and raw history is dropped by retention only once summarized'),
        rollupSchedule: z.string().regex(CRON, 'expected a cron expression of 5 or 6 fields')
          .default('15 * * * * *').describe('When the summaries of the minutes and hours that closed are computed (cron with seconds, UTC)'),
        minuteRetention: z.string().regex(ISO_DURATION, 'expected an ISO 8601 duration such as P365D, or empty')
          .refine((v) => v === '' || /[1-9]/.test(v), 'a retention period must be longer than zero')
          .default('').describe('How long the per-minute summaries are kept, as an ISO 8601 duration (P365D); empty keeps them for ever'),
        hourRetention: z.string().regex(ISO_DURATION, 'expected an ISO 8601 duration such as P10Y, or empty')
          .refine((v) => v === '' || /[1-9]/.test(v), 'a retention period must be longer than zero')
          .default('').describe('How long the per-hour summaries are kept, as an ISO 8601 duration (P10Y); empty keeps them for ever'),
        retentionRules: z.string().default('[]').superRefine(retentionRuleIssues)
          .describe('Retention of some tenants or entity types, a JSON array of {"tenant", "type" (optional), "raw", "minute", "hour"} (ISO 8601 durations, each optional: the default applies), the rule naming a type winning over the tenant\'s'),
      })
      .prefault({}),
    notifications: z
      .strictObject({
        timeout: positiveInt(5_000, 'Milliseconds a notification endpoint that names no timeout has to answer'),
        maxAttempts: positiveInt(10, 'Attempts to deliver one notification before it is given up (logged and counted)'),
        retryBase: positiveInt(1_000, 'Milliseconds before the first retry of a failed notification, doubled at each further one'),
        retryMax: positiveInt(60_000, 'Longest wait between two attempts of one notification, in milliseconds'),
        maxPending: positiveInt(100_000, 'Most notifications waiting for delivery; beyond, the oldest are dropped (logged and counted)'),
        periodicMaxEntities: positiveInt(1_000, 'Most entities one periodic (timeInterval) notification lists'),
        periodicSchedule: z.string().regex(CRON, 'expected a cron expression of 5 or 6 fields')
          .default('* * * * * *').describe('When periodic (timeInterval) subscriptions are checked for being due (cron with seconds, UTC)'),
      })
      .prefault({}),
    journal: z
      .strictObject({
        maxAge: z.string().regex(ISO_DURATION, 'expected an ISO 8601 duration such as P7D')
          .refine((v) => /[1-9]/.test(v), 'the journal must keep changes for longer than zero')
          .default('P7D')
          .describe('How long a change stays in the change journal when a reader (notifier, federation) has not read it yet (ISO 8601 duration)'),
        pruneSchedule: z.string().regex(CRON, 'expected a cron expression of 5 or 6 fields')
          .default('*/5 * * * *').describe('When changes every reader has passed, and changes older than journal.max-age, are removed (cron, UTC)'),
      })
      .prefault({}),
    // Housekeeping of the commands issued to devices (edge.md §6).
    commands: z
      .strictObject({
        retention: z.string().regex(ISO_DURATION, 'expected an ISO 8601 duration such as P7D')
          .refine((v) => /[1-9]/.test(v), 'finished commands must be kept for longer than zero')
          .default('P7D')
          .describe('How long a finished command (OK, ERROR or EXPIRED) stays in the commands table after it finished (ISO 8601 duration); its _status and _info stay in the history'),
        pruneSchedule: z.string().regex(CRON, 'expected a cron expression of 5 or 6 fields')
          .default('17 * * * *').describe('When finished commands older than commands.retention are removed (cron, UTC)'),
      })
      .prefault({}),
    // Integrations with the tools people already run next to the gateway.
    integrations: z
      .strictObject({
        homeAssistant: z
          .strictObject({
            enabled: z.boolean().default(false)
              .describe('Publish Home Assistant MQTT discovery configs (retained) for every registered device on the embedded broker, keep their state topics current and turn Home Assistant\'s buttons, numbers and switches into device commands'),
            discoveryPrefix: z.string().regex(/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/, 'expected topic levels of letters, digits, _ and - (no wildcard)')
              .default('homeassistant').describe('The discovery prefix Home Assistant listens on (its MQTT integration\'s setting)'),
            nodeId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected 1 to 64 letters, digits, _ and -')
              .default('edgeld').describe('This gateway\'s node id in discovery topics, unique ids and the gateway device (distinct per gateway when several feed one Home Assistant)'),
          })
          .prefault({}),
      })
      .prefault({}),
    // Transient entities (NGSI-LD §4.22): the removal of entities whose expiresAt came.
    entities: z
      .strictObject({
        expirySchedule: z.string().regex(CRON, 'expected a cron expression of 5 or 6 fields')
          .default('* * * * *')
          .describe('When entities whose expiresAt has passed are looked for and removed (cron, UTC); besides, each is removed when its expiresAt comes, and once at start'),
      })
      .prefault({}),
    batch: z
      .strictObject({
        maxSize: positiveInt(1_000, 'Most entities in one batch operation (above: 400 BadRequestData)'),
      })
      .prefault({}),
    distributed: z
      .strictObject({
        enabled: z.boolean().default(true)
          .describe('Forward queries, retrievals and writes to the context sources of matching registrations (NGSI-LD §4.3.6); off: every operation is local'),
        timeout: positiveInt(5_000, 'Longest wait in milliseconds for the sources of one request (a registration\'s management.timeout may shorten it)'),
        maxReplyBytes: positiveInt(4_194_304, 'Largest reply read from a context source; a larger one is dropped with a warning'),
        maxEntities: positiveInt(1_000, 'Most entities read from one context source for one query'),
        forwardTenant: z.boolean().default(false)
          .describe('A registration without a tenant member forwards the tenant it was made in as NGSILD-Tenant (as Orion-LD does; the FIWARE IoT Agent needs it); off: none, the default tenant of the source (NGSI-LD §4.14)'),
      })
      .prefault({}),
    federation: z
      .strictObject({
        upstream: z
          .strictObject({
            url: z.string().regex(/^$|^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, 'expected an http(s) URL such as https://cloud.example.com, or empty')
              .default('').describe('Base URL of the cloud NGSI-LD broker local changes are forwarded to (empty: federation off)'),
            tenant: z.string().regex(/^$|^[!-~]{1,256}$/, 'expected printable characters without spaces (at most 256), or empty').default('')
              .describe('NGSILD-Tenant sent upstream, e.g. a Stellio tenant URI (empty: the default tenant)'),
            context: z.string().regex(/^$|^https?:\/\/\S+$/, 'expected an http(s) URL, or empty').default('')
              .describe('@context entities are compacted with for the cloud and sent as Link (empty: the core context)'),
            types: z.string().regex(/^$|^[^\s,]+(,[^\s,]+)*$/, 'expected comma-separated type names such as Sensor,Device, or empty').default('')
              .describe('Entity types forwarded, comma-separated, expanded with federation.upstream.context (empty: all)'),
            tokenUrl: z.string().regex(/^$|^https?:\/\/\S+$/, 'expected an http(s) URL, or empty').default('')
              .describe('OAuth 2.0 token endpoint for the client credentials grant (e.g. Keycloak: <realm URL>/protocol/openid-connect/token; empty: no token)'),
            clientId: z.string().default('').describe('OAuth 2.0 client id of this gateway at federation.upstream.token-url'),
            clientSecret: z.string().default('').describe('OAuth 2.0 client secret of this gateway (never logged)'),
          })
          .prefault({}),
        tenant: z.string().regex(/^$|^[A-Za-z0-9_-]{1,64}$/, 'expected letters, digits, _ and -, at most 64, or empty').default('')
          .describe('Local tenant whose changes are forwarded (empty: the default tenant)'),
        batchSize: z.int().min(1).max(999).default(100).describe('Most entities in one upstream batch upsert (1 to 999)'),
        linger: nonNegativeInt(100, 'Milliseconds the next upstream batch waits for more changes after one that was not full (0: sent at once)'),
        compression: z.enum(['off', 'gzip']).default('off')
          .describe('Request bodies of 1 KiB or more sent upstream with Content-Encoding gzip (a slow or metered uplink; the upstream broker must take gzip request bodies, as edgeld does)'),
        timeout: positiveInt(10_000, 'Milliseconds allowed for one upstream request'),
        retryBase: positiveInt(1_000, 'Milliseconds before the first retry after an upstream failure, doubled at each further one (with jitter)'),
        retryMax: positiveInt(300_000, 'Longest wait between two upstream attempts, in milliseconds'),
        outbox: z
          .strictObject({
            maxRows: positiveInt(1_000_000, 'Most changes waiting to be forwarded; beyond, the oldest are skipped (logged and counted)'),
            maxAge: z.string().regex(ISO_DURATION, 'expected an ISO 8601 duration such as P7D')
              .refine((v) => /[1-9]/.test(v), 'the outbox must keep changes for longer than zero')
              .default('P7D')
              .describe('Oldest change still forwarded (ISO 8601 duration); older ones are skipped (logged and counted)'),
          })
          .prefault({}),
        // The gateway as a context source of the upstream broker (NGSI-LD §5.9.2 Register Context Source).
        register: z
          .strictObject({
            enabled: z.boolean().default(false)
              .describe('Register this gateway with the upstream broker as a context source of the entity types and attributes it holds (needs federation.upstream.url)'),
            only: z.boolean().default(false)
              .describe('Only the registration: local changes are not forwarded upstream, the upstream broker reads them from the gateway through it'),
            mode: z.enum(['auxiliary', 'inclusive']).default('auxiliary')
              .describe('Registration mode: auxiliary lets the upstream broker read live data from the gateway; inclusive forwards writes to it too'),
            url: z.string().regex(/^$|^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, 'expected an http(s) URL such as http://gateway.example.com:1026, or empty').default('')
              .describe('Base URL the upstream broker reaches this gateway at, the registration\'s endpoint (empty: server.public-url, else http://127.0.0.1:<port>)'),
            id: z.string().regex(/^$|^[A-Za-z0-9._-]{1,128}$/, 'expected letters, digits, ., _ and -, at most 128, or empty').default('')
              .describe('Name of this gateway in its registration id urn:ngsi-ld:ContextSourceRegistration:edgeld:<id> (empty: the host and port of federation.register.url)'),
            lifetime: z.string().regex(ISO_DURATION, 'expected an ISO 8601 duration such as PT1H')
              .refine((v) => /[1-9]/.test(v), 'a registration must live longer than zero')
              .default('PT1H').describe('How long the registration lives upstream unless renewed (ISO 8601 duration; its expiresAt is now plus this)'),
            renewBefore: z.string().regex(/^(0?\.\d*[1-9]\d*)$|^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$/, 'expected a fraction of the lifetime such as 0.25, or an ISO 8601 duration such as PT10M')
              .default('0.25').describe('When the registration is renewed: this fraction of federation.register.lifetime, or this duration, before it expires'),
            types: z.string().regex(/^$|^[^\s,]+(,[^\s,]+)*$/, 'expected comma-separated type names such as Sensor,Device, or empty').default('')
              .describe('Entity types registered, comma-separated, expanded with federation.upstream.context (empty: every type the gateway holds)'),
            attrs: z.string().regex(/^$|^[^\s,]+(,[^\s,]+)*$/, 'expected comma-separated attribute names such as temperature,humidity, or empty').default('')
              .describe('Attribute names registered, comma-separated, expanded with federation.upstream.context (empty: every attribute of the registered types)'),
            debounce: positiveInt(5_000, 'Milliseconds a new entity type or attribute waits before the registration\'s information is updated upstream (more arriving meanwhile go in the same update)'),
          })
          .prefault({}),
        // The downlink from the cloud (edge spec §7): a subscription upstream whose notifications arrive over MQTT.
        downlink: z
          .strictObject({
            types: z.string().regex(/^$|^[^\s,]+(,[^\s,]+)*$/, 'expected comma-separated type names such as Valve,Thermostat, or empty').default('')
              .describe('Entity types whose attributes the cloud may write through the downlink, comma-separated, expanded with federation.upstream.context (empty: downlink off)'),
            attributes: z.string().regex(/^$|^[^\s,]+(,[^\s,]+)*$/, 'expected comma-separated attribute names such as open,setpoint, or empty').default('')
              .describe('Attribute names the cloud may write through the downlink, comma-separated, expanded with federation.upstream.context (needed with federation.downlink.types)'),
            idPattern: z.string().max(1_024).default('')
              .describe('Regular expression of the entity ids the upstream subscription watches, e.g. the gateway\'s id prefix (empty: every entity of the types; entities the gateway does not hold are refused)'),
            mqttUrl: z.string().regex(/^$|^mqtts?:\/\/[^\s/?#]+\/?$/, 'expected mqtt://host:port or mqtts://host:port, or empty').default('')
              .describe('MQTT broker both the cloud broker and this gateway reach (mqtt:// or mqtts://, credentials in the URL are given to the cloud broker); the gateway connects out to it'),
            mqttUsername: z.string().default('').describe('User name of this gateway at federation.downlink.mqtt-url (empty: the URL\'s, else anonymous)'),
            mqttPassword: z.string().default('').describe('Password of this gateway at federation.downlink.mqtt-url (never logged)'),
            topic: z.string().regex(/^$|^[^#+\s]{1,256}$/, 'expected an MQTT topic without wildcards, or empty').default('')
              .describe('Topic the notifications arrive on (empty: edgeld/downlink/<a random id kept in the store>, unique per gateway)'),
            endpoint: z.string().regex(/^$|^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, 'expected an http(s) URL such as https://gateway.example.com, or empty').default('')
              .describe('Base URL where the cloud broker reaches this gateway, instead of federation.downlink.mqtt-url: notifications are posted to <endpoint>/edgeld/v1/downlink'),
            endpointToken: z.string().default('')
              .describe('Bearer token (a JWT this gateway accepts) the cloud broker sends with each notification to federation.downlink.endpoint, given to it in the subscription\'s receiverInfo (never logged; needed with the endpoint)'),
            endpointSubject: z.string().default('')
              .describe('Subject (token sub) allowed to post notifications to /edgeld/v1/downlink besides administrators (empty: administrators only; with authentication off, anyone)'),
            lifetime: z.string().regex(ISO_DURATION, 'expected an ISO 8601 duration such as PT1H')
              .refine((v) => /[1-9]/.test(v), 'a subscription must live longer than zero')
              .default('PT1H').describe('How long the upstream subscription lives unless renewed (ISO 8601 duration; its expiresAt is now plus this)'),
            renewBefore: z.string().regex(/^(0?\.\d*[1-9]\d*)$|^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$/, 'expected a fraction of the lifetime such as 0.25, or an ISO 8601 duration such as PT10M')
              .default('0.25').describe('When the upstream subscription is renewed: this fraction of federation.downlink.lifetime, or this duration, before it expires'),
            checkInterval: positiveInt(300_000, 'Milliseconds between two checks that the upstream broker still holds the subscription (created again when it forgot it)'),
            maxBytes: z.int().min(1_024).max(16_777_216).default(262_144).describe('Largest notification taken from the downlink, in bytes (larger: refused and counted)'),
          })
          .prefault({}),
      })
      .prefault({}),
    application: z
      .strictObject({
        authentication: z
          .strictObject({
            enabled: z.boolean().default(false)
              .describe('Require a JWT (Authorization: Bearer) on every request and apply permissions'),
            jwksUri: z.string().regex(/^$|^https?:\/\/\S+$/, 'expected an http(s) URL, or empty').default('')
              .describe('JWKS of the identity provider (e.g. Keycloak: <realm URL>/protocol/openid-connect/certs); cached on disk for offline use'),
            publicKeyFile: z.string().default('')
              .describe('A local public key (PEM, or a JWK / JWKS JSON file) that verifies tokens, instead of or besides jwks-uri'),
            issuer: z.string().default('').describe('Expected `iss` of tokens (empty: not checked)'),
            audience: z.string().default('').describe('Expected `aud` of tokens (empty: not checked)'),
            clockTolerance: nonNegativeInt(30, 'Seconds of clock skew tolerated on exp, nbf and iat'),
            jwksRefreshInterval: positiveInt(30_000, 'Least milliseconds between two fetches of the JWKS (an unknown kid refetches at most this often)'),
            jwksTimeout: positiveInt(5_000, 'Milliseconds allowed for fetching the JWKS'),
            adminRole: z.string().min(1).default('service-admin').describe('The claim value that makes its subject a global administrator'),
            claimsPaths: z.string().regex(/^[^\s,]+(,[^\s,]+)*$/, 'expected comma-separated claim paths such as realm_access.roles,groups')
              .default('realm_access.roles,groups')
              .describe('Token claims (dotted paths to strings or lists of strings) whose values are assignees: roles and groups'),
            allowPublicPermission: z.boolean().default(false)
              .describe('Allow read permissions for urn:ngsi-ld:Subject:public (anonymous reads)'),
          })
          .prefault({}),
        identityProvider: z
          .strictObject({
            enabled: z.boolean().default(false)
              .describe('Built-in identity provider: users and clients in SQLite, POST /auth/token, JWKS; the broker trusts its own keys'),
            issuer: z.string().regex(/^$|^https?:\/\/\S+$/, 'expected an http(s) URL, or empty').default('')
              .describe('`iss` of the tokens it issues (empty: server.public-url, else http://127.0.0.1:<port>)'),
            tokenLifetime: positiveInt(3_600, 'Seconds an issued access token is valid'),
            algorithm: z.enum(['RS256', 'ES256']).default('ES256').describe('Signature algorithm of issued tokens'),
            subjectRefreshSchedule: z.string().regex(CRON, 'expected a cron expression of 5 or 6 fields').default('* * * * * *')
              .describe('When the users and clients are read again (cron with seconds, UTC): from then on the tokens of removed ones are refused'),
          })
          .prefault({}),
        lockout: z
          .strictObject({
            enabled: z.boolean().default(true)
              .describe('After repeated failed logins (POST /auth/token, MQTT CONNECT) from one address or for one user name, make further attempts wait (HTTP 429 with Retry-After; MQTT: CONNACK server unavailable, answered late)'),
            nameFailures: positiveInt(5, 'Failed logins for one user name or client id before each further attempt must wait'),
            addressFailures: positiveInt(10, 'Failed logins from one client address (IPv6: its /64) before each further attempt must wait'),
            baseDelay: positiveInt(1_000, 'Milliseconds of the first wait, doubled at each further failure'),
            maxDelay: positiveInt(900_000, 'Longest wait after failed logins, in milliseconds'),
            forgetAfter: positiveInt(3_600_000, 'Milliseconds after its last failure that an address or user name starts afresh'),
            maxEntries: z.int().min(16).max(100_000).default(10_000)
              .describe('Addresses and user names tracked at most; beyond, the least recently seen are forgotten, so address rotation cannot grow memory (16 to 100000)'),
            maxAnswerDelay: nonNegativeInt(5_000, 'Longest the answer to a login refused for its wait is held back, in milliseconds (HTTP 429, MQTT CONNACK): a client guessing passwords gets one answer per wait and its connections sit idle (0: answered at once)'),
            maxConcurrentChecks: z.int().min(1).max(64).default(1)
              .describe('Password and device secret checks (scrypt: 32 MiB and a CPU core for tens of milliseconds each) running at once over the whole gateway, whether or not lockout is enabled (1 to 64)'),
            maxQueuedChecks: z.int().min(0).max(10_000).default(16)
              .describe('Checks waiting for one of application.lockout.max-concurrent-checks; beyond, a login is refused at once (HTTP 429 with Retry-After; MQTT: CONNACK server unavailable) and counted'),
          })
          .prefault({}),
        budget: z
          .strictObject({
            requestsPerMinute: nonNegativeInt(0, 'Requests per minute each authenticated subject may make on the NGSI-LD and edgeld APIs, as a token bucket holding one minute of requests (over it: 429 TooManyRequests with Retry-After; administrators are exempt; 0: off)'),
            maxSubjects: z.int().min(16).max(1_000_000).default(10_000)
              .describe('Subjects whose budget is tracked at most; beyond, the least recently seen are forgotten and start with a full budget (16 to 1000000)'),
          })
          .prefault({}),
      })
      .prefault({}),
    search: z
      .strictObject({
        onOwnerDeleteCascadeEntities: z.boolean().default(false)
          .describe('Deleting a user (DELETE /ngsi-ld/v1/auth/subjects/users/{sub}) permanently deletes every entity it owns'),
      })
      .prefault({}),
  })
  .superRefine((config, ctx) => {
    if (config.pagination.limitDefault > config.pagination.limitMax) {
      ctx.addIssue({
        code: 'custom',
        path: ['pagination', 'limitDefault'],
        message: `must not exceed pagination.limit-max (${config.pagination.limitMax})`,
      });
    }
    const auth = config.application.authentication;
    if (auth.enabled && auth.jwksUri === '' && auth.publicKeyFile === '' && !config.application.identityProvider.enabled) {
      ctx.addIssue({
        code: 'custom',
        path: ['application', 'authentication', 'enabled'],
        message: 'needs a key to verify tokens: application.authentication.jwks-uri, application.authentication.public-key-file or application.identity-provider.enabled',
      });
    }
    if (config.server.headersTimeout > config.server.requestTimeout) {
      ctx.addIssue({ code: 'custom', path: ['server', 'headersTimeout'], message: `must not exceed server.request-timeout (${config.server.requestTimeout})` });
    }
    const { lockout } = config.application;
    if (lockout.baseDelay > lockout.maxDelay) {
      ctx.addIssue({ code: 'custom', path: ['application', 'lockout', 'baseDelay'], message: `must not exceed application.lockout.max-delay (${lockout.maxDelay})` });
    }
    const { mqtt } = config;
    if (mqtt.tlsPort >= 0 && (mqtt.tlsKey === '' || mqtt.tlsCert === '')) {
      ctx.addIssue({ code: 'custom', path: ['mqtt', 'tlsPort'], message: 'needs mqtt.tls-key and mqtt.tls-cert' });
    }
    if (mqtt.tlsPort > 0 && (mqtt.tlsPort === mqtt.port || mqtt.tlsPort === mqtt.wsPort)) {
      ctx.addIssue({ code: 'custom', path: ['mqtt', 'tlsPort'], message: `must differ from mqtt.port and mqtt.ws-port` });
    }
    tlsPairIssues(config, ctx);
    // A measurement over mqtt.max-payload is dropped and counted; it must not close its connection instead.
    if (mqtt.maxPacketBytes < mqtt.maxPayload + MEASUREMENT_HEADER_ROOM) {
      ctx.addIssue({
        code: 'custom', path: ['mqtt', 'maxPacketBytes'], message: `must be at least mqtt.max-payload + ${MEASUREMENT_HEADER_ROOM} (${mqtt.maxPayload + MEASUREMENT_HEADER_ROOM})`,
      });
    }
    const upstream = config.federation.upstream;
    if (upstream.tokenUrl !== '' && upstream.clientId === '') {
      ctx.addIssue({ code: 'custom', path: ['federation', 'upstream', 'clientId'], message: 'needed with federation.upstream.token-url' });
    }
    registerIssues(config.federation, ctx);
    downlinkIssues(config.federation, ctx);
    if (config.federation.retryBase > config.federation.retryMax) {
      ctx.addIssue({ code: 'custom', path: ['federation', 'retryBase'], message: `must not exceed federation.retry-max (${config.federation.retryMax})` });
    }
    if (config.mqtt.wsPort > 0 && config.mqtt.wsPort === config.mqtt.port) {
      ctx.addIssue({
        code: 'custom',
        path: ['mqtt', 'wsPort'],
        message: `must differ from mqtt.port (${config.mqtt.port})`,
      });
    }
  });

/** The parsed configuration: nested, camelCase keys, every option present. */
export type Config = z.output<typeof configSchema>;

/** The configuration when nothing is set: every option at its default. */
export function defaultConfig(): Config {
  return configSchema.parse({});
}
