// The public types of the jsonld module: context inputs, the persistence port the store implements,
// resolved contexts (term maps) and the context service (ETSI NGSI-LD §5.13 context management).

import type { Clock, ContextPersistence, Logger } from '../lib/index.js';

export type { ContextPersistence, PersistedContext } from '../lib/index.js';
import type { TermMapper } from '../ngsi/index.js';

/** The value of a request's `@context`: one URL, one inline context, or a list of both. */
export type ContextInput = string | Record<string, unknown> | Array<string | Record<string, unknown>>;

export interface ResolvedContext extends TermMapper {
  /** Stable key of this context list (cache key). */
  readonly key: string;
  /**
   * The context to put in a JSON-LD response body's @context: the client's context as given; just the
   * core URL string when the client gave none.
   */
  readonly bodyContext: string | Record<string, unknown> | Array<string | Record<string, unknown>>;
  /** The contexts processed, in order: the client's, then the core unless listed. */
  readonly processed: ReadonlyArray<string | Record<string, unknown>>;
  /**
   * For a `Link` header on application/json responses: an absolute URL when the client's context is
   * one URL (or only core); otherwise undefined and `hostedId` is set.
   */
  readonly linkUrl: string | undefined;
  /** Id under which this composite/inline context is served at /ngsi-ld/v1/jsonldContexts/{id} (ImplicitlyCreated). */
  readonly hostedId: string | undefined;
}

export type ContextKind = 'Hosted' | 'Cached' | 'ImplicitlyCreated';

export interface ContextEntryInfo {
  id: string;
  url: string;
  kind: ContextKind;
  createdAt?: number;
  lastUsage?: number;
  numberOfHits?: number;
}

export interface ContextService {
  /** The core context alone (no I/O). */
  readonly core: ResolvedContext;
  /**
   * Resolve the context of a request: undefined = core only. Throws LdContextNotAvailableError (503)
   * when a remote context cannot be loaded (network error, timeout, non-2xx, too large, not JSON,
   * remote disabled, host refused; one detail for all of them) and BadRequestDataError when a context is invalid JSON-LD. Cached per key
   * (bounded LRU) so jsonld runs only on a miss.
   */
  resolve(input: ContextInput | undefined): Promise<ResolvedContext>;
  /** ETSI 5.13: list/get/delete cached contexts. */
  list(opts: { kind?: ContextKind }): ContextEntryInfo[];
  /** What is known of one context (kind, dates, usage) by id or URL; undefined when unknown. */
  info(idOrUrl: string): ContextEntryInfo | undefined;
  /**
   * NGSI-LD §5.13.2 Add @context: processes the context (remote ones it names are fetched and
   * cached) and stores it with kind Hosted; resolves with its id. Throws BadRequestDataError for an
   * invalid context and LdContextNotAvailableError when a named one cannot be loaded.
   */
  add(context: ContextInput): Promise<string>;
  /** Body of a context by id (or by URL); undefined when unknown. The core context is listed with kind 'Hosted'. */
  get(idOrUrl: string): Record<string, unknown> | undefined;
  /**
   * Evicts from memory and persistence; returns false when unknown; throws BadRequestDataError for the
   * core context. With reload=true a Cached context is fetched again.
   */
  delete(idOrUrl: string, opts?: { reload?: boolean }): Promise<boolean>;
}

export interface ContextServiceOptions {
  persistence: ContextPersistence;
  allowRemote: boolean;
  fetchTimeoutMs: number;
  maxBytes: number;
  log: Logger;
  clock: Clock;
  /**
   * The outbound client remote contexts are fetched with (it decides which hosts may be reached);
   * default: the broker's outbound client allowing public addresses only. Tests inject their own.
   */
  fetch?: typeof fetch;
}
