// Starts a server under test as a child process, waits for GET /ready (over HTTPS for one that serves it), and stops it (SIGTERM, then SIGKILL).

import { spawn, type ChildProcess } from 'node:child_process';
import { get, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const TAIL_LINES = 40;

export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  /** Set when it serves HTTPS: the CA its certificate is signed by. */
  readonly tls?: { readonly ca: Buffer };
  /** The last lines the process wrote to stdout and stderr. */
  tail(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with how it ended. */
  stop(graceMs: number): Promise<string>;
  /** Immediate SIGKILL, for exit handlers that cannot wait. */
  kill(): void;
}

export interface StartOptions {
  readonly name: string;
  readonly script: string;
  /** V8 and Node flags put before the script, as `npm start` does. */
  readonly nodeFlags: readonly string[];
  readonly port: number;
  readonly env: Readonly<Record<string, string>>;
  readonly readyTimeoutMs: number;
  /** Milliseconds between two looks at GET /ready (default 100). */
  readonly pollMs?: number;
  /** It serves HTTPS with a certificate of this CA: /ready is asked over HTTPS. */
  readonly tls?: { readonly ca: Buffer };
  /** Called as soon as the process exists, so an interrupted run can still stop it. */
  readonly register: (server: ServerProcess) => void;
}

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function isReady(port: number, tls: StartOptions['tls']): Promise<boolean> {
  return new Promise((resolve) => {
    const options = { host: '127.0.0.1', port, path: '/ready', timeout: 1_000 };
    const onResponse = (res: IncomingMessage): void => {
      res.resume();
      resolve(res.statusCode === 200);
    };
    const req = tls === undefined ? get(options, onResponse) : httpsGet({ ...options, ca: tls.ca }, onResponse);
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function describeExit(child: ChildProcess): string {
  return child.signalCode ? `killed by ${child.signalCode}` : `exit code ${String(child.exitCode)}`;
}

/** Spawns `node <flags> <script>` and resolves once GET /ready answers 200; rejects with its output otherwise. */
export async function startServer(options: StartOptions): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...options.nodeFlags, options.script], {
    // A minimal environment: the caller's config variables must not leak into the server under test.
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer): void => {
    lines.push(...chunk.toString('utf8').split('\n').filter((l) => l.trim() !== ''));
    if (lines.length > TAIL_LINES) lines.splice(0, lines.length - TAIL_LINES);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let spawnError: Error | undefined;
  child.on('error', (err) => {
    spawnError = err;
  });

  const server: ServerProcess = {
    name: options.name,
    pid: child.pid ?? -1,
    port: options.port,
    ...(options.tls ? { tls: options.tls } : {}),
    tail: () => lines.join('\n'),
    stop: async (graceMs) => {
      if (child.exitCode !== null || child.signalCode !== null) return `had already ended (${describeExit(child)})`;
      child.kill('SIGTERM');
      if (await waitForExit(child, graceMs)) return `stopped on SIGTERM (${describeExit(child)})`;
      child.kill('SIGKILL');
      await waitForExit(child, 5_000);
      return `did not stop within ${graceMs} ms of SIGTERM; killed`;
    },
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };

  options.register(server);
  const deadline = Date.now() + options.readyTimeoutMs;
  while (Date.now() < deadline) {
    if (spawnError || child.exitCode !== null || child.signalCode !== null) {
      const why = spawnError ? spawnError.message : describeExit(child);
      throw new Error(`${options.name} ended before it was ready (${why}):\n${server.tail()}`);
    }
    if (await isReady(options.port, options.tls)) return server;
    await sleep(options.pollMs ?? 100);
  }
  server.kill();
  throw new Error(`${options.name} not ready within ${options.readyTimeoutMs} ms:\n${server.tail()}`);
}
