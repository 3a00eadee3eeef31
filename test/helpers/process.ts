// Starts the real broker process (node dist/main.js) on ephemeral ports with a temp data dir,
// and waits for its start-up line; bounded waits only.

import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export interface BrokerProcess {
  child: ChildProcess;
  port: number;
  /** The embedded MQTT broker's bound TCP port. */
  mqttPort: number;
  base: string;
  stderr(): string;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
}

/** `umask`: the file mode creation mask the process starts with (octal text such as '022'), set by a shell. */
export async function startBrokerProcess(env: Record<string, string>, timeoutMs = 15_000, opts: { umask?: string } = {}): Promise<BrokerProcess> {
  const [command, args] = opts.umask === undefined
    ? [process.execPath, [MAIN]]
    : ['/bin/sh', ['-c', `umask ${opts.umask} && exec "$0" "$1"`, process.execPath, MAIN]];
  const child = spawn(command, args, {
    env: { PATH: process.env['PATH'] ?? '', SERVER_HOST: '127.0.0.1', SERVER_PORT: '0', MQTT_HOST: '127.0.0.1', MQTT_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  const [port, mqttPort] = await new Promise<[number, number]>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A broker that did not report its start is killed, so a failed test leaves no process behind.
      child.kill('SIGKILL');
      reject(new Error(`broker did not start in ${timeoutMs} ms:\n${err}`));
    }, timeoutMs);
    let started = false;
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (started) return;
      const m = /"msg":"edgeld started","http":"[^"]*:(\d+)","mqtt":"[^"]*:(\d+)"/.exec(err);
      if (m) {
        started = true;
        clearTimeout(timer);
        resolve([Number(m[1]), Number(m[2])]);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`broker exited (${code}) before start:\n${err}`));
    });
  });
  return { child, port, mqttPort, base: `http://127.0.0.1:${port}`, stderr: () => err, exited };
}

/** Awaits a promise for at most `ms`. */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Processes a test file adds to the set are killed (SIGKILL) after each test, and waited for. */
export function killedAfterEach(): Set<BrokerProcess> {
  const running = new Set<BrokerProcess>();
  afterEach(async () => {
    for (const p of running) {
      p.child.kill('SIGKILL');
      await within(p.exited, 5_000, 'process exit');
    }
    running.clear();
  });
  return running;
}
