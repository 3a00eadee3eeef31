// Where context documents come from, in order: bundled files, then memory, then persistence, then
// (when allowed) one shared bounded fetch whose result is persisted as 'Cached'. Also registers
// 'ImplicitlyCreated' contexts and keeps usage statistics (NGSI-LD §5.13).

import { randomUUID } from 'node:crypto';
import type { Clock, Logger } from '../lib/index.js';
import type { BundledContexts } from './bundled.js';
import { canonicalJson, shortHash } from './canonical-json.js';
import { contextUnavailable, fetchContextDocument, type FetchLimits } from './fetch-context.js';
import { isJsonObject, type JsonLdObject } from './jsonld-api.js';
import { createLru } from '../lib/index.js';
import type { ContextPersistence, PersistedContext } from './types.js';

/** Path under which the broker serves contexts by id (NGSI-LD §5.13). */
export const HOSTED_CONTEXT_PATH = '/ngsi-ld/v1/jsonldContexts/';
const HOSTED_ID = /\/ngsi-ld\/v1\/jsonldContexts\/([^/?#]+)$/;
const MEMORY_SIZE = 256;
const STATS_SIZE = 4096;

export interface StoredContext {
  id: string;
  url: string;
  kind: 'Hosted' | 'Cached' | 'ImplicitlyCreated';
  createdAt: number;
  document: JsonLdObject;
}

export interface UsageStats {
  lastUsage: number;
  numberOfHits: number;
}

export interface ContextStoreOptions extends FetchLimits {
  persistence: ContextPersistence;
  bundled: BundledContexts;
  allowRemote: boolean;
  log: Logger;
  clock: Clock;
}

export interface ContextStore {
  /** The document at a URL; throws LdContextNotAvailableError when it cannot be had. */
  load(url: string): Promise<JsonLdObject>;
  /** A stored (not bundled) context by id, URL or hosted URL. */
  find(idOrUrl: string): StoredContext | undefined;
  /** What persistence holds, without the documents. */
  list(): Array<Omit<StoredContext, 'document'>>;
  /** Registers a composite context under its deterministic id; returns the id. */
  registerImplicit(bodyContext: unknown): string;
  /** Stores a context a client added (kind Hosted) under a new id; returns the id. */
  addHosted(context: unknown): string;
  /** Fetches a Cached context again and replaces the stored copy. */
  refetch(url: string): Promise<void>;
  remove(ctx: StoredContext): void;
  recordUse(url: string): void;
  stats(url: string): UsageStats | undefined;
}

/** The id in a URL ending in /ngsi-ld/v1/jsonldContexts/{id}, whatever its origin. */
export function hostedIdOf(url: string): string | undefined {
  const match = HOSTED_ID.exec(url);
  if (match?.[1] === undefined) return undefined;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return undefined;
  }
}

/** A persisted row as a stored context; undefined (and a warning) when its body is not a JSON object. */
function storedOf(row: PersistedContext, log: Logger): StoredContext | undefined {
  let document: unknown;
  try {
    document = JSON.parse(row.body);
  } catch {
    document = undefined;
  }
  if (!isJsonObject(document)) {
    log.warn('ignoring a persisted context that is not a JSON object', { id: row.id, url: row.url });
    return undefined;
  }
  return { id: row.id, url: row.url, kind: row.kind, createdAt: row.createdAt, document };
}

/** The reason of a failed load (the cause its generic error carries), for the log. */
function reasonOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? err.cause.message : err.message;
}

export function createContextStore(opts: ContextStoreOptions): ContextStore {
  const { persistence, bundled, log, clock } = opts;
  const memory = createLru<string, StoredContext>(MEMORY_SIZE);
  const usage = createLru<string, UsageStats>(STATS_SIZE);
  const inFlight = new Map<string, Promise<StoredContext>>();

  const fromPersisted = (row: PersistedContext | undefined): StoredContext | undefined => {
    const stored = row === undefined ? undefined : storedOf(row, log);
    if (stored !== undefined) memory.set(stored.url, stored);
    return stored;
  };

  const find = (idOrUrl: string): StoredContext | undefined => {
    const hostedId = hostedIdOf(idOrUrl);
    if (hostedId !== undefined) return find(hostedId);
    return memory.get(idOrUrl) ?? fromPersisted(persistence.get(idOrUrl)) ?? fromPersisted(persistence.getById(idOrUrl));
  };

  const persist = (stored: StoredContext, body: string): void => {
    memory.set(stored.url, stored);
    const { id, url, kind, createdAt } = stored;
    try {
      persistence.put({ id, url, kind, createdAt, body });
    } catch (err) {
      // Served from memory until restart; the next miss after a restart fetches again.
      log.warn('could not persist a context', { id, url, err });
    }
  };

  const fetchAndStore = async (url: string): Promise<StoredContext> => {
    if (!opts.allowRemote) {
      const refused = contextUnavailable(url, 'remote contexts are disabled');
      log.warn('could not load a remote context', { url, reason: reasonOf(refused) });
      throw refused;
    }
    try {
      const fetched = await fetchContextDocument(url, opts);
      const stored: StoredContext = { id: shortHash(url), url, kind: 'Cached', createdAt: clock.now(), document: fetched.document };
      persist(stored, fetched.body);
      log.info('cached a remote context', { url, id: stored.id, bytes: fetched.body.length });
      return stored;
    } catch (err) {
      // NOTE: the caller sees one detail whatever went wrong; the reason is for the operator.
      log.warn('could not load a remote context', { url, reason: reasonOf(err) });
      throw err;
    }
  };

  const load = async (url: string): Promise<JsonLdObject> => {
    const hostedId = hostedIdOf(url);
    const known = bundled.find(url) ?? (hostedId === undefined ? undefined : bundled.findById(hostedId));
    if (known) return known.processing;
    const stored = find(url);
    if (stored) return stored.document;
    let pending = inFlight.get(url);
    if (pending === undefined) {
      pending = fetchAndStore(url).finally(() => inFlight.delete(url));
      inFlight.set(url, pending);
    }
    return (await pending).document;
  };

  return {
    load,
    find,
    list: () => persistence.list().map(({ id, url, kind, createdAt }) => ({ id, url, kind, createdAt })),
    registerImplicit(bodyContext) {
      const id = shortHash(canonicalJson(bodyContext));
      if (find(id) !== undefined) return id;
      const document = { '@context': bodyContext };
      const stored: StoredContext = { id, url: HOSTED_CONTEXT_PATH + id, kind: 'ImplicitlyCreated', createdAt: clock.now(), document };
      persist(stored, JSON.stringify(document));
      return id;
    },
    addHosted(context) {
      const id = randomUUID();
      const document = { '@context': context };
      const stored: StoredContext = { id, url: HOSTED_CONTEXT_PATH + id, kind: 'Hosted', createdAt: clock.now(), document };
      persist(stored, JSON.stringify(document));
      return id;
    },
    refetch: async (url) => {
      await fetchAndStore(url);
    },
    remove(ctx) {
      persistence.delete(ctx.id);
      memory.delete(ctx.url);
      usage.delete(ctx.url);
    },
    recordUse(url) {
      const stats = usage.get(url);
      usage.set(url, { lastUsage: clock.now(), numberOfHits: (stats?.numberOfHits ?? 0) + 1 });
    },
    stats: (url) => usage.get(url),
  };
}
