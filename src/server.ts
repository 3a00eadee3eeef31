// Composition root: builds every module with its narrow dependencies, starts the HTTP listener and
// the embedded MQTT broker, and disposes everything in reverse order on shutdown.

import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { dirname, join } from 'node:path';
import type { Config } from './config/index.js';
import { createChangeEmitter, type ChangeEmitter } from './events.js';
import { timeOrderedUuid, uuid, type Clock, type IdGenerator, type Logger } from './lib/index.js';
import { createJournalFeed, openStore, type JournalFeed, type Store } from './store/index.js';
import { createContextService, type ContextInput, type ContextService } from './jsonld/index.js';
import {
  createBatchService, createDiscoveryService, createEntityService, createMeasurementService, createWriteAccess, createWriteCore, pruneJournal,
  trackLiveEntities, type EntityService,
} from './entities/index.js';
import { createApp, createMetrics, listenHttp, type App, type HttpListener } from './http/index.js';
import { addDuration, createTemporalService, parseDuration, type TemporalService } from './temporal/index.js';
import { createJobScheduler } from './jobs/index.js';
import {
  createNotifier, createSubscriptionRegistry, createSubscriptionService, loadSubscriptions, notificationContextInput, sendHttp,
  toNotificationContext, type Notifier, type SubscriptionRegistry, type SubscriptionService,
} from './subscriptions/index.js';
import { createIngest, createMqttAccess, isEmbeddedBrokerUrl, startMqttBroker, topicMatches, type Ingest, type MqttBroker, type MqttQos } from './mqtt/index.js';
import { createMqttSender, type MqttSender } from './subscriptions/index.js';
import { createIdentityProvider, type IdentityProvider } from './auth/index.js';
import { allows, createAuthenticator, createTokenVerifier } from './auth/index.js';
import type { EntityFacts, Principal } from './ngsi/index.js';
import { createPermissionService, createSubjectService } from './permissions/index.js';
import { createDeviceService, type DeviceService } from './devices/index.js';
import { createFederation, disabledStatus, FEDERATION_READER, type Federation } from './federation/index.js';

export interface BrokerDeps {
  config: Config;
  log: Logger;
  clock: Clock;
  newId?: IdGenerator;
  /** Outbound fetch for remote @contexts (tests inject a local one). */
  fetch?: typeof fetch;
  /** SQLite path override; ':memory:' in tests. Default `<storage.dir>/edgeld.db`. */
  dbPath?: string;
  /** The built dashboard page (tests build one into a temp directory). Default dist/ui. */
  dashboardDir?: string;
}

/** Where the HTTP port accepts MQTT over WebSocket while the dashboard is on: its live updates arrive there. */
const MQTT_WEBSOCKET_PATH = '/mqtt';

export interface Broker {
  app: App;
  store: Store;
  contexts: ContextService;
  entities: EntityService;
  temporal: TemporalService;
  subscriptions: SubscriptionService;
  /** The device registry: what MQTT ingestion reads of a device, and its secret check. */
  devices: DeviceService;
  /** The subscriptions in memory, for the notifier: candidates of a change. */
  subscriptionRegistry: SubscriptionRegistry;
  /** Matches committed changes against subscriptions and delivers their notifications. */
  notifier: Notifier;
  events: ChangeEmitter;
  /** The bound TCP port of the embedded MQTT broker; undefined until `listen()` has started it. */
  readonly mqttPort: number | undefined;
  /** The bound WebSocket port of the embedded MQTT broker; undefined when off or not started. */
  readonly mqttWsPort: number | undefined;
  /** The bound TLS port of the embedded MQTT broker; undefined when off or not started. */
  readonly mqttTlsPort: number | undefined;
  /** Publishes on the embedded MQTT broker in-process; rejects before `listen()` and after `close()`. */
  publishLocal(topic: string, payload: Buffer | string, qos: MqttQos): Promise<void>;
  /** Sends notifications to MQTT endpoints: in-process when the URI names this gateway's broker. */
  mqttSender: MqttSender;
  /** Measurements published on the embedded broker: what was stored and dropped. */
  mqttIngest: Ingest;
  /** The built-in identity provider (application.identity-provider.enabled); its JWKS is trusted locally. */
  identity: IdentityProvider | undefined;
  /** Forwards local changes upstream (federation.upstream.url); undefined when off. */
  federation: Federation | undefined;
  /**
   * Starts the HTTP listener, then the embedded MQTT broker; resolves with the HTTP port. Rejects with
   * the listen error of either; `close()` then releases what was started.
   */
  listen(): Promise<number>;
  /** Orderly shutdown: stop accepting, drain in-flight requests, flush writes, checkpoint, close. */
  close(): Promise<void>;
}

/** A file an option names; a failure names the option. */
async function readOption(option: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new Error(`${option}: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

export function createBroker(deps: BrokerDeps): Broker {
  const { config, log, clock } = deps;
  const store = openStore({
    path: deps.dbPath ?? join(config.storage.dir, 'edgeld.db'),
    busyTimeoutMs: config.storage.busyTimeout,
    minFreeBytes: config.storage.minFreeBytes,
    walLimitBytes: config.storage.walLimitBytes,
    historyBucket: config.history.bucket,
    log: log.child('store'),
    clock,
  });
  const events = createChangeEmitter((err) => log.error('change listener failed', { err }));
  // The journal's one reader: every consumer of changes registers on it; the emitter only wakes it.
  const feed = createJournalFeed({ journal: store.journal, log: log.child('journal') });
  events.on((change) => feed.announce(change));
  const contexts = createContextService({
    persistence: store.contexts,
    allowRemote: config.contexts.allowRemote,
    fetchTimeoutMs: config.contexts.fetchTimeout,
    maxBytes: config.contexts.maxBytes,
    log: log.child('jsonld'),
    clock,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  const authConfig = config.application.authentication;
  // The one write path: every write below journals its changes through it (and, with authentication,
  // checks and grants permissions in the same transaction).
  const core = createWriteCore({ store, events, clock, ...(authConfig.enabled ? { access: createWriteAccess({ store, newId: deps.newId ?? timeOrderedUuid }) } : {}) });
  const permissions = createPermissionService({
    store, clock, newId: deps.newId ?? timeOrderedUuid, enabled: authConfig.enabled, allowPublic: authConfig.allowPublicPermission,
  });
  const subjects = createSubjectService({ store, core, clock, log: log.child('subjects'), cascade: config.search.onOwnerDeleteCascadeEntities });
  const verifier = authConfig.enabled ? createTokenVerifier({
    jwksUri: authConfig.jwksUri, publicKeyFile: authConfig.publicKeyFile, issuer: authConfig.issuer, audience: authConfig.audience,
    clockToleranceSec: authConfig.clockTolerance, refreshIntervalMs: authConfig.jwksRefreshInterval, timeoutMs: authConfig.jwksTimeout,
    // NOTE: next to the database, so a gateway restarted offline still verifies tokens; none for an in-memory store.
    ...(deps.dbPath === ':memory:' ? {} : { cacheFile: join(deps.dbPath === undefined ? config.storage.dir : dirname(deps.dbPath), 'jwks-cache.json') }),
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    // The built-in identity provider's keys are trusted with no network.
    localKeys: () => identity?.publicJwks(),
    clock, log: log.child('auth'),
  }) : undefined;
  const auth = verifier && createAuthenticator({
    verifier, clock, observe: (claims) => subjects.observe(claims),
    claims: { adminRole: authConfig.adminRole, claimsPaths: authConfig.claimsPaths.split(',') },
    allowPublic: authConfig.allowPublicPermission,
  });
  const entities = createEntityService({ store, core, clock, newId: deps.newId ?? uuid });
  // The schema accepts only ISO 8601 durations (or empty) for history.retention.
  const retention = config.history.retention === '' ? undefined : parseDuration(config.history.retention);
  const temporal = createTemporalService({
    store, core, clock, newId: deps.newId ?? uuid, log: log.child('temporal'), limit: config.temporal.limit,
    ...(retention ? { retention } : {}),
  });
  // The registry is filled from the store before any request can change it.
  const subscriptionRegistry = createSubscriptionRegistry(loadSubscriptions(store));
  const subscriptions = createSubscriptionService({ store, registry: subscriptionRegistry, clock, newId: deps.newId ?? uuid });
  const devices = createDeviceService({ store, clock, contexts, defaultEntityType: config.mqtt.defaultEntityType });
  const jobs = createJobScheduler({ log: log.child('jobs') });
  const journalMaxAge = parseDuration(config.journal.maxAge);
  if (!journalMaxAge) throw new Error(`journal.max-age: '${config.journal.maxAge}' is too large a duration`);
  const horizon = (now: number): number => addDuration(now, journalMaxAge, -1);
  let listener: HttpListener | undefined;
  let mqtt: MqttBroker | undefined;
  let closing = false;
  const publishLocal = (topic: string, payload: Buffer | string, qos: MqttQos): Promise<void> =>
    mqtt ? mqtt.publish(topic, payload, qos) : Promise.reject(new Error('the embedded MQTT broker is not running'));
  const mqttSender = createMqttSender({
    isLocal: (url) => mqtt !== undefined && isEmbeddedBrokerUrl(url, { port: mqtt.port, host: config.mqtt.host }),
    publishLocal,
    connectTimeoutMs: config.mqtt.connectTimeout,
    log: log.child('mqtt-sender'),
  });
  let httpPort: number | undefined;
  const publicUrl = (): string => config.server.publicUrl || `http://127.0.0.1:${httpPort ?? config.server.port}`;
  const notifier = createNotifier({
    store, feed, registry: subscriptionRegistry, clock, log: log.child('notifier'), newId: deps.newId ?? uuid,
    // NOTE: a subscription's stored context was its creation request's ContextInput.
    contextOf: async (sub) => toNotificationContext(await contexts.resolve(notificationContextInput(sub) as ContextInput | undefined), publicUrl()),
    sendHttp,
    sendMqtt: (uri, message, opts) => mqttSender.send(uri, message, opts),
    ...(authConfig.enabled ? {
      mayRead: (tenant: string, assignees: readonly string[], entity: EntityFacts) =>
        allows({ tenant, admin: false, assignees, groups: [] }, 'read', entity, store.permissions.applicableTo(tenant, assignees, entity.id)),
    } : {}),
    options: {
      timeoutMs: config.notifications.timeout, maxAttempts: config.notifications.maxAttempts, retryBaseMs: config.notifications.retryBase,
      retryMaxMs: config.notifications.retryMax, maxPending: config.notifications.maxPending,
      periodicMaxEntities: config.notifications.periodicMaxEntities,
    },
  });
  notifier.start();
  const federation = createFederationOf(config, store, feed, contexts, clock, log);
  const idp = config.application.identityProvider;
  const audience = config.application.authentication.audience;
  const identity = idp.enabled
    ? createIdentityProvider({
      persistence: store.identity, clock, newId: deps.newId ?? uuid, issuer: () => idp.issuer || publicUrl(), tokenLifetimeSec: idp.tokenLifetime,
      algorithm: idp.algorithm, log: log.child('idp'), ...(audience ? { audience } : {}),
    })
    : undefined;
  const measurements = createMeasurementService({ core, newId: deps.newId ?? uuid });
  const ingest = createIngest({
    clock, log: log.child('mqtt-ingest'), maxPayload: config.mqtt.maxPayload, defaultEntityType: config.mqtt.defaultEntityType,
    autoprovision: config.mqtt.autoprovision === 'auto' ? !authConfig.enabled : config.mqtt.autoprovision === 'true',
    device: (tenant, deviceId) => devices.resolve(tenant, deviceId),
    mapper: (context) => (context === undefined ? contexts.core : contexts.resolve(context as ContextInput)),
    record: (actor, m, opts) => measurements.record(actor, m, opts),
  });
  /** The topics notifications go to on the embedded broker, with the subject owning each subscription (kept until one changes). */
  let notificationTopics: { revision: number; list: Array<{ topic: string; owner: string | undefined }> } | undefined;
  const topicsOfNotifications = (): Array<{ topic: string; owner: string | undefined }> => {
    if (mqtt === undefined) return [];
    const revision = subscriptionRegistry.revision();
    if (notificationTopics !== undefined && notificationTopics.revision === revision) return notificationTopics.list;
    const embedded = { port: mqtt.port, host: config.mqtt.host };
    const list: Array<{ topic: string; owner: string | undefined }> = [];
    for (const { sub } of subscriptionRegistry.all()) {
      let uri: URL;
      try {
        uri = new URL(sub.notification.endpoint.uri);
      } catch {
        continue;
      }
      if (isEmbeddedBrokerUrl(uri, embedded)) list.push({ topic: decodeURIComponent(uri.pathname.slice(1)), owner: sub.owner?.subject });
    }
    notificationTopics = { revision, list };
    return list;
  };
  /** Whether a subject may receive what is published on topics matching `filter`: not the notifications of another's subscription. */
  const maySubscribe = (filter: string, principal: Principal): boolean =>
    topicsOfNotifications().every(({ topic, owner }) => !topicMatches(filter, topic) || (owner !== undefined && owner === principal.subject));
  /** Only the broker publishes on the topics of notifications (a client could otherwise forge them). */
  const mayPublish = (topic: string): boolean => topicsOfNotifications().every((n) => n.topic !== topic);
  const mqttAccess = createMqttAccess({
    log: log.child('mqtt'), ingest,
    ...(auth ? {
      auth: {
        principal: (token, tenant) => auth.authenticate(token, tenant),
        deviceSecret: (tenant, deviceId, secret) => devices.checkSecret(tenant, deviceId, secret),
        maySubscribe,
        mayPublish,
      },
    } : {}),
  });
  // What /ready and /metrics report.
  const notReady = (): string[] => [
    ...(closing ? ['shutdown'] : []),
    ...(store.isOpen() ? [] : ['database']),
    ...(mqtt !== undefined && !closing ? [] : ['mqtt']),
    ...(verifier && authConfig.jwksUri !== '' && !verifier.hasJwksKeys() ? ['jwks'] : []),
  ];
  // NOTE: counted here, before anything can write; one scan at start instead of one per scrape.
  const liveEntities = config.metrics.enabled ? trackLiveEntities(store, events) : undefined;
  const metrics = liveEntities ? createMetrics({
    log: log.child('metrics'),
    notifications: () => notifier.stats(),
    mqtt: () => ({ ...ingest.stats(), connectedClients: mqtt?.connectedClients ?? 0 }),
    storage: () => ({ ...store.diskStats(), liveEntities: liveEntities(), historyRows: store.estimateHistoryRows() }),
    // Metrics of other modules (queue depths and the like) are added here as MetricsSources.
    sources: federation ? [
      { name: 'edgeld_federation_outbox_depth', help: 'Journal changes not yet acknowledged by the upstream broker', collect: () => federation.status().outboxDepth },
      { name: 'edgeld_federation_parked', help: 'Entity changes the upstream broker refused, kept with their error', collect: () => federation.status().parked },
      {
        name: 'edgeld_federation_dropped_total', help: 'Changes skipped by the outbox bounds or pruned before they were forwarded', type: 'counter',
        collect: () => federation.status().dropped,
      },
      { name: 'edgeld_federation_sent_instances_total', help: 'History instances acknowledged upstream', type: 'counter', collect: () => federation.status().sent.instances },
    ] : [],
  }) : undefined;
  const app = createApp({
    config: {
      bodyLimit: config.http.bodyLimit, maxJsonDepth: config.http.maxJsonDepth, limitDefault: config.pagination.limitDefault, limitMax: config.pagination.limitMax,
      batchMaxSize: config.batch.maxSize,
    },
    contexts,
    entities,
    batch: createBatchService({ entities, purgePageSize: config.batch.maxSize }),
    discovery: createDiscoveryService({ store, newId: deps.newId ?? uuid }),
    temporal,
    subscriptions,
    permissions,
    subjects,
    devices,
    federation: federation ?? { status: disabledStatus },
    ...(auth ? { auth } : {}),
    log: log.child('http'),
    notReady,
    ...(metrics ? { metrics } : {}),
    ...(identity ? { identity } : {}),
    ...(config.dashboard.enabled ? {
      dashboard: { websocketPath: MQTT_WEBSOCKET_PATH, mqttPort: () => mqtt?.port, ...(deps.dashboardDir ? { assetDir: deps.dashboardDir } : {}) },
    } : {}),
  });
  const upgrade = config.dashboard.enabled ? {
    path: MQTT_WEBSOCKET_PATH,
    handle: (req: IncomingMessage, socket: Duplex, head: Buffer) => (mqtt ? mqtt.handleUpgrade(req, socket, head) : socket.destroy()),
  } : undefined;

  return {
    app, store, contexts, entities, temporal, subscriptions, devices, subscriptionRegistry, notifier, events, publishLocal, mqttSender, identity,
    federation,
    mqttIngest: ingest,
    get mqttPort() {
      return mqtt?.port;
    },
    get mqttWsPort() {
      return mqtt?.wsPort;
    },
    get mqttTlsPort() {
      return mqtt?.tlsPort;
    },
    listen: async () => {
      jobs.schedule('journal-prune', config.journal.pruneSchedule, (signal) => pruneJournal({ store, log: log.child('journal'), horizon, signal }, clock.now()));
      if (retention) jobs.schedule('history-retention', config.history.retentionSchedule, (signal) => temporal.applyRetention(clock.now(), signal));
      jobs.schedule('subscriptions-periodic', config.notifications.periodicSchedule, () => notifier.runPeriodic(clock.now()));
      jobs.schedule('wal-checkpoint', config.storage.checkpointSchedule, () => store.checkpoint('PASSIVE'));
      // Loads the cached JWKS and starts fetching a fresh one; requests never wait for the network.
      if (verifier) await verifier.start();
      try {
        listener = await listenHttp(app, { port: config.server.port, host: config.server.host, log: log.child('http'), ...(upgrade ? { upgrade } : {}) });
        mqtt = await startMqttBroker({
          port: config.mqtt.port,
          host: config.mqtt.host,
          wsPort: config.mqtt.wsPort < 0 ? undefined : config.mqtt.wsPort,
          log: log.child('mqtt'),
          hooks: mqttAccess,
          tls: config.mqtt.tlsPort < 0 ? undefined : {
            port: config.mqtt.tlsPort, key: await readOption('mqtt.tls-key', config.mqtt.tlsKey), cert: await readOption('mqtt.tls-cert', config.mqtt.tlsCert),
          },
          persistence: store.mqttSessions,
        });
      } catch (err) {
        // Nothing may keep the process alive when it cannot serve (a cron schedule would).
        await jobs.stop();
        throw err;
      }
      httpPort = listener.port;
      federation?.start();
      return listener.port;
    },
    close: async () => {
      if (closing) return;
      closing = true;
      if (listener) await listener.close(config.server.shutdownTimeout);
      if (mqtt) await mqtt.close();
      await jobs.stop();
      // What is not delivered stays queued for the next start.
      await notifier.stop();
      // The cursor stays where the upstream acknowledged: a batch cut short is sent again.
      await federation?.stop(config.server.shutdownTimeout);
      await mqttSender.close();
      verifier?.close();
      await store.flush();
      store.close();
    },
  };
}

/**
 * The federation drain when an upstream is configured. Otherwise its journal reader is forgotten, so
 * that a cursor left from an earlier configuration no longer holds changes back from pruning.
 */
function createFederationOf(
  config: Config, store: Store, feed: JournalFeed, contexts: ContextService, clock: Clock, log: Logger,
): Federation | undefined {
  const fed = config.federation;
  if (fed.upstream.url === '') {
    if (store.journal.cursor(FEDERATION_READER) !== undefined) {
      store.journal.dropReader(FEDERATION_READER);
      log.info('federation off: its pending changes are no longer kept');
    }
    return undefined;
  }
  // The schema accepts only ISO 8601 durations longer than zero for federation.outbox.max-age.
  const maxAge = parseDuration(fed.outbox.maxAge);
  if (!maxAge) throw new Error(`federation.outbox.max-age: '${fed.outbox.maxAge}' is too large a duration`);
  const up = fed.upstream;
  return createFederation({
    store, feed, clock, log: log.child('federation'),
    context: async () => {
      const resolved = await contexts.resolve(up.context === '' ? undefined : up.context);
      return { mapper: resolved, linkUrl: resolved.linkUrl ?? up.context };
    },
    horizon: (now) => addDuration(now, maxAge, -1),
    options: {
      url: up.url, upstreamTenant: up.tenant, tenant: fed.tenant, types: up.types === '' ? [] : up.types.split(','),
      batchSize: fed.batchSize, lingerMs: fed.linger, timeoutMs: fed.timeout, retryBaseMs: fed.retryBase, retryMaxMs: fed.retryMax, maxRows: fed.outbox.maxRows,
      ...(up.tokenUrl === '' ? {} : { token: { url: up.tokenUrl, clientId: up.clientId, clientSecret: up.clientSecret } }),
    },
  });
}
