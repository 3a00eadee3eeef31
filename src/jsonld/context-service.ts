// The context service: resolves request contexts to term maps (bounded cache, one jsonld run per
// miss, shared between concurrent callers) and manages cached contexts (NGSI-LD §5.13).

import { BadRequestDataError } from '../ngsi/index.js';
import { loadBundledContexts, type BundledContext, type BundledContexts } from './bundled.js';
import { compileContext, type CompiledContext } from './compile.js';
import { CORE_REQUEST, toContextRequest, type ContextRequest } from './context-request.js';
import { createContextStore, HOSTED_CONTEXT_PATH, hostedIdOf, type ContextStore, type StoredContext } from './context-store.js';
import { processCoreContextSync } from './core-terms.js';
import { createHostAllowList, createLru, createOutboundFetch } from '../lib/index.js';
import { createTermMapper } from './term-mapper.js';
import { draftTermMaps, type TermMaps } from './term-maps.js';
import type {
  ContextEntryInfo, ContextService, ContextServiceOptions, ResolvedContext,
} from './types.js';

const RESOLVED_CACHE_SIZE = 512;

interface CacheEntry {
  resolved: ResolvedContext;
  /** Stored contexts this one was built from, whose usage it counts. */
  usedUrls: readonly string[];
}

function toResolved(request: ContextRequest, maps: TermMaps, hostedId: string | undefined): ResolvedContext {
  const { expandTerm, compactIri } = createTermMapper(maps);
  const { key, bodyContext, processed, linkUrl } = request;
  return { key, bodyContext, processed, linkUrl, hostedId, expandTerm, compactIri };
}

/** The core term maps, built without jsonld's asynchronous processing (it has no ambiguous IRIs). */
function coreTermMaps(core: BundledContext): TermMaps {
  const draft = draftTermMaps(processCoreContextSync(core.processing));
  if (draft.ambiguous.length > 0) throw new Error('the core context maps several terms to one IRI');
  return draft.maps;
}

/**
 * The management of contexts (NGSI-LD §5.13): list, info, add, get, delete and reload. `invalidate`
 * forgets every resolved context, after a stored one went or changed.
 */
function createContextManagement(bundled: BundledContexts, store: ContextStore, invalidate: () => void):
  Pick<ContextService, 'list' | 'info' | 'add' | 'get' | 'delete'> {
  const findBundled = (idOrUrl: string): BundledContext | undefined =>
    bundled.find(idOrUrl) ?? bundled.findById(hostedIdOf(idOrUrl) ?? idOrUrl);

  const infoOf = (ctx: Omit<StoredContext, 'document'>): ContextEntryInfo => {
    const stats = store.stats(ctx.url);
    const info: ContextEntryInfo = { id: ctx.id, url: ctx.url, kind: ctx.kind, createdAt: ctx.createdAt, numberOfHits: stats?.numberOfHits ?? 0 };
    if (stats) info.lastUsage = stats.lastUsage;
    return info;
  };

  return {
    list({ kind }) {
      const hosted: ContextEntryInfo[] = bundled.all.map((b) => ({ id: b.id, url: b.url, kind: 'Hosted' }));
      const all = [...hosted, ...store.list().map(infoOf)];
      return kind === undefined ? all : all.filter((c) => c.kind === kind);
    },
    info(idOrUrl) {
      const hosted = findBundled(idOrUrl);
      if (hosted) return { id: hosted.id, url: hosted.url, kind: 'Hosted' };
      const stored = store.find(idOrUrl);
      return stored === undefined ? undefined : infoOf(stored);
    },
    async add(context) {
      // Processed as a request context would be: invalid JSON-LD and unavailable remote contexts
      // fail here, and the remote ones it names are cached on the way.
      await compileContext([...toContextRequest(context).processed], store.load);
      return store.addHosted(context);
    },
    get(idOrUrl) {
      const document = findBundled(idOrUrl)?.body ?? store.find(idOrUrl)?.document;
      return document === undefined ? undefined : structuredClone(document);
    },
    async delete(idOrUrl, deleteOpts) {
      const hosted = findBundled(idOrUrl);
      if (hosted) {
        const what = hosted === bundled.core ? 'the core context' : 'a context bundled with the broker';
        throw new BadRequestDataError('Cannot delete a hosted context', `${hosted.url} is ${what}`);
      }
      const stored = store.find(idOrUrl);
      if (stored === undefined) {
        // NGSI-LD §5.13.5: only a Cached context can be reloaded; naming none to reload is a bad request.
        if (deleteOpts?.reload === true) throw new BadRequestDataError('Cannot reload the context', `no Cached context ${idOrUrl}`);
        return false;
      }
      if (deleteOpts?.reload === true) {
        if (stored.kind !== 'Cached') {
          throw new BadRequestDataError('Cannot reload the context', 'only Cached contexts can be reloaded');
        }
        await store.refetch(stored.url);
      } else {
        store.remove(stored);
      }
      // Any resolved context may have been built from it.
      invalidate();
      return true;
    },
  };
}

/**
 * Builds the context service. Reads the bundled contexts and builds the core term maps synchronously;
 * everything else happens on `resolve`.
 */
export function createContextService(opts: ContextServiceOptions): ContextService {
  const bundled = loadBundledContexts();
  const store = createContextStore({
    persistence: opts.persistence,
    bundled,
    allowRemote: opts.allowRemote,
    log: opts.log,
    clock: opts.clock,
    // NOTE: without a client of its own, public addresses only (when remote contexts are allowed).
    fetch: opts.fetch ?? createOutboundFetch(createHostAllowList([], opts.allowRemote)),
    timeoutMs: opts.fetchTimeoutMs,
    maxBytes: opts.maxBytes,
  });
  const core = toResolved(CORE_REQUEST, coreTermMaps(bundled.core), undefined);
  const cache = createLru<string, CacheEntry>(RESOLVED_CACHE_SIZE);
  const compiling = new Map<string, Promise<CacheEntry>>();
  // Bumped by delete: a compilation that started before a delete must not refill the cache.
  let generation = 0;

  const compile = async (request: ContextRequest): Promise<CacheEntry> => {
    const startedIn = generation;
    const compiled: CompiledContext = await compileContext([...request.processed], store.load);
    // Usage is counted under the stored URL (a hosted-id URL names its stored context).
    const usedUrls = [...compiled.urls].flatMap((url) => store.find(url)?.url ?? []);
    let hostedId: string | undefined;
    if (request.linkUrl === undefined) {
      hostedId = store.registerImplicit(request.processed);
      usedUrls.push(HOSTED_CONTEXT_PATH + hostedId);
    }
    const entry = { resolved: toResolved(request, compiled.maps, hostedId), usedUrls };
    if (startedIn === generation) cache.set(request.key, entry);
    opts.log.debug('compiled a context', { key: request.key, hostedId });
    return entry;
  };

  const resolve = async (input: unknown): Promise<ResolvedContext> => {
    const request = toContextRequest(input);
    if (request === CORE_REQUEST) return core;
    let entry = cache.get(request.key);
    if (entry === undefined) {
      let pending = compiling.get(request.key);
      if (pending === undefined) {
        pending = compile(request).finally(() => compiling.delete(request.key));
        compiling.set(request.key, pending);
      }
      entry = await pending;
    }
    for (const url of entry.usedUrls) store.recordUse(url);
    return entry.resolved;
  };

  return {
    core,
    resolve,
    ...createContextManagement(bundled, store, () => {
      cache.clear();
      generation += 1;
    }),
  };
}
