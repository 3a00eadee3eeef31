// Process entry point: load config, build the broker, start it, map SIGTERM/SIGINT to an orderly
// shutdown (exit 0 once drained) and SIGHUP to a reload of the TLS certificates. What stops start-up
// is one log line and a distinct exit code. A start after an unclean stop (kill -9, power cut) says
// so, and what the recovery resumes with.

import { join } from 'node:path';
import { ConfigError, loadConfig } from './config/index.js';
import { createLogger, resolveLogFormat, systemClock, type Logger } from './lib/index.js';
import { createBroker, type Broker } from './server.js';
import { RedirectListenError } from './http/index.js';
import { MqttListenError } from './mqtt/index.js';
import { StoreFileModeError, StoreLockedError, describeRecovery, readRecovery, readRunState, type RunState } from './store/index.js';

/** Exit codes besides 0 (stopped), 1 (unexpected failure) and 2 (bad configuration, insecure file modes). */
const EXIT_CONFIG = 2;
const EXIT_STORE_LOCKED = 3;
const EXIT_LISTEN_FAILED = 4;
const EXIT_MQTT_LISTEN_FAILED = 5;

/** A listen error an operator can act on, in one line; undefined for anything else. */
function listenProblem(err: unknown, at: { host: string; port: number; portOption: string; hostOption: string }): string | undefined {
  const code = err instanceof Error && 'code' in err ? String(err.code) : '';
  switch (code) {
    case 'EADDRINUSE':
      return `port ${at.port} on ${at.host} is already in use (${at.portOption})`;
    case 'EACCES':
      return `not allowed to listen on port ${at.port} (${at.portOption}; ports below 1024 need privileges)`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${at.hostOption} '${at.host}' is not an address of this machine`;
    default:
      return undefined;
  }
}

/** Logs that the last stop was unclean, and what recovery does, when it was; then marks this run as started. */
function beginRun(runState: RunState, dbPath: string, log: Logger): void {
  const { unclean } = runState;
  if (unclean !== undefined) {
    const last = { lastPid: unclean.pid ?? null, lastStartedAt: unclean.startedAt ?? null, walBytes: unclean.walBytes };
    let recovery;
    try {
      recovery = readRecovery(dbPath);
    } catch (err) {
      log.warn('the last stop was unclean (killed or power lost); what recovery resumes with is unknown', { ...last, err });
    }
    if (recovery) {
      log.warn('the last stop was unclean (killed or power lost); recovered', {
        ...last, journalReaders: recovery.readers, notificationsQueued: recovery.notificationsQueued, federationParked: recovery.federationParked,
        recovery: describeRecovery(unclean, recovery),
      });
    }
  }
  runState.begin(systemClock.now());
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig({ argv: process.argv.slice(2), env: process.env });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`edgeld: ${err.message}\n`);
      process.exitCode = EXIT_CONFIG;
      return;
    }
    throw err;
  }
  const log = createLogger(config.log.level, 'edgeld', undefined, resolveLogFormat(config.log.format));
  let broker: Broker;
  let port: number;
  // NOTE: read before the database is opened (opening replays the WAL); acted on once it is ours.
  const dbPath = join(config.storage.dir, 'edgeld.db');
  const runState = readRunState(dbPath);
  try {
    broker = createBroker({ config, log, clock: systemClock });
  } catch (err) {
    if (err instanceof StoreFileModeError) {
      log.error('cannot start: a store file is readable by other users', { storage: config.storage.dir, reason: err.message });
      process.exitCode = EXIT_CONFIG;
      return;
    }
    if (!(err instanceof StoreLockedError)) throw err;
    log.error('cannot start: the data directory is in use', { storage: config.storage.dir, reason: err.message });
    process.exitCode = EXIT_STORE_LOCKED;
    return;
  }
  beginRun(runState, dbPath, log);
  try {
    port = await broker.listen();
  } catch (err) {
    if (err instanceof MqttListenError) {
      const problem = listenProblem(err.cause, { host: err.host, port: err.port, portOption: err.option, hostOption: 'mqtt.host' });
      log.error('cannot start: the MQTT port cannot be opened', { reason: problem ?? err.message });
      await broker.close();
      runState.end();
      process.exitCode = EXIT_MQTT_LISTEN_FAILED;
      return;
    }
    if (err instanceof RedirectListenError) {
      const problem = listenProblem(err.cause, { host: err.host, port: err.port, portOption: 'server.redirect-port', hostOption: 'server.host' });
      log.error('cannot start: the HTTP redirect port cannot be opened', { reason: problem ?? err.message });
      await broker.close();
      runState.end();
      process.exitCode = EXIT_LISTEN_FAILED;
      return;
    }
    const problem = listenProblem(err, { host: config.server.host, port: config.server.port, portOption: 'server.port', hostOption: 'server.host' });
    if (problem === undefined) throw err;
    log.error('cannot start: the HTTP port cannot be opened', { reason: problem });
    broker.store.close();
    runState.end();
    process.exitCode = EXIT_LISTEN_FAILED;
    return;
  }
  log.info('edgeld started', {
    http: `${config.server.host}:${port}`,
    mqtt: `${config.mqtt.host}:${broker.mqttPort}`,
    ...(broker.mqttWsPort === undefined ? {} : { mqttWs: `${config.mqtt.host}:${broker.mqttWsPort}` }),
    ...(broker.isHttps ? { https: true } : {}),
    ...(broker.redirectPort === undefined ? {} : { redirect: `${config.server.host}:${broker.redirectPort}` }),
    storage: config.storage.dir, pid: process.pid,
  });

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    broker.close().then(
      () => {
        runState.end();
        log.info('stopped');
        process.exitCode = 0;
      },
      (err: unknown) => {
        log.error('shutdown failed', { err });
        process.exitCode = 1;
      },
    );
  };
  // NOTE: `systemctl reload edgeld` (ExecReload) sends SIGHUP; without a listener it would end the process.
  process.on('SIGHUP', () => {
    if (stopping) return;
    if (!broker.reloadTls()) log.info('SIGHUP: no TLS certificate to reload');
  });
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`edgeld: failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
