// Shared test support for the jsonld module: an in-memory ContextPersistence, fixture contexts served
// by an injected fetch (never the network), an independent jsonld document loader, local HTTP servers.

import { readFileSync, readdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFixedClock, createHostAllowList, createOutboundFetch, silentLogger } from '../../src/lib/index.js';
import { createContextService } from '../../src/jsonld/index.js';
import type { ContextPersistence, ContextService, ContextServiceOptions, PersistedContext } from '../../src/jsonld/index.js';
import { loadBundledContexts } from '../../src/jsonld/bundled.js';
import type { DocumentLoader, JsonLdObject } from '../../src/jsonld/jsonld-api.js';
import { isJsonObject } from '../../src/jsonld/jsonld-api.js';

/** Fixture contexts are addressed under this origin (a reserved TLD: it never resolves). */
export const FIXTURE_ORIGIN = 'https://contexts.edgeld.test/';
const FIXTURES = new URL('../fixtures/', import.meta.url);

export function readJson(path: string): unknown {
  return JSON.parse(readFileSync(new URL(path, FIXTURES), 'utf8'));
}

export function readJsonObject(path: string): JsonLdObject {
  const value = readJson(path);
  if (!isJsonObject(value)) throw new Error(`${path} is not a JSON object`);
  return value;
}

/** Names of the entity fixtures (`<name>.jsonld` with a `<name>.expanded.jsonld` beside it). */
export function entityFixtureNames(): string[] {
  return readdirSync(new URL('entities/', FIXTURES))
    .filter((f) => f.endsWith('.jsonld') && !f.endsWith('.expanded.jsonld'))
    .map((f) => f.slice(0, -'.jsonld'.length))
    .sort();
}

export const expandedFixturePath = (name: string): URL => new URL(`entities/${name}.expanded.jsonld`, FIXTURES);

function fixtureContextText(url: string): string | undefined {
  if (!url.startsWith(FIXTURE_ORIGIN)) return undefined;
  try {
    return readFileSync(new URL('contexts/' + url.slice(FIXTURE_ORIGIN.length), FIXTURES), 'utf8');
  } catch {
    return undefined;
  }
}

export interface CountingFetch {
  fetch: typeof fetch;
  readonly calls: string[];
}

/** A fetch that serves test/fixtures/contexts under FIXTURE_ORIGIN and 404s everything else. */
export function createFixtureFetch(): CountingFetch {
  const calls: string[] = [];
  const fake = async (input: string | URL | Request): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    calls.push(url);
    const text = fixtureContextText(url);
    if (text === undefined) return new Response('not found', { status: 404 });
    return new Response(text, { status: 200, headers: { 'content-type': 'application/ld+json' } });
  };
  return { fetch: fake, calls };
}

/** An oracle for jsonld.expand/compact, independent of the service: bundled files and fixtures. */
export function createFixtureDocumentLoader(): DocumentLoader {
  const bundled = loadBundledContexts();
  return async (url) => {
    const known = bundled.find(url);
    if (known) return { contextUrl: null, documentUrl: url, document: structuredClone(known.processing) };
    const text = fixtureContextText(url);
    if (text === undefined) throw new Error(`no fixture for ${url}`);
    const document: unknown = JSON.parse(text);
    if (!isJsonObject(document)) throw new Error(`${url} is not a JSON object`);
    return { contextUrl: null, documentUrl: url, document };
  };
}

export interface MemoryPersistence extends ContextPersistence {
  readonly rows: Map<string, PersistedContext>;
}

export function createMemoryPersistence(): MemoryPersistence {
  const rows = new Map<string, PersistedContext>();
  return {
    rows,
    get: (url) => rows.get(url),
    getById: (id) => [...rows.values()].find((r) => r.id === id),
    put: (ctx) => {
      rows.set(ctx.url, { ...ctx });
    },
    delete: (id) => {
      const row = [...rows.values()].find((r) => r.id === id);
      return row !== undefined && rows.delete(row.url);
    },
    list: () => [...rows.values()],
  };
}

export const START = Date.UTC(2024, 4, 1);

/** The outbound client of the tests' context services: public addresses, and 127.0.0.1 where the local servers listen. */
export const LOOPBACK_FETCH = createOutboundFetch(createHostAllowList(['127.0.0.1'], true));

export function createTestService(overrides: Partial<ContextServiceOptions> = {}): ContextService {
  return createContextService({
    persistence: createMemoryPersistence(),
    allowRemote: true,
    fetchTimeoutMs: 1000,
    maxBytes: 64 * 1024,
    log: silentLogger,
    clock: createFixedClock(START),
    fetch: LOOPBACK_FETCH,
    ...overrides,
  });
}

export interface LocalServer {
  /** Base URL ending in `/`. */
  readonly url: string;
  readonly hits: string[];
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 with an ephemeral port. */
export async function startLocalServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<LocalServer> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // NOTE: cast because server.address() is typed for pipes too; a TCP listen gives AddressInfo.
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    hits,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

export function asArray<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}
