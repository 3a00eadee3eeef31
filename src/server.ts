// Composition root: builds every module with its narrow dependencies (the parts are built in
// src/server/, one file per concern), starts the HTTP listener and the embedded MQTT broker, and
// disposes everything in reverse order on shutdown.

import { parseRetentionRules, type Config } from './config/index.js';
import type { ChangeEmitter } from './events.js';
import { createDeviceService, type DeviceService } from './devices/index.js';
import { createEntityExpiry, createEntityService, type EntityExpiry, type EntityService } from './entities/index.js';
import type { Federation } from './federation/index.js';
import type { App } from './http/index.js';
import { createJobScheduler } from './jobs/index.js';
import type { ContextService } from './jsonld/index.js';
import { uuid, type Clock, type IdGenerator, type Logger } from './lib/index.js';
import type { IdentityProvider } from './auth/index.js';
import type { Ingest, MqttQos } from './mqtt/index.js';
import type { RegistrationService } from './registrations/index.js';
import type { Store } from './store/index.js';
import {
  createSubscriptionOwners, createSubscriptionRegistry, createSubscriptionService, loadSubscriptions, type MqttSender, type Notifier,
  type SubscriptionRegistry, type SubscriptionService,
} from './subscriptions/index.js';
import { createTemporalService, historyPolicyOf, removesHistory, type DiskBudget, type TemporalService } from './temporal/index.js';
import { buildAuth } from './server/auth.js';
import { buildCommands } from './server/commands.js';
import { createCommandLog } from './commands/index.js';
import type { CommandDispatcher } from './commands/index.js';
import { buildFederation } from './server/federation.js';
import { buildFoundation } from './server/foundation.js';
import { buildRegistrations } from './server/registrations.js';
import { createRegistrationLens } from './server/csource-lens.js';
import { buildHttp } from './server/http.js';
import { buildHomeAssistant, deviceWrittenOf } from './server/home-assistant.js';
import type { HomeAssistant } from './home-assistant/index.js';
import { buildLoginLimiter, buildSecretChecks } from './server/login-limiter.js';
import { closeAll, horizonsOf, listenAll, type LifecycleDeps } from './server/lifecycle.js';
import { buildMqttAccess, createEndpointCheck } from './server/mqtt-access.js';
import { buildNotifications } from './server/notifications.js';
import { reportOwnerless } from './server/ownerless.js';
import type { Runtime } from './server/runtime.js';
import { buildStorageWatch } from './server/storage.js';

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

export interface Broker {
  app: App;
  store: Store;
  contexts: ContextService;
  entities: EntityService;
  temporal: TemporalService;
  subscriptions: SubscriptionService;
  /** Context source registration subscriptions (NGSI-LD §5.11). */
  csourceSubscriptions: SubscriptionService;
  /** Context source registrations; `expire` is the body of the registrations-expiry job. */
  registrations: RegistrationService;
  /** The device registry: what MQTT ingestion reads of a device, and its secret check. */
  devices: DeviceService;
  /** The subscriptions in memory, for the notifier: candidates of a change. */
  subscriptionRegistry: SubscriptionRegistry;
  /** Matches committed changes against subscriptions and delivers their notifications. */
  notifier: Notifier;
  /** Sends commands to devices and records their states (edge.md §6). */
  commands: CommandDispatcher;
  /** Removes transient entities whose expiresAt came (NGSI-LD §4.22); `sweep` is the body of the entities-expiry job. */
  entityExpiry: EntityExpiry;
  events: ChangeEmitter;
  /** The disk budget (storage.max-bytes) and the figures of GET /edgeld/v1/storage; its check runs every few seconds once listening. */
  diskBudget: DiskBudget;
  /** The bound TCP port of the embedded MQTT broker; undefined until `listen()` has started it. */
  readonly mqttPort: number | undefined;
  /** The bound WebSocket port of the embedded MQTT broker; undefined when off or not started. */
  readonly mqttWsPort: number | undefined;
  /** The bound TLS port of the embedded MQTT broker; undefined when off or not started. */
  readonly mqttTlsPort: number | undefined;
  /** The bound port of the plain HTTP listener that redirects to HTTPS; undefined when off or not started. */
  readonly redirectPort: number | undefined;
  /** Whether the HTTP port serves HTTPS (server.tls-key and server.tls-cert). */
  readonly isHttps: boolean;
  /**
   * Loads the TLS key and certificate files again (SIGHUP): new connections get the new pair, open ones
   * keep theirs; a pair that fails to load is logged and the one in use stays. False when no listener uses TLS.
   */
  reloadTls(): boolean;
  /** Publishes on the embedded MQTT broker in-process; rejects before `listen()` and after `close()`. */
  publishLocal(topic: string, payload: Buffer | string, qos: MqttQos): Promise<void>;
  /** Sends notifications to MQTT endpoints: in-process when the URI names this gateway's broker. */
  mqttSender: MqttSender;
  /** Measurements published on the embedded broker: what was stored and dropped. */
  mqttIngest: Ingest;
  /** The built-in identity provider (application.identity-provider.enabled); its JWKS is trusted locally. */
  identity: IdentityProvider | undefined;
  /** Home Assistant MQTT discovery (integrations.home-assistant.enabled); undefined when off. */
  homeAssistant: HomeAssistant | undefined;
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

export function createBroker(deps: BrokerDeps): Broker {
  const { config, log, clock } = deps;
  const newId = deps.newId ?? uuid;
  const runtime: Runtime = { listener: undefined, mqtt: undefined, redirect: undefined, tls: undefined, httpPort: undefined, closing: false };
  const scheme = config.server.tlsKey === '' ? 'http' : 'https';
  const publicUrl = (): string => config.server.publicUrl || `${scheme}://127.0.0.1:${runtime.httpPort ?? config.server.port}`;
  const { store, events, feed, contexts, core } = buildFoundation(deps);
  const secretChecks = buildSecretChecks(config);
  const checkSecret = (secret: string, hash: string): Promise<boolean> => secretChecks.verify(secret, hash);
  const { permissions, subjects, verifier, auth, identity, rights, onSubjectGone } = buildAuth({ ...deps, store, core, publicUrl, checkSecret });
  const entities = createEntityService({ store, core, clock, newId });
  const entityExpiry = createEntityExpiry({ store, core, clock, newId, log: log.child('entities') });
  const { history } = config;
  const policy = historyPolicyOf({ ...history, rules: parseRetentionRules(history.retentionRules) });
  const temporal = createTemporalService({ store, core, clock, newId, log: log.child('temporal'), limit: config.temporal.limit, policy });
  // The registry is filled from the store before any request can change it.
  const subscriptionRegistry = createSubscriptionRegistry(loadSubscriptions(store));
  const mqtt = (): Runtime['mqtt'] => runtime.mqtt;
  const csourceRegistry = createSubscriptionRegistry(loadSubscriptions(store, true));
  // The notification topics on the embedded broker: those of both kinds of subscription.
  const topicsOf = {
    revision: () => subscriptionRegistry.revision() + csourceRegistry.revision(),
    all: () => [...subscriptionRegistry.all(), ...csourceRegistry.all()],
  };
  const checkEndpoint = createEndpointCheck({ config, registry: topicsOf, mqtt, auth });
  // With authentication on, notifications follow their owners' rights as they are at delivery.
  const owners = auth && createSubscriptionOwners({
    rightsOf: (subject, fallback) => rights.of(subject, fallback), checkEndpoint,
    registry: { get: (tenant, id) => subscriptionRegistry.get(tenant, id) ?? csourceRegistry.get(tenant, id) },
  });
  if (owners) reportOwnerless(store, subscriptionRegistry, log);
  let notifierOf: (() => Notifier) | undefined;
  const settle = async (): Promise<void> => notifierOf?.().settled();
  const subscriptions = createSubscriptionService({
    store, registry: subscriptionRegistry, clock, newId, owners, settle, ...(checkEndpoint ? { checkEndpoint } : {}),
  });
  const csourceSubscriptions = createSubscriptionService({
    store, registry: csourceRegistry, clock, newId, owners, csource: true, settle, ...(checkEndpoint ? { checkEndpoint } : {}),
    // NGSI-LD §5.11.7: what matches a registration subscription now is notified once it is created or updated.
    onWritten: (tenant, sub) => {
      notifierOf?.().notifyMatching(tenant, sub).catch((err: unknown) => log.warn('registration notification not queued', { subscriptionId: sub.id, err }));
    },
  });
  const { registrations, distributed } = buildRegistrations({ config, runtime, store, clock, newId, contexts, announce: (change) => events.emit(change) });
  const commands = buildCommands({ store, feed, core, contexts, clock, log, newId: deps.newId, runtime });
  const homeAssistant = buildHomeAssistant({ config, store, feed, contexts, entities, log, clock, runtime });
  const onWritten = deviceWrittenOf(commands, homeAssistant);
  const devices = createDeviceService({ store, clock, contexts, defaultEntityType: config.mqtt.defaultEntityType, checkSecret, onWritten });
  const jobs = createJobScheduler({ log: log.child('jobs') });
  const horizons = horizonsOf(config);
  // Journal consumers: each registers on the feed when built.
  const { notifier, mqttSender, publishLocal } = buildNotifications({
    ...deps, store, feed, registry: subscriptionRegistry, contexts, mqtt, publicUrl, owners,
    csource: { registry: csourceRegistry, lens: createRegistrationLens() },
  });
  notifierOf = () => notifier;
  notifier.start();
  const federation = buildFederation({ config, store, feed, contexts, clock, log, events, publicUrl, core, newId });
  const loginLimiter = buildLoginLimiter(deps);
  const { ingest, hooks } = buildMqttAccess({
    ...deps, core, contexts, devices, registry: topicsOf, auth, mqtt, sessions: store.mqttSessions, loginLimiter, commands, homeAssistant,
  });
  // A deleted subject's MQTT connections end (its subscriptions are suspended through `owners`).
  onSubjectGone((subject) => runtime.mqtt?.closeClientsOf(subject));
  const storage = buildStorageWatch({ config, store, clock, log, rollups: policy.rollups });
  const http = buildHttp({
    ...deps, store, events, runtime, verifier, notifier, ingest, mqttAccess: hooks, federation, commands, homeAssistant, loginLimiter, secretChecks, entityExpiry, storage,
    services: { contexts, entities, temporal, subscriptions, csourceSubscriptions, registrations, distributed, permissions, subjects, devices, commandLog: createCommandLog({ store }), auth, identity },
  });
  const lifecycle: LifecycleDeps = {
    config, log, clock, store, events, runtime, http, jobs, temporal, registrations, entityExpiry, hasRetention: removesHistory(policy), hasRollups: policy.rollups,
    ...horizons, diskBudget: storage.budget, notifier, commands, mqttSender, mqttHooks: hooks, federation, verifier, identity, homeAssistant,
  };
  return {
    app: http.app, store, contexts, entities, temporal, subscriptions, csourceSubscriptions, registrations, devices, subscriptionRegistry, notifier, commands, entityExpiry, events, publishLocal, mqttSender, identity,
    federation, homeAssistant,
    diskBudget: storage.budget,
    mqttIngest: ingest,
    get mqttPort() {
      return runtime.mqtt?.port;
    },
    get mqttWsPort() {
      return runtime.mqtt?.wsPort;
    },
    get mqttTlsPort() {
      return runtime.mqtt?.tlsPort;
    },
    get redirectPort() {
      return runtime.redirect?.port;
    },
    isHttps: scheme === 'https',
    reloadTls: () => {
      if (runtime.tls === undefined) return false;
      runtime.tls.reload();
      return true;
    },
    listen: () => listenAll(lifecycle),
    close: () => closeAll(lifecycle),
  };
}
