// The HTTP side: the Hono app with every service, what /ready reports, the Prometheus metrics
// (with those of the federation drain), and the dashboard's MQTT-over-WebSocket upgrade.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { SecretChecks, TokenVerifier } from '../auth/index.js';
import type { Config } from '../config/index.js';
import { createBatchService, createDiscoveryService, trackLiveEntities, type EntityExpiry } from '../entities/index.js';
import type { ChangeEmitter } from '../events.js';
import { disabledStatus } from '../federation/index.js';
import { createApp, createMetrics, type App, type AppDeps, type Metrics } from '../http/index.js';
import { createRequestBudget, uuid, type Clock, type IdGenerator, type Logger, type LoginLimiter, type RequestBudget } from '../lib/index.js';
import type { MetricsSource } from '../http/index.js';
import type { Ingest, MqttAccess } from '../mqtt/index.js';
import type { Store } from '../store/index.js';
import type { Notifier } from '../subscriptions/index.js';
import { federationMetrics, type FederationLink } from './federation.js';
import { loginMetrics, secretCheckMetrics } from './login-limiter.js';
import { mqttConnectionMetrics } from './mqtt-metrics.js';
import { commandMetrics } from './commands.js';
import { homeAssistantMetrics } from './home-assistant.js';
import type { HomeAssistant } from '../home-assistant/index.js';
import type { CommandDispatcher } from '../commands/index.js';
import type { Runtime } from './runtime.js';
import { storageMetrics, type StorageWatch } from './storage.js';

/** Where the HTTP port accepts MQTT over WebSocket while the dashboard is on: its live updates arrive there. */
const MQTT_WEBSOCKET_PATH = '/mqtt';

export interface HttpWiring {
  config: Config;
  log: Logger;
  clock: Clock;
  newId?: IdGenerator | undefined;
  dashboardDir?: string | undefined;
  store: Store;
  events: ChangeEmitter;
  runtime: Runtime;
  /** The services the routes call. */
  services: Pick<AppDeps, 'contexts' | 'entities' | 'temporal' | 'subscriptions' | 'csourceSubscriptions' | 'registrations' | 'distributed' | 'permissions' | 'subjects' | 'devices' | 'commandLog'> & {
    auth: AppDeps['auth'] | undefined;
    identity: AppDeps['identity'] | undefined;
  };
  verifier: TokenVerifier | undefined;
  notifier: Notifier;
  ingest: Ingest;
  /** The MQTT access hooks (their refusals are counted). */
  mqttAccess: Pick<MqttAccess, 'stats'>;
  federation: FederationLink | undefined;
  /** The command dispatcher (its counts are metrics). */
  commands: CommandDispatcher;
  /** Home Assistant discovery, when on (its command counts are metrics). */
  homeAssistant: HomeAssistant | undefined;
  loginLimiter: LoginLimiter | undefined;
  /** The bound on password checks (its counts are metrics). */
  secretChecks: SecretChecks;
  /** The removal of transient entities (its counts are metrics). */
  entityExpiry: Pick<EntityExpiry, 'stats'>;
  /** The disk budget and the storage figures (GET /edgeld/v1/storage, metrics). */
  storage: StorageWatch;
}

export interface HttpParts {
  app: App;
  upgrade: { path: string; handle(req: IncomingMessage, socket: Duplex, head: Buffer): void } | undefined;
}

/** The request budget of each subject (application.budget.requests-per-minute); undefined when off or without authentication. */
function buildBudget(deps: HttpWiring): RequestBudget | undefined {
  const { requestsPerMinute, maxSubjects } = deps.config.application.budget;
  if (requestsPerMinute === 0 || !deps.config.application.authentication.enabled) return undefined;
  return createRequestBudget({ limits: { perMinute: requestsPerMinute, maxKeys: maxSubjects }, clock: deps.clock });
}

/** Requests refused for want of budget, and the subjects tracked (none when off). */
function budgetMetrics(budget: RequestBudget | undefined): MetricsSource[] {
  if (budget === undefined) return [];
  return [
    {
      name: 'edgeld_request_budget_refusals_total', type: 'counter', help: 'Requests refused with 429 because their subject was over application.budget.requests-per-minute',
      collect: () => budget.stats().refused,
    },
    { name: 'edgeld_request_budget_subjects', help: 'Subjects (and anonymous addresses) whose request budget is tracked', collect: () => budget.stats().keys },
  ];
}

/** Transient entities removed when their expiresAt came (NGSI-LD §4.22). */
function expiryMetrics(expiry: Pick<EntityExpiry, 'stats'>): MetricsSource[] {
  return [
    { name: 'edgeld_entities_expired_total', type: 'counter', help: 'Entities removed because their expiresAt came (transient entities)', collect: () => expiry.stats().expired },
    { name: 'edgeld_entities_expiry_writes_total', type: 'counter', help: 'Writes that removed expired entities (each removes at most 500)', collect: () => expiry.stats().writes },
  ];
}

function buildMetrics(deps: HttpWiring, budget: RequestBudget | undefined): Metrics | undefined {
  const { config, store, runtime } = deps;
  // NOTE: counted here, before anything can write; one scan at start instead of one per scrape.
  const liveEntities = config.metrics.enabled ? trackLiveEntities(store, deps.events) : undefined;
  if (liveEntities === undefined) return undefined;
  return createMetrics({
    log: deps.log.child('metrics'),
    notifications: () => deps.notifier.stats(),
    mqtt: () => ({ ...deps.ingest.stats(), connectedClients: runtime.mqtt?.connectedClients ?? 0 }),
    storage: () => ({ ...store.diskStats(), liveEntities: liveEntities(), historyRows: store.estimateHistoryRows() }),
    // Metrics of other modules (queue depths and the like) are added here as MetricsSources.
    sources: [...federationMetrics(deps.federation), ...commandMetrics(deps.commands), ...homeAssistantMetrics(deps.homeAssistant), ...expiryMetrics(deps.entityExpiry), ...mqttConnectionMetrics(runtime), ...loginMetrics(deps.loginLimiter), ...secretCheckMetrics(deps.secretChecks), ...budgetMetrics(budget),
      ...storageMetrics(deps.storage, deps.clock), {
      name: 'edgeld_mqtt_session_takeovers_refused_total', type: 'counter',
      help: 'MQTT CONNECTs refused because their client id belongs to another principal (a device, or another subject\'s session)',
      collect: () => deps.mqttAccess.stats().takeoversRefused,
    }, {
      name: 'edgeld_mqtt_wills_refused_total', type: 'counter',
      help: 'MQTT CONNECTs refused (not authorized) because their will names a topic the client may not publish on',
      collect: () => deps.mqttAccess.stats().willsRefused,
    }, {
      name: 'edgeld_mqtt_connects_busy_total', type: 'counter',
      help: 'MQTT CONNECTs refused (server unavailable) because too many password checks were in progress already',
      collect: () => deps.mqttAccess.stats().busyRefused,
    }],
  });
}

export function buildHttp(deps: HttpWiring): HttpParts {
  const { config, store, runtime, services, verifier } = deps;
  const authConfig = config.application.authentication;
  // What /ready and /metrics report.
  const notReady = (): string[] => [
    ...(runtime.closing ? ['shutdown'] : []),
    ...(store.isOpen() ? [] : ['database']),
    ...(runtime.mqtt !== undefined && !runtime.closing ? [] : ['mqtt']),
    ...(verifier && authConfig.jwksUri !== '' && !verifier.hasJwksKeys() ? ['jwks'] : []),
  ];
  const budget = services.auth ? buildBudget(deps) : undefined;
  const metrics = buildMetrics(deps, budget);
  const { auth, identity, ...rest } = services;
  const app = createApp({
    config: {
      bodyLimit: config.http.bodyLimit, maxJsonDepth: config.http.maxJsonDepth, limitDefault: config.pagination.limitDefault, limitMax: config.pagination.limitMax,
      batchMaxSize: config.batch.maxSize,
    },
    ...rest,
    batch: createBatchService({ entities: services.entities, purgePageSize: config.batch.maxSize }),
    discovery: createDiscoveryService({ store, newId: deps.newId ?? uuid }),
    federation: deps.federation ?? { status: disabledStatus },
    storage: { report: deps.storage.report, now: () => deps.clock.now() },
    ...(deps.federation?.downlink !== undefined && config.federation.downlink.endpoint !== ''
      ? { downlink: { receive: deps.federation.downlink.receive, subject: config.federation.downlink.endpointSubject } } : {}),
    ...(auth ? { auth } : {}),
    log: deps.log.child('http'),
    notReady,
    ...(metrics ? { metrics } : {}),
    ...(identity ? { identity } : {}),
    ...(deps.loginLimiter ? { loginLimiter: deps.loginLimiter } : {}),
    ...(budget ? { budget } : {}),
    ...(config.dashboard.enabled ? {
      dashboard: { websocketPath: MQTT_WEBSOCKET_PATH, mqttPort: () => runtime.mqtt?.port, ...(deps.dashboardDir ? { assetDir: deps.dashboardDir } : {}) },
    } : {}),
  });
  const upgrade = config.dashboard.enabled ? {
    path: MQTT_WEBSOCKET_PATH,
    handle: (req: IncomingMessage, socket: Duplex, head: Buffer) => (runtime.mqtt ? runtime.mqtt.handleUpgrade(req, socket, head) : socket.destroy()),
  } : undefined;
  return { app, upgrade };
}
