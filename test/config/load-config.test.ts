// Configuration loading: defaults, config file (nested and dotted), environment overrides and errors.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONFIG_OPTIONS, ConfigError, defaultConfig, loadConfig, renderOptionsMarkdown } from '../../src/config/index.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'edgeld-config-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function writeConfig(content: unknown, name = 'config.json'): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

function loadError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('defaultConfig', () => {
  it('holds every documented default', () => {
    expect(defaultConfig()).toEqual({
      server: {
        port: 1026, host: '0.0.0.0', shutdownTimeout: 10_000, publicUrl: '',
        headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000, maxConnections: 1_024,
        tlsKey: '', tlsCert: '', redirectPort: -1,
      },
      storage: { dir: './data', busyTimeout: 5_000, minFreeBytes: 67_108_864, walLimitBytes: 4_194_304, commitWindow: 0, checkpointSchedule: '* * * * *', maxBytes: 0 },
      mqtt: {
        port: 1883, host: '0.0.0.0', wsPort: -1, connectTimeout: 5_000, tlsPort: -1, tlsKey: '', tlsCert: '', defaultEntityType: 'Device',
        autoprovision: 'auto', maxPayload: 65_536,
        maxPacketBytes: 262_144, clientConnectTimeout: 10_000, maxConnectionsPerAddress: 64, maxConnections: 1_024,
        notificationExpiry: 86_400,
      },
      pagination: { limitDefault: 20, limitMax: 1_000 },
      temporal: { limit: 10_000 },
      contexts: { allowRemote: true, allowedHosts: '', fetchTimeout: 5_000, maxBytes: 1_048_576 },
      http: { bodyLimit: 2_097_152, maxJsonDepth: 64 },
      log: { level: 'info', format: 'auto' },
      metrics: { enabled: true },
      dashboard: { enabled: true },
      history: {
        bucket: 'month', retention: '', retentionSchedule: '0 * * * *', rollups: true, rollupSchedule: '15 * * * * *', minuteRetention: '', hourRetention: '',
        retentionRules: '[]',
      },
      notifications: {
        timeout: 5_000, maxAttempts: 10, retryBase: 1_000, retryMax: 60_000, maxPending: 100_000, periodicMaxEntities: 1_000,
        periodicSchedule: '* * * * * *',
      },
      journal: { maxAge: 'P7D', pruneSchedule: '*/5 * * * *' },
      commands: { retention: 'P7D', pruneSchedule: '17 * * * *' },
      integrations: { homeAssistant: { enabled: false, discoveryPrefix: 'homeassistant', nodeId: 'edgeld' } },
      entities: { expirySchedule: '* * * * *' },
      batch: { maxSize: 1_000 },
      distributed: { enabled: true, timeout: 5_000, maxReplyBytes: 4_194_304, maxEntities: 1_000, forwardTenant: false },
      federation: {
        upstream: { url: '', tenant: '', context: '', types: '', tokenUrl: '', clientId: '', clientSecret: '' },
        tenant: '', batchSize: 100, linger: 100, compression: 'off', timeout: 10_000, retryBase: 1_000, retryMax: 300_000, outbox: { maxRows: 1_000_000, maxAge: 'P7D' },
        register: { enabled: false, only: false, mode: 'auxiliary', url: '', id: '', lifetime: 'PT1H', renewBefore: '0.25', types: '', attrs: '', debounce: 5_000 },
        downlink: {
          types: '', attributes: '', idPattern: '', mqttUrl: '', mqttUsername: '', mqttPassword: '', topic: '', endpoint: '', endpointToken: '', endpointSubject: '',
          lifetime: 'PT1H', renewBefore: '0.25', checkInterval: 300_000, maxBytes: 262_144,
        },
      },
      application: {
        authentication: {
          enabled: false, jwksUri: '', publicKeyFile: '', issuer: '', audience: '', clockTolerance: 30, jwksRefreshInterval: 30_000,
          jwksTimeout: 5_000, adminRole: 'service-admin', claimsPaths: 'realm_access.roles,groups', allowPublicPermission: false,
        },
        identityProvider: { enabled: false, issuer: '', tokenLifetime: 3_600, algorithm: 'ES256', subjectRefreshSchedule: '* * * * * *' },
        lockout: {
          enabled: true, nameFailures: 5, addressFailures: 10, baseDelay: 1_000, maxDelay: 900_000, forgetAfter: 3_600_000, maxEntries: 10_000,
          maxAnswerDelay: 5_000, maxConcurrentChecks: 1, maxQueuedChecks: 16,
        },
        budget: { requestsPerMinute: 0, maxSubjects: 10_000 },
      },
      search: { onOwnerDeleteCascadeEntities: false },
    });
  });

  it('is what loadConfig returns when nothing is set', () => {
    expect(loadConfig({ argv: [], env: {} })).toEqual(defaultConfig());
  });
});

describe('CONFIG_OPTIONS', () => {
  it('lists every option with its dotted name, env name and default', () => {
    expect(CONFIG_OPTIONS.map((o) => o.name)).toEqual([
      'server.port',
      'server.host',
      'server.shutdown-timeout',
      'server.public-url',
      'server.headers-timeout',
      'server.request-timeout',
      'server.keep-alive-timeout',
      'server.max-connections',
      'server.tls-key',
      'server.tls-cert',
      'server.redirect-port',
      'storage.dir',
      'storage.busy-timeout',
      'storage.min-free-bytes',
      'storage.wal-limit-bytes',
      'storage.commit-window',
      'storage.checkpoint-schedule',
      'storage.max-bytes',
      'mqtt.port',
      'mqtt.host',
      'mqtt.ws-port',
      'mqtt.connect-timeout',
      'mqtt.tls-port',
      'mqtt.tls-key',
      'mqtt.tls-cert',
      'mqtt.default-entity-type',
      'mqtt.autoprovision',
      'mqtt.max-payload',
      'mqtt.max-packet-bytes',
      'mqtt.client-connect-timeout',
      'mqtt.max-connections-per-address',
      'mqtt.max-connections',
      'mqtt.notification-expiry',
      'pagination.limit-default',
      'pagination.limit-max',
      'temporal.limit',
      'contexts.allow-remote',
      'contexts.allowed-hosts',
      'contexts.fetch-timeout',
      'contexts.max-bytes',
      'http.body-limit',
      'http.max-json-depth',
      'log.level',
      'log.format',
      'metrics.enabled',
      'dashboard.enabled',
      'history.bucket',
      'history.retention',
      'history.retention-schedule',
      'history.rollups',
      'history.rollup-schedule',
      'history.minute-retention',
      'history.hour-retention',
      'history.retention-rules',
      'notifications.timeout',
      'notifications.max-attempts',
      'notifications.retry-base',
      'notifications.retry-max',
      'notifications.max-pending',
      'notifications.periodic-max-entities',
      'notifications.periodic-schedule',
      'journal.max-age',
      'journal.prune-schedule',
      'commands.retention',
      'commands.prune-schedule',
      'integrations.home-assistant.enabled',
      'integrations.home-assistant.discovery-prefix',
      'integrations.home-assistant.node-id',
      'entities.expiry-schedule',
      'batch.max-size',
      'distributed.enabled',
      'distributed.timeout',
      'distributed.max-reply-bytes',
      'distributed.max-entities',
      'distributed.forward-tenant',
      'federation.upstream.url',
      'federation.upstream.tenant',
      'federation.upstream.context',
      'federation.upstream.types',
      'federation.upstream.token-url',
      'federation.upstream.client-id',
      'federation.upstream.client-secret',
      'federation.tenant',
      'federation.batch-size',
      'federation.linger',
      'federation.compression',
      'federation.timeout',
      'federation.retry-base',
      'federation.retry-max',
      'federation.outbox.max-rows',
      'federation.outbox.max-age',
      'federation.register.enabled',
      'federation.register.only',
      'federation.register.mode',
      'federation.register.url',
      'federation.register.id',
      'federation.register.lifetime',
      'federation.register.renew-before',
      'federation.register.types',
      'federation.register.attrs',
      'federation.register.debounce',
      'federation.downlink.types',
      'federation.downlink.attributes',
      'federation.downlink.id-pattern',
      'federation.downlink.mqtt-url',
      'federation.downlink.mqtt-username',
      'federation.downlink.mqtt-password',
      'federation.downlink.topic',
      'federation.downlink.endpoint',
      'federation.downlink.endpoint-token',
      'federation.downlink.endpoint-subject',
      'federation.downlink.lifetime',
      'federation.downlink.renew-before',
      'federation.downlink.check-interval',
      'federation.downlink.max-bytes',
      'application.authentication.enabled',
      'application.authentication.jwks-uri',
      'application.authentication.public-key-file',
      'application.authentication.issuer',
      'application.authentication.audience',
      'application.authentication.clock-tolerance',
      'application.authentication.jwks-refresh-interval',
      'application.authentication.jwks-timeout',
      'application.authentication.admin-role',
      'application.authentication.claims-paths',
      'application.authentication.allow-public-permission',
      'application.identity-provider.enabled',
      'application.identity-provider.issuer',
      'application.identity-provider.token-lifetime',
      'application.identity-provider.algorithm',
      'application.identity-provider.subject-refresh-schedule',
      'application.lockout.enabled',
      'application.lockout.name-failures',
      'application.lockout.address-failures',
      'application.lockout.base-delay',
      'application.lockout.max-delay',
      'application.lockout.forget-after',
      'application.lockout.max-entries',
      'application.lockout.max-answer-delay',
      'application.lockout.max-concurrent-checks',
      'application.lockout.max-queued-checks',
      'application.budget.requests-per-minute',
      'application.budget.max-subjects',
      'search.on-owner-delete-cascade-entities',
    ]);
    const limit = CONFIG_OPTIONS.find((o) => o.name === 'pagination.limit-default');
    expect(limit).toMatchObject({ env: 'PAGINATION_LIMIT_DEFAULT', default: 20, kind: 'integer' });
    expect(CONFIG_OPTIONS.find((o) => o.name === 'log.level')?.values).toEqual(['debug', 'info', 'warn', 'error', 'silent']);
    for (const option of CONFIG_OPTIONS) expect(option.description).not.toBe('');
  });

  it('renders one Markdown row per option', () => {
    const table = renderOptionsMarkdown();
    expect(table.split('\n')).toHaveLength(CONFIG_OPTIONS.length + 2);
    expect(table).toContain('| `application.authentication.enabled` | `APPLICATION_AUTHENTICATION_ENABLED` | `false` |');
  });
});

describe('loadConfig from a file', () => {
  it('reads nested groups from the file named by --config', () => {
    const path = writeConfig({ server: { port: 8080, 'shutdown-timeout': 500 }, application: { authentication: { enabled: false } }, contexts: { 'allow-remote': false } });
    const config = loadConfig({ argv: ['--config', path], env: {} });
    expect(config.server).toMatchObject({ port: 8080, host: '0.0.0.0', shutdownTimeout: 500, publicUrl: '', headersTimeout: 10_000 });
    expect(config.application.authentication.enabled).toBe(false);
    expect(config.contexts.allowRemote).toBe(false);
    expect(config.mqtt.port).toBe(1883);
  });

  it('reads dotted keys and mixed forms from the file named by EDGELD_CONFIG', () => {
    const path = writeConfig({ 'server.port': 9000, 'pagination.limit-max': 50, application: { 'authentication.enabled': false }, contexts: { 'allow-remote': false } });
    const config = loadConfig({ argv: [], env: { EDGELD_CONFIG: path } });
    expect(config.server.port).toBe(9000);
    expect(config.pagination.limitMax).toBe(50);
    expect(config.application.authentication.enabled).toBe(false);
    expect(config.contexts.allowRemote).toBe(false);
  });

  it('prefers --config over EDGELD_CONFIG and accepts --config=path', () => {
    const a = writeConfig({ 'server.port': 1 }, 'a.json');
    const b = writeConfig({ 'server.port': 2 }, 'b.json');
    expect(loadConfig({ argv: [`--config=${a}`], env: { EDGELD_CONFIG: b } }).server.port).toBe(1);
  });

  it('names every unknown key, suggesting the kebab-case spelling', () => {
    const path = writeConfig({ server: { port: 1, shutdownTimeout: 5, colour: 'red' }, 'nope.deep': 1, log: 'info' });
    const err = loadError(() => loadConfig({ argv: ['--config', path], env: {} }));
    expect(err.issues.map((i) => i.option)).toEqual(['server.shutdownTimeout', 'server.colour', 'nope.deep', 'log']);
    expect(err.message).toContain('server.shutdownTimeout');
    expect(err.message).toContain('did you mean "server.shutdown-timeout"?');
    expect(err.message).toContain(`file ${path}`);
  });

  it('rejects an option given both nested and dotted', () => {
    const path = writeConfig({ server: { port: 1 }, 'server.port': 2 });
    const err = loadError(() => loadConfig({ argv: ['--config', path], env: {} }));
    expect(err.issues).toEqual([expect.objectContaining({ option: 'server.port', message: 'set more than once in the file' })]);
  });

  it('names a missing file', () => {
    const path = join(dir, 'absent.json');
    const err = loadError(() => loadConfig({ argv: ['--config', path], env: {} }));
    expect(err.message).toContain(path);
    expect(err.message).toContain('file not found');
  });

  it('reports a file that is not a JSON object', () => {
    const bad = writeConfig('{ "server": ', 'bad.json');
    expect(loadError(() => loadConfig({ argv: ['--config', bad], env: {} })).message).toContain('not valid JSON');
    const list = writeConfig([1, 2], 'list.json');
    expect(loadError(() => loadConfig({ argv: ['--config', list], env: {} })).message).toContain('expected a JSON object');
  });

  it('does not coerce file values: JSON types must match', () => {
    const path = writeConfig({ 'server.port': '1026' });
    const err = loadError(() => loadConfig({ argv: ['--config', path], env: {} }));
    expect(err.issues).toEqual([expect.objectContaining({ option: 'server.port', source: `file ${path}` })]);
  });
});

describe('loadConfig from the environment', () => {
  it('overrides the file', () => {
    const path = writeConfig({ server: { port: 8080, host: '10.0.0.1' } });
    const config = loadConfig({ argv: ['--config', path], env: { SERVER_PORT: '9090' } });
    expect(config.server.port).toBe(9090);
    expect(config.server.host).toBe('10.0.0.1');
  });

  it('coerces numbers, booleans and enums', () => {
    const config = loadConfig({
      argv: [],
      env: {
        PAGINATION_LIMIT_DEFAULT: ' 50 ',
        SERVER_SHUTDOWN_TIMEOUT: '2500',
        APPLICATION_AUTHENTICATION_ENABLED: 'false',
        CONTEXTS_ALLOW_REMOTE: '0',
        LOG_LEVEL: 'WARN',
        HISTORY_BUCKET: 'day',
        STORAGE_DIR: '/var/lib/edgeld',
      },
    });
    expect(config.pagination.limitDefault).toBe(50);
    expect(config.server.shutdownTimeout).toBe(2500);
    expect(config.application.authentication.enabled).toBe(false);
    expect(config.contexts.allowRemote).toBe(false);
    expect(config.log.level).toBe('warn');
    expect(config.history.bucket).toBe('day');
    expect(config.storage.dir).toBe('/var/lib/edgeld');
    expect(loadConfig({ argv: [], env: { CONTEXTS_ALLOW_REMOTE: '1' } }).contexts.allowRemote).toBe(true);
    expect(loadConfig({ argv: [], env: { CONTEXTS_ALLOW_REMOTE: 'False' } }).contexts.allowRemote).toBe(false);
    expect(loadConfig({ argv: [], env: { DASHBOARD_ENABLED: 'false' } }).dashboard.enabled).toBe(false);
  });

  it('treats an empty variable as unset and ignores unrelated variables', () => {
    const config = loadConfig({ argv: [], env: { SERVER_PORT: '', PATH: '/usr/bin', SERVER_COLOUR: 'red' } });
    expect(config.server.port).toBe(1026);
  });

  it('accepts port 0 for an ephemeral port', () => {
    expect(loadConfig({ argv: [], env: { SERVER_PORT: '0', MQTT_PORT: '0' } }).mqtt.port).toBe(0);
  });

  it('reads the MQTT options from the environment; ws-port -1 is off, 0 ephemeral', () => {
    const config = loadConfig({ argv: [], env: { MQTT_HOST: '127.0.0.1', MQTT_WS_PORT: '9001', MQTT_CONNECT_TIMEOUT: '250' } });
    expect(config.mqtt).toMatchObject({ port: 1883, host: '127.0.0.1', wsPort: 9001, connectTimeout: 250 });
    expect(loadConfig({ argv: [], env: { MQTT_WS_PORT: '0' } }).mqtt.wsPort).toBe(0);
  });

  it('needs a key and a certificate for the TLS listener', () => {
    const err = loadError(() => loadConfig({ argv: [], env: { MQTT_TLS_PORT: '8883' } }));
    expect(err.issues.map((i) => [i.option, i.message])).toEqual([['mqtt.tls-port', 'needs mqtt.tls-key and mqtt.tls-cert']]);
    const ok = loadConfig({ argv: [], env: { MQTT_TLS_PORT: '8883', MQTT_TLS_KEY: '/etc/edgeld/key.pem', MQTT_TLS_CERT: '/etc/edgeld/cert.pem' } });
    expect(ok.mqtt.tlsPort).toBe(8883);
    expect(loadConfig({ argv: [], env: { MQTT_AUTOPROVISION: 'false' } }).mqtt.autoprovision).toBe('false');
  });

  it('needs server.tls-key and server.tls-cert together, and mqtt.tls-key and mqtt.tls-cert together, naming the missing one', () => {
    const server = loadError(() => loadConfig({ argv: [], env: { SERVER_TLS_KEY: '/etc/edgeld/key.pem' } }));
    expect(server.issues.map((i) => [i.option, i.message])).toEqual([['server.tls-cert', 'needed with server.tls-key']]);
    const cert = loadError(() => loadConfig({ argv: [], env: { SERVER_TLS_CERT: '/etc/edgeld/cert.pem' } }));
    expect(cert.issues.map((i) => [i.option, i.message])).toEqual([['server.tls-key', 'needed with server.tls-cert']]);
    const mqtt = loadError(() => loadConfig({ argv: [], env: { MQTT_TLS_CERT: '/etc/edgeld/cert.pem' } }));
    expect(mqtt.issues.map((i) => [i.option, i.message])).toEqual([['mqtt.tls-key', 'needed with mqtt.tls-cert']]);
    const ok = loadConfig({ argv: [], env: { SERVER_TLS_KEY: '/etc/edgeld/key.pem', SERVER_TLS_CERT: '/etc/edgeld/cert.pem' } });
    expect(ok.server).toMatchObject({ tlsKey: '/etc/edgeld/key.pem', tlsCert: '/etc/edgeld/cert.pem', redirectPort: -1 });
  });

  it('registers upstream only with an upstream, and takes a fraction or a duration for renew-before', () => {
    const alone = loadError(() => loadConfig({ argv: [], env: { FEDERATION_REGISTER_ENABLED: 'true' } }));
    expect(alone.issues.map((i) => [i.option, i.message])).toEqual([
      ['federation.register.enabled', 'needs federation.upstream.url (the broker the gateway registers with)'],
    ]);
    const upstream = { FEDERATION_UPSTREAM_URL: 'https://cloud.example.com', FEDERATION_REGISTER_ENABLED: 'true' };
    const ok = loadConfig({ argv: [], env: { ...upstream, FEDERATION_REGISTER_MODE: 'inclusive', FEDERATION_REGISTER_RENEW_BEFORE: 'PT10M' } });
    expect(ok.federation.register).toMatchObject({ enabled: true, mode: 'inclusive', renewBefore: 'PT10M', lifetime: 'PT1H' });
    for (const bad of ['1.5', '0', 'soon', 'P1M']) {
      const err = loadError(() => loadConfig({ argv: [], env: { ...upstream, FEDERATION_REGISTER_RENEW_BEFORE: bad } }));
      expect(err.issues.map((i) => i.option), bad).toEqual(['federation.register.renew-before']);
    }
    const mode = loadError(() => loadConfig({ argv: [], env: { ...upstream, FEDERATION_REGISTER_MODE: 'exclusive' } }));
    expect(mode.issues.map((i) => i.option)).toEqual(['federation.register.mode']);
    const only = loadError(() => loadConfig({ argv: [], env: { FEDERATION_UPSTREAM_URL: 'https://cloud.example.com', FEDERATION_REGISTER_ONLY: 'true' } }));
    expect(only.issues.map((i) => [i.option, i.message])).toEqual([['federation.register.only', 'needs federation.register.enabled']]);
  });

  it('takes federation.downlink only with an upstream, attributes and exactly one of mqtt-url and endpoint [edge §7]', () => {
    const issuesOf = (env: Record<string, string>) => loadError(() => loadConfig({ argv: [], env })).issues.map((i) => [i.option, i.message]);
    expect(issuesOf({ FEDERATION_DOWNLINK_TYPES: 'Valve', FEDERATION_DOWNLINK_ATTRIBUTES: 'open', FEDERATION_DOWNLINK_MQTT_URL: 'mqtt://broker.example.com:1883' })).toEqual([
      ['federation.downlink.types', 'needs federation.upstream.url (the broker the subscription is kept on)'],
    ]);
    const upstream = { FEDERATION_UPSTREAM_URL: 'https://cloud.example.com', FEDERATION_DOWNLINK_TYPES: 'Valve' };
    expect(issuesOf({ ...upstream, FEDERATION_DOWNLINK_MQTT_URL: 'mqtt://broker.example.com' })).toEqual([
      ['federation.downlink.attributes', 'needed with federation.downlink.types (the attributes the cloud may write)'],
    ]);
    const both = 'exactly one of federation.downlink.mqtt-url and federation.downlink.endpoint is needed with federation.downlink.types';
    expect(issuesOf({ ...upstream, FEDERATION_DOWNLINK_ATTRIBUTES: 'open' })).toEqual([['federation.downlink.mqtt-url', both]]);
    expect(issuesOf({
      ...upstream, FEDERATION_DOWNLINK_ATTRIBUTES: 'open', FEDERATION_DOWNLINK_MQTT_URL: 'mqtt://b', FEDERATION_DOWNLINK_ENDPOINT: 'https://gw.example.com', FEDERATION_DOWNLINK_ENDPOINT_TOKEN: 't',
    })).toEqual([['federation.downlink.mqtt-url', both]]);
    expect(issuesOf({ ...upstream, FEDERATION_DOWNLINK_ATTRIBUTES: 'open', FEDERATION_DOWNLINK_ENDPOINT: 'https://gw.example.com' })).toEqual([
      ['federation.downlink.endpoint-token', 'needed with federation.downlink.endpoint'],
    ]);
    for (const bad of ['http://broker:1883', 'mqtt://broker/topic', 'tcp://broker']) {
      expect(issuesOf({ ...upstream, FEDERATION_DOWNLINK_ATTRIBUTES: 'open', FEDERATION_DOWNLINK_MQTT_URL: bad }).map(([o]) => o), bad).toContain('federation.downlink.mqtt-url');
    }
    expect(issuesOf({ ...upstream, FEDERATION_DOWNLINK_ATTRIBUTES: 'open', FEDERATION_DOWNLINK_MQTT_URL: 'mqtt://b', FEDERATION_DOWNLINK_TOPIC: 'a/#' })).toEqual([
      ['federation.downlink.topic', 'expected an MQTT topic without wildcards, or empty'],
    ]);
    const ok = loadConfig({ argv: [], env: { ...upstream, FEDERATION_DOWNLINK_ATTRIBUTES: 'open,setpoint', FEDERATION_DOWNLINK_MQTT_URL: 'mqtts://u:p@broker.example.com:8883' } });
    expect(ok.federation.downlink).toMatchObject({ types: 'Valve', attributes: 'open,setpoint', mqttUrl: 'mqtts://u:p@broker.example.com:8883', lifetime: 'PT1H' });
  });

  it('takes server.redirect-port only with HTTPS on, on a port of its own', () => {
    const tls = { SERVER_TLS_KEY: '/etc/edgeld/key.pem', SERVER_TLS_CERT: '/etc/edgeld/cert.pem' };
    const plain = loadError(() => loadConfig({ argv: [], env: { SERVER_REDIRECT_PORT: '80' } }));
    expect(plain.issues.map((i) => [i.option, i.message])).toEqual([['server.redirect-port', 'needs server.tls-key and server.tls-cert (it redirects to HTTPS)']]);
    for (const taken of [{ SERVER_PORT: '8080' }, { MQTT_PORT: '8080' }, { MQTT_WS_PORT: '8080' }, { MQTT_TLS_PORT: '8080', MQTT_TLS_KEY: '/k', MQTT_TLS_CERT: '/c' }]) {
      const err = loadError(() => loadConfig({ argv: [], env: { ...tls, ...taken, SERVER_REDIRECT_PORT: '8080' } }));
      expect(err.issues.map((i) => [i.option, i.message]), JSON.stringify(taken))
        .toEqual([['server.redirect-port', 'must differ from server.port, mqtt.port, mqtt.ws-port and mqtt.tls-port']]);
    }
    expect(loadConfig({ argv: [], env: { ...tls, SERVER_REDIRECT_PORT: '80' } }).server.redirectPort).toBe(80);
  });

  it('refuses a server.tls-key readable by other users, naming the file and the fix', () => {
    const key = join(dir, 'https-key.pem');
    writeFileSync(key, 'key', { mode: 0o644 });
    const err = loadError(() => loadConfig({ argv: [], env: { SERVER_TLS_KEY: key, SERVER_TLS_CERT: join(dir, 'cert.pem') } }));
    expect(err.issues.map((i) => [i.option, i.message])).toEqual([
      ['server.tls-key', `${key} is a private key readable by other users (mode 0644): make it readable by the account edgeld runs as only, e.g. chmod 600 ${key}`],
    ]);
  });

  it('refuses a bad MQTT ws-port, connect-timeout or a ws-port equal to the TCP port, naming the option', () => {
    const low = loadError(() => loadConfig({ argv: [], env: { MQTT_WS_PORT: '-2', MQTT_CONNECT_TIMEOUT: '0' } }));
    const byOption = new Map(low.issues.map((i) => [i.option, i]));
    expect(byOption.get('mqtt.ws-port')?.message).toBe('expected a port from 0 to 65535, or -1 for off');
    expect(byOption.has('mqtt.connect-timeout')).toBe(true);
    const same = loadError(() => loadConfig({ argv: [], env: { MQTT_PORT: '1884', MQTT_WS_PORT: '1884' } }));
    expect(same.issues.map((i) => [i.option, i.message])).toEqual([['mqtt.ws-port', 'must differ from mqtt.port (1884)']]);
  });

  it('keeps storage.wal-limit-bytes between 1 MiB and 1 GiB, naming the option', () => {
    const low = loadError(() => loadConfig({ argv: [], env: { STORAGE_WAL_LIMIT_BYTES: '1048575' } }));
    expect(low.issues.map((i) => [i.option, i.message])).toEqual([['storage.wal-limit-bytes', 'expected at least 1048576 (1 MiB)']]);
    const high = loadError(() => loadConfig({ argv: [], env: { STORAGE_WAL_LIMIT_BYTES: '1073741825' } }));
    expect(high.issues.map((i) => [i.option, i.message])).toEqual([['storage.wal-limit-bytes', 'expected at most 1073741824 (1 GiB)']]);
    expect(loadConfig({ argv: [], env: { STORAGE_WAL_LIMIT_BYTES: '67108864' } }).storage.walLimitBytes).toBe(67_108_864);
  });

  it('keeps storage.commit-window between 0 and 1000 ms, naming the option', () => {
    const high = loadError(() => loadConfig({ argv: [], env: { STORAGE_COMMIT_WINDOW: '1001' } }));
    expect(high.issues.map((i) => [i.option, i.message])).toEqual([['storage.commit-window', 'expected at most 1000 (milliseconds)']]);
    expect(loadError(() => loadConfig({ argv: [], env: { STORAGE_COMMIT_WINDOW: '-1' } })).issues[0]?.option).toBe('storage.commit-window');
    expect(loadConfig({ argv: [], env: { STORAGE_COMMIT_WINDOW: '20' } }).storage.commitWindow).toBe(20);
  });
});

describe('ConfigError', () => {
  it('lists every bad option by dotted name at once', () => {
    const path = writeConfig({ storage: { 'busy-timeout': -1 }, history: { bucket: 'year' } });
    const err = loadError(() =>
      loadConfig({
        argv: ['--config', path],
        env: {
          SERVER_PORT: 'abc',
          MQTT_PORT: '70000',
          LOG_LEVEL: 'loud',
          APPLICATION_AUTHENTICATION_ENABLED: 'yes',
          HTTP_BODY_LIMIT: '1.5',
          SERVER_HOST: '  ',
        },
      }),
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.name).toBe('ConfigError');
    const byOption = new Map(err.issues.map((i) => [i.option, i]));
    expect([...byOption.keys()].sort()).toEqual([
      'application.authentication.enabled',
      'history.bucket',
      'http.body-limit',
      'log.level',
      'mqtt.port',
      'server.port',
      'storage.busy-timeout',
    ]);
    expect(byOption.get('server.port')).toMatchObject({ source: 'env SERVER_PORT', message: 'expected an integer' });
    expect(byOption.get('mqtt.port')?.message).toMatch(/65535/);
    expect(byOption.get('application.authentication.enabled')?.message).toBe('expected true, false, 1 or 0');
    expect(byOption.get('history.bucket')?.source).toBe(`file ${path}`);
    for (const option of byOption.keys()) expect(err.message).toContain(`- ${option} (`);
    expect(err.message).toMatch(/^invalid configuration, 7 problems:/);
  });

  it('rejects pagination.limit-default above pagination.limit-max', () => {
    const err = loadError(() => loadConfig({ argv: [], env: { PAGINATION_LIMIT_DEFAULT: '200', PAGINATION_LIMIT_MAX: '100' } }));
    expect(err.issues).toEqual([
      { option: 'pagination.limit-default', source: 'env PAGINATION_LIMIT_DEFAULT', message: 'must not exceed pagination.limit-max (100)' },
    ]);
  });

  it('rejects server.headers-timeout above server.request-timeout, and a lockout base delay above its maximum', () => {
    const err = loadError(() => loadConfig({ argv: [], env: { SERVER_HEADERS_TIMEOUT: '40000', APPLICATION_LOCKOUT_BASE_DELAY: '5000', APPLICATION_LOCKOUT_MAX_DELAY: '1000' } }));
    expect(err.issues).toEqual([
      { option: 'server.headers-timeout', source: 'env SERVER_HEADERS_TIMEOUT', message: 'must not exceed server.request-timeout (30000)' },
      { option: 'application.lockout.base-delay', source: 'env APPLICATION_LOCKOUT_BASE_DELAY', message: 'must not exceed application.lockout.max-delay (1000)' },
    ]);
  });

  it('reports --config without a path', () => {
    const err = loadError(() => loadConfig({ argv: ['--config'], env: {} }));
    expect(err.issues[0]).toMatchObject({ option: 'config file', message: 'expected a path after --config' });
  });
});

describe('authentication option', () => {
  it('refuses true while authentication is not available, naming the option', () => {
    expect(() => loadConfig({ argv: [], env: { APPLICATION_AUTHENTICATION_ENABLED: 'true' } })).toThrow(/application\.authentication\.enabled/);
  });
});

describe('application.authentication', () => {
  it('refuses to start with authentication on and no key to verify tokens', () => {
    expect(() => loadConfig({ argv: [], env: { APPLICATION_AUTHENTICATION_ENABLED: 'true' } }))
      .toThrow(/application\.authentication\.enabled.*jwks-uri/s);
  });

  it('starts with authentication on and a JWKS URI, a key file or the built-in provider', () => {
    for (const env of [
      { APPLICATION_AUTHENTICATION_JWKS_URI: 'http://127.0.0.1:8080/certs' },
      { APPLICATION_AUTHENTICATION_PUBLIC_KEY_FILE: '/etc/edgeld/key.pem' },
      { APPLICATION_IDENTITY_PROVIDER_ENABLED: 'true' },
    ]) {
      const config = loadConfig({ argv: [], env: { APPLICATION_AUTHENTICATION_ENABLED: 'true', ...env } });
      expect(config.application.authentication.enabled).toBe(true);
    }
  });
});
