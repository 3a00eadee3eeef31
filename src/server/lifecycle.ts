// Starting and stopping the broker: listen() schedules the jobs, starts the HTTP listener and the
// embedded MQTT broker, then the federation drain; close() disposes in reverse order.

import { readFile } from 'node:fs/promises';
import type { IdentityProvider, TokenVerifier } from '../auth/index.js';
import type { Config } from '../config/index.js';
import { pruneJournal } from '../entities/index.js';
import type { Federation } from '../federation/index.js';
import { listenHttp } from '../http/index.js';
import type { JobScheduler } from '../jobs/index.js';
import type { Clock, Logger } from '../lib/index.js';
import { startMqttBroker, type MqttAccess } from '../mqtt/index.js';
import type { Store } from '../store/index.js';
import type { MqttSender, Notifier } from '../subscriptions/index.js';
import type { TemporalService } from '../temporal/index.js';
import type { HttpParts } from './http.js';
import type { Runtime } from './runtime.js';

export interface LifecycleDeps {
  config: Config;
  log: Logger;
  clock: Clock;
  store: Store;
  runtime: Runtime;
  http: HttpParts;
  jobs: JobScheduler;
  temporal: TemporalService;
  /** Whether history.retention is set (the retention job runs). */
  hasRetention: boolean;
  /** The instant before which a journal row is pruned whether read or not. */
  horizon(now: number): number;
  notifier: Notifier;
  mqttSender: MqttSender;
  mqttHooks: MqttAccess;
  federation: Federation | undefined;
  verifier: TokenVerifier | undefined;
  identity: IdentityProvider | undefined;
}

/** A file an option names; a failure names the option. */
async function readOption(option: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new Error(`${option}: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

function scheduleJobs(deps: LifecycleDeps): void {
  const { config, jobs, clock, store, log } = deps;
  jobs.schedule('journal-prune', config.journal.pruneSchedule, (signal) => pruneJournal({ store, log: log.child('journal'), horizon: deps.horizon, signal }, clock.now()));
  if (deps.hasRetention) jobs.schedule('history-retention', config.history.retentionSchedule, (signal) => deps.temporal.applyRetention(clock.now(), signal));
  jobs.schedule('subscriptions-periodic', config.notifications.periodicSchedule, () => deps.notifier.runPeriodic(clock.now()));
  jobs.schedule('wal-checkpoint', config.storage.checkpointSchedule, () => store.checkpoint('PASSIVE'));
  // Users and clients removed (scripts/idp.mjs writes while the broker runs): their tokens stop working.
  const { identity } = deps;
  if (identity) jobs.schedule('identity-subjects', config.application.identityProvider.subjectRefreshSchedule, () => identity.refreshSubjects());
}

/** Starts serving; resolves with the HTTP port. */
export async function listenAll(deps: LifecycleDeps): Promise<number> {
  const { config, log, runtime, http } = deps;
  scheduleJobs(deps);
  // Loads the cached JWKS and starts fetching a fresh one; requests never wait for the network.
  if (deps.verifier) await deps.verifier.start();
  try {
    const { headersTimeout, requestTimeout, keepAliveTimeout, maxConnections } = config.server;
    runtime.listener = await listenHttp(http.app, {
      port: config.server.port, host: config.server.host, log: log.child('http'), limits: { headersTimeout, requestTimeout, keepAliveTimeout, maxConnections },
      ...(http.upgrade ? { upgrade: http.upgrade } : {}),
    });
    runtime.mqtt = await startMqttBroker({
      port: config.mqtt.port,
      host: config.mqtt.host,
      wsPort: config.mqtt.wsPort < 0 ? undefined : config.mqtt.wsPort,
      log: log.child('mqtt'),
      hooks: deps.mqttHooks,
      tls: config.mqtt.tlsPort < 0 ? undefined : {
        port: config.mqtt.tlsPort, key: await readOption('mqtt.tls-key', config.mqtt.tlsKey), cert: await readOption('mqtt.tls-cert', config.mqtt.tlsCert),
      },
      persistence: deps.store.mqttSessions,
      limits: {
        maxPacketBytes: config.mqtt.maxPacketBytes,
        connectTimeout: config.mqtt.clientConnectTimeout,
        maxConnectionsPerAddress: config.mqtt.maxConnectionsPerAddress,
        maxConnections: config.mqtt.maxConnections,
      },
      clock: deps.clock,
    });
  } catch (err) {
    // Nothing may keep the process alive when it cannot serve (a cron schedule would).
    await deps.jobs.stop();
    throw err;
  }
  runtime.httpPort = runtime.listener.port;
  deps.federation?.start();
  return runtime.listener.port;
}

/** Orderly shutdown: stop accepting, drain in-flight requests, flush writes, checkpoint, close. */
export async function closeAll(deps: LifecycleDeps): Promise<void> {
  const { config, runtime, store } = deps;
  if (runtime.closing) return;
  runtime.closing = true;
  if (runtime.listener) await runtime.listener.close(config.server.shutdownTimeout);
  if (runtime.mqtt) await runtime.mqtt.close();
  await deps.jobs.stop();
  // What is not delivered stays queued for the next start.
  await deps.notifier.stop();
  // The cursor stays where the upstream acknowledged: a batch cut short is sent again.
  await deps.federation?.stop(config.server.shutdownTimeout);
  await deps.mqttSender.close();
  deps.verifier?.close();
  await store.flush();
  store.close();
}
