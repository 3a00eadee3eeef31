// Several real edgeld processes side by side for multi-process tests (federation, registrations,
// distributed operations): each `node dist/main.js` with a data directory of its own under one temp
// directory and ephemeral ports on 127.0.0.1; a later process's environment may name the earlier
// ones (B's federation.upstream.url is A). Killed after each test; bounded waits only.

import { afterAll } from 'vitest';
import { tempDir } from './broker.js';
import { killedAfterEach, startBrokerProcess, within, type BrokerProcess } from './process.js';

/** One process's environment, or one made from the processes started before it. */
export type ProcessEnv = Record<string, string> | ((before: readonly BrokerProcess[]) => Record<string, string>);

export interface EdgeldProcesses {
  /** Starts processes one after the other, each with a fresh data directory; resolves once all serve. */
  start(...envs: ProcessEnv[]): Promise<BrokerProcess[]>;
  /** Sends SIGTERM and resolves with the exit code once it has stopped (orderly shutdown). */
  stop(p: BrokerProcess): Promise<number | string>;
  /** kill -9. */
  kill(p: BrokerProcess): Promise<void>;
  /** The data directory of a process (STORAGE_DIR): give it to a later start to restart on the same data. */
  dataDir(p: BrokerProcess): string;
}

export interface CallReply {
  status: number;
  headers: Headers;
  json: any; // eslint-disable-line -- test convenience: assertions walk arbitrary JSON
}

/**
 * The processes of one test file. Call at the top level of the file: processes still running after a
 * test are killed, and the data directories are removed after the file.
 */
export function edgeldProcesses(prefix = 'edgeld-e2e-'): EdgeldProcesses {
  const dir = tempDir(prefix);
  const running = killedAfterEach();
  afterAll(() => dir.remove());
  let started = 0;
  const dirs = new Map<BrokerProcess, string>();
  return {
    async start(...envs) {
      const out: BrokerProcess[] = [];
      for (const env of envs) {
        const own = typeof env === 'function' ? env(out) : env;
        const withDir = { STORAGE_DIR: `${dir.path}/node-${started++}`, ...own };
        const p = await startBrokerProcess(withDir);
        dirs.set(p, withDir.STORAGE_DIR);
        running.add(p);
        out.push(p);
      }
      return out;
    },
    async stop(p) {
      p.child.kill('SIGTERM');
      const code = await within(p.exited, 15_000, 'SIGTERM');
      running.delete(p);
      return code;
    },
    async kill(p) {
      p.child.kill('SIGKILL');
      await within(p.exited, 5_000, 'kill -9');
      running.delete(p);
    },
    dataDir: (p) => dirs.get(p) ?? '',
  };
}

/** A JSON request to a process (body as application/json). */
export async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<CallReply> {
  const res = await fetch(base + path, {
    method, headers: { ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, json };
}

/**
 * The environment of a gateway that registers with `upstream` (federation.register on) and forwards
 * none of its changes (federation.register.only): the upstream reaches its entities only through the
 * registration.
 */
export const registeringWith = (upstream: BrokerProcess, env: Record<string, string> = {}): Record<string, string> => ({
  FEDERATION_UPSTREAM_URL: upstream.base, FEDERATION_REGISTER_ENABLED: 'true', FEDERATION_REGISTER_ONLY: 'true', FEDERATION_REGISTER_DEBOUNCE: '50',
  ...env,
});
