// Process entry point: load config, build the broker, start it, and map SIGTERM/SIGINT to an
// orderly shutdown (exit 0 once drained).

import { ConfigError, loadConfig } from './config/index.js';
import { createLogger, systemClock } from './lib/index.js';
import { createBroker } from './server.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig({ argv: process.argv.slice(2), env: process.env });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`edgeld: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw err;
  }
  const log = createLogger(config.log.level);
  const broker = createBroker({ config, log, clock: systemClock });
  const port = await broker.listen();
  log.info('edgeld started', { http: `${config.server.host}:${port}`, storage: config.storage.dir, pid: process.pid });

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    broker.close().then(
      () => {
        log.info('stopped');
        process.exitCode = 0;
      },
      (err: unknown) => {
        log.error('shutdown failed', { err });
        process.exitCode = 1;
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`edgeld: failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
