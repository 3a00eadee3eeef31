// Test broker: the real app over real SQLite (':memory:' or a temp file), a fixed clock, and a
// local HTTP server for user @contexts. Only 127.0.0.1 is ever contacted.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfig, type Config } from '../../src/config/index.js';
import { createFixedClock, silentLogger, type Logger } from '../../src/lib/index.js';
import { createBroker, type Broker } from '../../src/server.js';

export const T0 = Date.parse('2026-05-01T10:00:00.000Z');

export interface TestBroker {
  broker: Broker;
  clock: ReturnType<typeof createFixedClock>;
  request(method: string, path: string, init?: { body?: unknown; headers?: Record<string, string>; raw?: string }): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body (undefined when empty). */
  json: any; // eslint-disable-line -- test convenience: assertions walk arbitrary JSON
}

export type ConfigPatch = { [K in keyof Config]?: Partial<Config[K]> };

/** A response read whole: its text, and its JSON when it is JSON. */
export async function readResponse(res: Response): Promise<TestResponse> {
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export function testConfig(patch: ConfigPatch = {}): Config {
  const base = defaultConfig();
  const out = { ...base } as Record<string, unknown>; // NOTE: shallow merge per section below
  for (const [k, v] of Object.entries(patch)) {
    out[k] = { ...(base as unknown as Record<string, object>)[k], ...(v as object) };
  }
  return out as unknown as Config; // NOTE: built from a valid default with typed sections
}

export async function startTestBroker(opts: { config?: ConfigPatch; dbPath?: string; log?: Logger } = {}): Promise<TestBroker> {
  const clock = createFixedClock(T0);
  // NOTE: ephemeral ports on loopback, so tests that call listen() never collide with each other or a
  // broker on the default ports.
  // NOTE: the local context servers listen on 127.0.0.1, a loopback address the broker fetches from
  // only when listed: listed unless a test says otherwise.
  const config = testConfig({
    ...opts.config, mqtt: { port: 0, host: '127.0.0.1', ...opts.config?.mqtt }, server: { port: 0, host: '127.0.0.1', ...opts.config?.server },
    contexts: { allowedHosts: '127.0.0.1', ...opts.config?.contexts },
    log: { level: 'silent' },
  });
  const broker = createBroker({ config, log: opts.log ?? silentLogger, clock, dbPath: opts.dbPath ?? ':memory:' });
  return {
    broker,
    clock,
    async request(method, path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      let body: string | undefined = init.raw;
      if (init.body !== undefined) {
        body = JSON.stringify(init.body);
        if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
      }
      return readResponse(await broker.app.request(`http://127.0.0.1${path}`, { method, headers, ...(body !== undefined ? { body } : {}) }));
    },
    close: () => broker.close(),
  };
}

/** A local HTTP server serving @context documents; counts hits per path. */
export interface ContextServer {
  url(path: string): string;
  hits: Map<string, number>;
  set(path: string, body: unknown, status?: number): void;
  close(): Promise<void>;
}

export async function startContextServer(): Promise<ContextServer> {
  const docs = new Map<string, { body: string; status: number }>();
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const doc = docs.get(path);
    if (!doc) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(doc.status, { 'Content-Type': 'application/ld+json' }).end(doc.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port; // NOTE: a TCP server's address is AddressInfo
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    hits,
    set: (path, body, status = 200) => docs.set(path, { body: JSON.stringify(body), status }),
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

export function tempDir(prefix = 'edgeld-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** The user context used by API tests. */
export const USER_CONTEXT = {
  '@context': {
    schema: 'https://schema.org/',
    ex: 'https://example.org/ns#',
    Building: 'https://example.org/ns#Building',
    Sensor: 'https://example.org/ns#Sensor',
    temperature: 'https://example.org/ns#temperature',
    humidity: 'https://example.org/ns#humidity',
    name: 'https://schema.org/name',
    address: 'https://schema.org/address',
    streetAddress: 'https://schema.org/streetAddress',
    owner: 'https://example.org/ns#owner',
    isPartOf: 'https://example.org/ns#isPartOf',
    accuracy: 'https://example.org/ns#accuracy',
    category: 'https://example.org/ns#category',
    config: 'https://example.org/ns#config',
    readings: 'https://example.org/ns#readings',
    sensors: 'https://example.org/ns#sensors',
    commercial: 'https://example.org/ns#commercial',
  },
};
