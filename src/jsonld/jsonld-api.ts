// Typed access to the jsonld package (v9), the broker's only import of it. The published typings
// describe an older jsonld API, so the subset called here is declared here.

import { createRequire } from 'node:module';

export type JsonLdObject = Record<string, unknown>;

export interface RemoteDocument {
  contextUrl: null;
  documentUrl: string;
  document: JsonLdObject;
}

export type DocumentLoader = (url: string) => Promise<RemoteDocument>;

/** A term definition as jsonld keeps it in an active context (only the members read here). */
export interface TermDefinition {
  '@id'?: unknown;
  '@type'?: unknown;
  '@container'?: unknown;
  '@language'?: unknown;
  '@direction'?: unknown;
  reverse?: boolean;
  /** The term may be the prefix of a compact IRI. */
  _prefix?: boolean;
  _termHasColon?: boolean;
}

/** The processed ("active") context jsonld builds: term definitions, @vocab, @base. */
export interface ActiveContext {
  mappings: Map<string, TermDefinition | null>;
  '@vocab'?: string;
  '@base'?: string;
}

interface Options {
  documentLoader?: DocumentLoader;
  contextResolver?: unknown;
}

interface JsonLdApi {
  processContext(active: ActiveContext | null, local: unknown, options: Options): Promise<ActiveContext>;
  expand(input: unknown, options: Options): Promise<unknown[]>;
  compact(input: unknown, ctx: unknown, options: Options): Promise<JsonLdObject>;
}

type ContextResolverClass = new (opts: { sharedCache: Map<string, unknown> }) => unknown;

interface Loaded {
  api: JsonLdApi;
  ContextResolver: ContextResolverClass;
}

let loading: Promise<Loaded> | undefined;

/**
 * jsonld is loaded on first use: a gateway whose clients use only the core context (its term map is
 * built without jsonld) never pays the ~11 MiB it costs in memory.
 */
function load(): Promise<Loaded> {
  loading ??= import('jsonld').then((m) => ({
    // NOTE: cast because @types/jsonld describes jsonld 1.5 (no processContext, loose document types).
    api: m.default as unknown as JsonLdApi,
    // NOTE: cast because jsonld's ContextResolver (its `contextResolver` option) ships without typings.
    ContextResolver: createRequire(import.meta.url)('jsonld/lib/ContextResolver.js') as ContextResolverClass,
  }));
  return loading;
}

/**
 * Options for one jsonld call. NOTE: jsonld keeps resolved contexts in a module-wide cache shared by
 * all calls; an `@import` of a context that an earlier call processed against the same active context
 * then reads the wrong kind of entry ("a term definition must not contain mappings"). A resolver per
 * call keeps calls independent (the broker caches resolved contexts itself).
 */
function optionsFor(loaded: Loaded, documentLoader: DocumentLoader): Options {
  return { documentLoader, contextResolver: new loaded.ContextResolver({ sharedCache: new Map() }) };
}

/** Processes a context (list) from the initial context with JSON-LD 1.1 context processing. */
export async function processContext(local: unknown, documentLoader: DocumentLoader): Promise<ActiveContext> {
  const loaded = await load();
  const initial = await loaded.api.processContext(null, null, {});
  return loaded.api.processContext(initial, local, optionsFor(loaded, documentLoader));
}

/** JSON-LD expansion of a document. */
export async function expandDocument(input: unknown, documentLoader: DocumentLoader): Promise<unknown[]> {
  const loaded = await load();
  return loaded.api.expand(input, optionsFor(loaded, documentLoader));
}

/** JSON-LD compaction of a document with a context. */
export async function compactDocument(input: unknown, ctx: unknown, documentLoader: DocumentLoader): Promise<JsonLdObject> {
  const loaded = await load();
  return loaded.api.compact(input, ctx, optionsFor(loaded, documentLoader));
}

export function isJsonObject(value: unknown): value is JsonLdObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
