// Starting and stopping the broker: listen() schedules the jobs, loads the TLS key and certificate
// pairs, starts the HTTP listener (HTTPS, and its redirect port, when configured), the embedded MQTT
// broker and the watch of the certificate files, then the federation drain; close() disposes in
// reverse order.

import type { IdentityProvider, TokenVerifier } from '../auth/index.js';
import type { Config } from '../config/index.js';
import { pruneJournal, type EntityExpiry } from '../entities/index.js';
import type { ChangeEmitter } from '../events.js';
import { listenHttp, listenRedirect } from '../http/index.js';
import type { JobScheduler } from '../jobs/index.js';
import { loadTlsPair, watchTlsFiles, type Clock, type Logger, type TlsFiles, type TlsPair, type TlsReloadTarget } from '../lib/index.js';
import { startMqttBroker, type MqttAccess } from '../mqtt/index.js';
import type { Store } from '../store/index.js';
import type { MqttSender, Notifier } from '../subscriptions/index.js';
import type { CommandDispatcher } from '../commands/index.js';
import type { HomeAssistant } from '../home-assistant/index.js';
import type { RegistrationService } from '../registrations/index.js';
import { addDuration, parseDuration, type DiskBudget, type TemporalService } from '../temporal/index.js';
import type { FederationLink } from './federation.js';
import type { HttpParts } from './http.js';
import type { Runtime } from './runtime.js';

export interface LifecycleDeps {
  config: Config;
  log: Logger;
  clock: Clock;
  store: Store;
  events: ChangeEmitter;
  runtime: Runtime;
  http: HttpParts;
  jobs: JobScheduler;
  temporal: TemporalService;
  registrations: RegistrationService;
  /** Transient entities (NGSI-LD §4.22): removed by a job, woken when the earliest expiresAt comes. */
  entityExpiry: EntityExpiry;
  /** Whether some history retention is set (the retention job runs). */
  hasRetention: boolean;
  /** Whether history.rollups is on (the rollup job runs). */
  hasRollups: boolean;
  /** The disk budget: checked every few seconds while the broker serves. */
  diskBudget: DiskBudget;
  /** The instant before which a journal row is pruned whether read or not. */
  horizon(now: number): number;
  notifier: Notifier;
  /** The command dispatcher: the broker follows command messages to their device. */
  commands: CommandDispatcher;
  /** Home Assistant MQTT discovery; undefined when off. */
  homeAssistant: HomeAssistant | undefined;
  /** The instant before which a finished command is removed (now minus commands.retention). */
  commandsHorizon(now: number): number;
  mqttSender: MqttSender;
  mqttHooks: MqttAccess;
  federation: FederationLink | undefined;
  verifier: TokenVerifier | undefined;
  identity: IdentityProvider | undefined;
}

/** The instants before which a journal row and a finished command go (journal.max-age, commands.retention). */
export function horizonsOf(config: Config): Pick<LifecycleDeps, 'horizon' | 'commandsHorizon'> {
  const journalMaxAge = parseDuration(config.journal.maxAge);
  if (!journalMaxAge) throw new Error(`journal.max-age: '${config.journal.maxAge}' is too large a duration`);
  const commandsRetention = parseDuration(config.commands.retention);
  if (!commandsRetention) throw new Error(`commands.retention: '${config.commands.retention}' is too large a duration`);
  return { horizon: (now) => addDuration(now, journalMaxAge, -1), commandsHorizon: (now) => addDuration(now, commandsRetention, -1) };
}

/** The key and certificate files of a group of options, when both are set. */
function tlsFilesOf(group: 'server' | 'mqtt', keyFile: string, certFile: string): TlsFiles | undefined {
  return keyFile === '' || certFile === '' ? undefined : { keyFile, certFile, keyOption: `${group}.tls-key`, certOption: `${group}.tls-cert` };
}

interface LoadedTls {
  files: TlsFiles;
  pair: TlsPair;
}

/** The pairs in use at start; a file that cannot be read or a pair that does not load stops the start, naming the option. */
function loadTls(config: Config): { https: LoadedTls | undefined; mqtt: LoadedTls | undefined } {
  const load = (files: TlsFiles | undefined): LoadedTls | undefined => (files ? { files, pair: loadTlsPair(files) } : undefined);
  const { server, mqtt } = config;
  // The MQTT pair serves the TLS port and wss on the WebSocket port: read only when one of them is on.
  const mqttUsed = mqtt.tlsPort >= 0 || mqtt.wsPort >= 0;
  return { https: load(tlsFilesOf('server', server.tlsKey, server.tlsCert)), mqtt: mqttUsed ? load(tlsFilesOf('mqtt', mqtt.tlsKey, mqtt.tlsCert)) : undefined };
}

/** Reloads each pair on SIGHUP and when its files change, into the listeners that use it. */
function watchTls(deps: LifecycleDeps, tls: ReturnType<typeof loadTls>): void {
  const { runtime } = deps;
  const targets: TlsReloadTarget[] = [];
  if (tls.https) targets.push({ name: 'https', ...tls.https, apply: (pair) => runtime.listener?.setTlsPair(pair) });
  if (tls.mqtt) targets.push({ name: 'mqtt', ...tls.mqtt, apply: (pair) => runtime.mqtt?.setTlsPair(pair) });
  if (targets.length > 0) runtime.tls = watchTlsFiles({ targets, log: deps.log.child('tls') });
}

function scheduleJobs(deps: LifecycleDeps): void {
  const { config, jobs, clock, store, log } = deps;
  jobs.schedule('journal-prune', config.journal.pruneSchedule, (signal) => pruneJournal({ store, log: log.child('journal'), horizon: deps.horizon, signal }, clock.now()));
  if (deps.hasRetention) jobs.schedule('history-retention', config.history.retentionSchedule, (signal) => deps.temporal.applyRetention(clock.now(), signal));
  if (deps.hasRollups) jobs.schedule('history-rollups', config.history.rollupSchedule, (signal) => deps.temporal.applyRollups(clock.now(), signal));
  jobs.schedule('subscriptions-periodic', config.notifications.periodicSchedule, () => deps.notifier.runPeriodic(clock.now()));
  // NGSI-LD §5.11.7: a registration that expires by time (no request) still notifies its subscribers, once.
  jobs.schedule('registrations-expiry', config.notifications.periodicSchedule, () => deps.registrations.expire(clock.now()));
  jobs.schedule('commands-prune', config.commands.pruneSchedule, (signal) => deps.commands.prune(deps.commandsHorizon(clock.now()), signal));
  // NGSI-LD §4.22: on its schedule, when the earliest expiresAt comes, and once now (what expired while down).
  jobs.schedule('entities-expiry', config.entities.expirySchedule, (signal) => deps.entityExpiry.sweep(signal));
  deps.entityExpiry.start(deps.events, () => void jobs.run('entities-expiry'));
  jobs.schedule('wal-checkpoint', config.storage.checkpointSchedule, () => store.checkpoint('PASSIVE'));
  // Users and clients removed (scripts/idp.mjs writes while the broker runs): their tokens stop working.
  const { identity } = deps;
  if (identity) jobs.schedule('identity-subjects', config.application.identityProvider.subjectRefreshSchedule, () => identity.refreshSubjects());
}

/** Starts serving; resolves with the HTTP port. */
export async function listenAll(deps: LifecycleDeps): Promise<number> {
  const { config, log, runtime, http } = deps;
  scheduleJobs(deps);
  deps.diskBudget.start();
  // Loads the cached JWKS and starts fetching a fresh one; requests never wait for the network.
  if (deps.verifier) await deps.verifier.start();
  try {
    const tls = loadTls(config);
    const { headersTimeout, requestTimeout, keepAliveTimeout, maxConnections } = config.server;
    const limits = { headersTimeout, requestTimeout, keepAliveTimeout, maxConnections };
    runtime.listener = await listenHttp(http.app, {
      port: config.server.port, host: config.server.host, log: log.child('http'), limits,
      ...(http.upgrade ? { upgrade: http.upgrade } : {}),
      ...(tls.https ? { tls: tls.https.pair } : {}),
    });
    if (config.server.redirectPort >= 0) {
      runtime.redirect = await listenRedirect({
        port: config.server.redirectPort, host: config.server.host, httpsPort: runtime.listener.port, log: log.child('http'), limits,
      });
    }
    runtime.mqtt = await startMqttBroker({
      port: config.mqtt.port,
      host: config.mqtt.host,
      wsPort: config.mqtt.wsPort < 0 ? undefined : config.mqtt.wsPort,
      log: log.child('mqtt'),
      hooks: deps.mqttHooks,
      tls: tls.mqtt ? { ...tls.mqtt.pair, port: config.mqtt.tlsPort < 0 ? undefined : config.mqtt.tlsPort } : undefined,
      persistence: deps.store.mqttSessions,
      limits: {
        maxPacketBytes: config.mqtt.maxPacketBytes,
        connectTimeout: config.mqtt.clientConnectTimeout,
        maxConnectionsPerAddress: config.mqtt.maxConnectionsPerAddress,
        maxConnections: config.mqtt.maxConnections,
      },
      clock: deps.clock,
      commands: deps.commands,
    });
    watchTls(deps, tls);
  } catch (err) {
    // Nothing may keep the process alive when it cannot serve (a cron schedule would).
    await deps.jobs.stop();
    deps.diskBudget.stop();
    throw err;
  }
  runtime.httpPort = runtime.listener.port;
  deps.federation?.start();
  deps.homeAssistant?.start().catch((err: unknown) => log.error('home assistant discovery did not start', { err }));
  return runtime.listener.port;
}

/** Orderly shutdown: stop accepting, drain in-flight requests, flush writes, checkpoint, close. */
export async function closeAll(deps: LifecycleDeps): Promise<void> {
  const { config, runtime, store } = deps;
  if (runtime.closing) return;
  runtime.closing = true;
  // The upstream stops forwarding requests to the gateway before it stops answering them.
  await deps.federation?.withdraw();
  runtime.tls?.close();
  if (runtime.redirect) await runtime.redirect.close();
  if (runtime.listener) await runtime.listener.close(config.server.shutdownTimeout);
  // The gateway says it goes offline (retained) while the broker still runs.
  await deps.homeAssistant?.stop();
  if (runtime.mqtt) await runtime.mqtt.close();
  deps.entityExpiry.stop();
  await deps.jobs.stop();
  deps.diskBudget.stop();
  // What is not delivered stays queued for the next start.
  await deps.notifier.stop();
  // Open commands stay recorded: the next start sends the pending ones again.
  await deps.commands.stop();
  // The cursor stays where the upstream acknowledged: a batch cut short is sent again.
  await deps.federation?.stop(config.server.shutdownTimeout);
  await deps.mqttSender.close();
  deps.verifier?.close();
  await store.flush();
  store.close();
}
