// The federation drain when an upstream is configured (a consumer of the journal feed), the
// gateway's registration upstream (federation.register) and the downlink from the cloud
// (federation.downlink) on the same client, and the metrics they add.

import type { Config } from '../config/index.js';
import type { ChangeEmitter, WriteCore } from '../events.js';
import {
  createDownlink, createFederation, createFederationClient, createRegistrationKeeper, disabledStatus, FEDERATION_READER, REFUSAL_REASONS, type Downlink, type Federation,
  type RegistrationFacts, type RegistrationKeeper, type UpstreamClient,
} from '../federation/index.js';
import type { MetricsSource } from '../http/index.js';
import type { ContextService } from '../jsonld/index.js';
import type { TermMapper } from '../ngsi/index.js';
import { allowEntriesOf, createHostAllowList, createOutboundFetch, type Clock, type IdGenerator, type Logger } from '../lib/index.js';
import type { JournalFeed, Store } from '../store/index.js';
import { addDuration, parseDuration } from '../temporal/index.js';

export interface FederationWiring {
  config: Config;
  store: Store;
  feed: JournalFeed;
  contexts: ContextService;
  clock: Clock;
  log: Logger;
  /** Changes after commit: the registration keeper follows the types and attributes held. */
  events: ChangeEmitter;
  /** This broker's URL (server.public-url, else its bound port on 127.0.0.1), read once it serves. */
  publicUrl(): string;
  /** The write path of the downlink's writes. */
  core: WriteCore;
  newId: IdGenerator;
}

/** The drain, the gateway's registration upstream and the downlink, started and stopped together. */
export interface FederationLink extends Federation {
  /** Removes the gateway's registration upstream (bounded), before the listeners close. */
  withdraw(): Promise<void>;
  /** The downlink (federation.downlink); undefined when off. */
  downlink: Downlink | undefined;
}

/** The route notifications are posted to with federation.downlink.endpoint. */
const DOWNLINK_ROUTE = '/edgeld/v1/downlink';

/** Removal on stop waits at most this long (and at most federation.timeout). */
const WITHDRAW_TIMEOUT_MS = 2_000;

/**
 * The federation drain when an upstream is configured and changes are forwarded (not
 * federation.register.only). Otherwise its journal reader is forgotten, so that a cursor left from an
 * earlier configuration no longer holds changes back from pruning.
 */
export function buildFederation(deps: FederationWiring): FederationLink | undefined {
  const { config, store, contexts, log } = deps;
  const fed = config.federation;
  const isForwarding = fed.upstream.url !== '' && !fed.register.only;
  if (!isForwarding && store.journal.cursor(FEDERATION_READER) !== undefined) {
    store.journal.dropReader(FEDERATION_READER);
    log.info('federation does not forward changes: its pending changes are no longer kept');
  }
  if (fed.upstream.url === '') return undefined;
  const up = fed.upstream;
  const context = async (): Promise<{ mapper: TermMapper; linkUrl: string }> => {
    const resolved = await contexts.resolve(up.context === '' ? undefined : up.context);
    return { mapper: resolved, linkUrl: resolved.linkUrl ?? up.context };
  };
  const client = createFederationClient({
    clock: deps.clock,
    onGzipRefused: (status) => deps.log.child('federation').warn('the upstream broker does not take gzip request bodies: federation.compression is off until restart', { status }),
    // The token endpoint through the outbound client: its own host and port, or public addresses.
    ...(up.tokenUrl === '' ? {} : { fetch: createOutboundFetch(createHostAllowList(allowEntriesOf([up.tokenUrl]), true)) }),
    options: {
      url: up.url, upstreamTenant: up.tenant, timeoutMs: fed.timeout, gzip: fed.compression === 'gzip',
      ...(up.tokenUrl === '' ? {} : { token: { url: up.tokenUrl, clientId: up.clientId, clientSecret: up.clientSecret } }),
    },
  });
  const drain = isForwarding ? buildDrain(deps, client, context) : undefined;
  const keeper = fed.register.enabled ? buildKeeper(deps, client, context) : undefined;
  const downlink = fed.downlink.types === '' ? undefined : buildDownlink(deps, client, context);
  return {
    downlink,
    start() {
      drain?.start();
      keeper?.start();
      downlink?.start();
    },
    status: () => ({ ...(drain?.status() ?? { ...disabledStatus(), url: up.url }), registration: keeper?.status(), downlink: downlink?.status() }),
    withdraw: async () => keeper?.stop(),
    stop: async (timeoutMs) => {
      await downlink?.stop();
      await drain?.stop(timeoutMs);
    },
  };
}

/** The drain: a consumer of the journal feed forwarding the changes of federation.tenant. */
function buildDrain(deps: FederationWiring, client: UpstreamClient, context: () => Promise<{ mapper: TermMapper; linkUrl: string }>): Federation {
  const fed = deps.config.federation;
  const up = fed.upstream;
  // The schema accepts only ISO 8601 durations longer than zero for federation.outbox.max-age.
  const maxAge = parseDuration(fed.outbox.maxAge);
  if (!maxAge) throw new Error(`federation.outbox.max-age: '${fed.outbox.maxAge}' is too large a duration`);
  return createFederation({
    store: deps.store, feed: deps.feed, clock: deps.clock, log: deps.log.child('federation'), client, context,
    horizon: (now) => addDuration(now, maxAge, -1),
    options: {
      url: up.url, upstreamTenant: up.tenant, tenant: fed.tenant, types: up.types === '' ? [] : up.types.split(','),
      batchSize: fed.batchSize, lingerMs: fed.linger, timeoutMs: fed.timeout, retryBaseMs: fed.retryBase, retryMaxMs: fed.retryMax, maxRows: fed.outbox.maxRows,
    },
  });
}

/** Milliseconds of an ISO 8601 duration the schema accepted, from now. */
function durationMs(text: string, option: string, now: number): number {
  const d = parseDuration(text);
  if (!d) throw new Error(`${option}: '${text}' is too large a duration`);
  return addDuration(now, d) - now;
}

const portOf = (url: URL): string => (url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80');
const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

/** The registration's id, name, endpoint and mode, once the broker serves (its bound port is known). */
function factsOf(deps: FederationWiring): RegistrationFacts {
  const { config, log } = deps;
  const reg = config.federation.register;
  const endpoint = (reg.url || deps.publicUrl()).replace(/\/+$/, '');
  const target = new URL(endpoint);
  const gateway = reg.id || `${target.hostname}-${portOf(target)}`.replace(/[^A-Za-z0-9._-]/g, '-');
  if (LOOPBACK.test(target.hostname) && !LOOPBACK.test(new URL(config.federation.upstream.url).hostname)) {
    log.warn('the registration upstream names a loopback endpoint the upstream broker cannot reach: set federation.register.url or server.public-url', { endpoint });
  }
  const context = config.federation.upstream.context;
  return {
    id: `urn:ngsi-ld:ContextSourceRegistration:edgeld:${gateway}`, name: `edgeld gateway ${gateway}`, mode: reg.mode, endpoint,
    tenant: config.federation.tenant, jsonldContext: context === '' ? undefined : context,
  };
}

/** The registration keeper of federation.register, on the drain's upstream client. */
function buildKeeper(
  deps: FederationWiring, client: UpstreamClient, context: () => Promise<{ mapper: TermMapper; linkUrl: string }>,
): RegistrationKeeper {
  const { config, clock } = deps;
  const fed = config.federation;
  const reg = fed.register;
  const now = clock.now();
  const lifetimeMs = durationMs(reg.lifetime, 'federation.register.lifetime', now);
  const renewBeforeMs = reg.renewBefore.startsWith('P')
    ? durationMs(reg.renewBefore, 'federation.register.renew-before', now)
    : Math.round(lifetimeMs * Number(reg.renewBefore));
  if (renewBeforeMs >= lifetimeMs) throw new Error(`federation.register.renew-before: '${reg.renewBefore}' must be shorter than federation.register.lifetime (${reg.lifetime})`);
  const names = (list: string): string[] => (list === '' ? [] : list.split(','));
  return createRegistrationKeeper({
    client, store: deps.store, events: deps.events, context, clock, log: deps.log.child('registration'), facts: () => factsOf(deps),
    options: {
      tenant: fed.tenant, types: names(reg.types), attrs: names(reg.attrs), lifetimeMs, renewBeforeMs, debounceMs: reg.debounce,
      retryBaseMs: fed.retryBase, retryMaxMs: fed.retryMax, stopTimeoutMs: Math.min(WITHDRAW_TIMEOUT_MS, fed.timeout),
    },
  });
}

/** The renewal margin: a fraction of the lifetime (0.25) or a duration (PT10M). */
function renewBeforeOf(text: string, lifetimeMs: number, option: string, now: number): number {
  const ms = text.startsWith('P') ? durationMs(text, option, now) : Math.round(lifetimeMs * Number(text));
  if (ms >= lifetimeMs) throw new Error(`${option}: '${text}' must be shorter than the lifetime`);
  return ms;
}

/** The downlink of federation.downlink, on the drain's upstream client. */
function buildDownlink(deps: FederationWiring, client: UpstreamClient, context: () => Promise<{ mapper: TermMapper; linkUrl: string }>): Downlink {
  const { config, clock } = deps;
  const fed = config.federation;
  const dl = fed.downlink;
  const lifetimeMs = durationMs(dl.lifetime, 'federation.downlink.lifetime', clock.now());
  const names = (list: string): string[] => list.split(',');
  const target = dl.mqttUrl !== ''
    ? { kind: 'mqtt' as const, url: dl.mqttUrl }
    : { kind: 'http' as const, url: `${dl.endpoint.replace(/\/+$/, '')}${DOWNLINK_ROUTE}`, token: dl.endpointToken };
  // NOTE: the token and password stay out of the key: a new secret renews the subscription, it needs no new one.
  const targetKey = JSON.stringify([fed.upstream.url, fed.upstream.tenant, dl.types, dl.attributes, dl.idPattern, dl.topic, dl.mqttUrl, dl.endpoint]);
  return createDownlink({
    core: deps.core, context, clock, log: deps.log.child('downlink'), newId: deps.newId,
    keeper: {
      client, store: deps.store,
      options: {
        types: names(dl.types), attributes: names(dl.attributes), idPattern: dl.idPattern, target, topic: dl.topic, targetKey, lifetimeMs,
        renewBeforeMs: renewBeforeOf(dl.renewBefore, lifetimeMs, 'federation.downlink.renew-before', clock.now()), checkIntervalMs: dl.checkInterval,
        retryBaseMs: fed.retryBase, retryMaxMs: fed.retryMax,
      },
    },
    mqtt: dl.mqttUrl === '' ? undefined : {
      url: dl.mqttUrl, username: dl.mqttUsername, password: dl.mqttPassword, connectTimeoutMs: config.mqtt.connectTimeout,
      retryBaseMs: fed.retryBase, retryMaxMs: Math.min(fed.retryMax, 60_000),
    },
    options: { tenant: fed.tenant, types: names(dl.types), attributes: names(dl.attributes), maxBytes: dl.maxBytes },
  });
}

/** The metrics of the federation drain and of the registration upstream (none when off). */
export function federationMetrics(federation: Federation | undefined): MetricsSource[] {
  if (federation === undefined) return [];
  // Only the registration (federation.register.only): no drain to watch.
  if (!federation.status().enabled) return [...registrationMetrics(federation), ...downlinkMetrics(federation)];
  return [
    { name: 'edgeld_federation_outbox_depth', help: 'Journal changes not yet acknowledged by the upstream broker', collect: () => federation.status().outboxDepth },
    { name: 'edgeld_federation_parked', help: 'Entity changes the upstream broker refused, kept with their error', collect: () => federation.status().parked },
    {
      name: 'edgeld_federation_dropped_total', help: 'Changes skipped by the outbox bounds or pruned before they were forwarded', type: 'counter',
      collect: () => federation.status().dropped,
    },
    { name: 'edgeld_federation_sent_instances_total', help: 'History instances acknowledged upstream', type: 'counter', collect: () => federation.status().sent.instances },
    ...registrationMetrics(federation),
    ...downlinkMetrics(federation),
  ];
}

/** The metrics of the downlink from the cloud (none when federation.downlink is off). */
function downlinkMetrics(federation: Federation): MetricsSource[] {
  if (federation.status().downlink === undefined) return [];
  const of = () => federation.status().downlink;
  return [
    { name: 'edgeld_federation_downlink_connected', help: 'Whether the downlink is connected to its MQTT broker (1) or not (0)', collect: () => (of()?.connected ? 1 : 0) },
    { name: 'edgeld_federation_downlink_subscribed', help: 'Whether the upstream broker holds the downlink subscription (1) or not (0)', collect: () => (of()?.subscription.subscribed ? 1 : 0) },
    {
      name: 'edgeld_federation_downlink_last_notification_seconds', help: 'When the last downlink notification arrived (Unix time; 0: none yet)',
      collect: () => Math.floor((of()?.lastNotification ?? 0) / 1_000),
    },
    { name: 'edgeld_federation_downlink_applied_total', help: 'Attributes written from downlink notifications', type: 'counter', collect: () => of()?.applied ?? 0 },
    {
      name: 'edgeld_federation_downlink_refused_total', help: 'Entities or attributes of downlink notifications refused, by reason', type: 'counter', labelNames: ['reason'],
      collect: () => REFUSAL_REASONS.map((reason) => ({ labels: { reason }, value: of()?.refused[reason] ?? 0 })),
    },
    {
      name: 'edgeld_federation_downlink_failures_total', help: 'Downlink MQTT connection failures and failed attempts to keep its subscription upstream', type: 'counter',
      collect: () => (of()?.connectionFailures ?? 0) + (of()?.subscription.failures ?? 0),
    },
  ];
}

/** The metrics of the gateway's registration upstream (none when federation.register is off). */
function registrationMetrics(federation: Federation): MetricsSource[] {
  if (federation.status().registration === undefined) return [];
  const of = () => federation.status().registration;
  return [
    { name: 'edgeld_federation_registered', help: 'Whether the upstream broker holds the gateway\'s context source registration (1) or not (0)', collect: () => (of()?.registered ? 1 : 0) },
    {
      name: 'edgeld_federation_registration_expires_seconds', help: 'When the gateway\'s registration upstream expires unless renewed (Unix time; 0: not registered)',
      collect: () => Math.floor((of()?.expiresAt ?? 0) / 1_000),
    },
    {
      name: 'edgeld_federation_registration_failures_total', help: 'Attempts to register, renew or update the gateway\'s registration upstream that failed', type: 'counter',
      collect: () => of()?.failures ?? 0,
    },
  ];
}
