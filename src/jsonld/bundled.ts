// The contexts bundled in contexts/: the core context (served for every core context URL) and the
// authorization contexts. Read once from disk; never fetched.

import { readFileSync } from 'node:fs';
import {
  AUTHORIZATION_COMPOUND_CONTEXT_URL, AUTHORIZATION_CONTEXT_URL, CORE_CONTEXT_URL, CORE_CONTEXT_URL_PATTERN,
} from '../ngsi/index.js';
import { shortHash } from './canonical-json.js';
import { isJsonObject, type JsonLdObject } from './jsonld-api.js';

export interface BundledContext {
  id: string;
  url: string;
  /** The document as bundled, for `GET /jsonldContexts/{id}`. */
  body: JsonLdObject;
  /** The document given to JSON-LD processing (see `withoutRemoteScopedContexts`). */
  processing: JsonLdObject;
}

export interface BundledContexts {
  readonly core: BundledContext;
  readonly all: readonly BundledContext[];
  /** By URL; every URL matching the core pattern (any version) finds the bundled core. */
  find(url: string): BundledContext | undefined;
  findById(id: string): BundledContext | undefined;
}

const BUNDLED_URLS = [CORE_CONTEXT_URL, AUTHORIZATION_CONTEXT_URL, AUTHORIZATION_COMPOUND_CONTEXT_URL];

/** Both src/jsonld/ and dist/jsonld/ sit two levels below the package root. */
const DEFAULT_DIR = new URL('../../contexts/', import.meta.url);

export function isCoreContextUrl(url: string): boolean {
  return CORE_CONTEXT_URL_PATTERN.test(url);
}

export function loadBundledContexts(dir: URL = DEFAULT_DIR): BundledContexts {
  const isBundledUrl = (url: string): boolean => isCoreContextUrl(url) || BUNDLED_URLS.includes(url);
  const all = BUNDLED_URLS.map((url): BundledContext => {
    const fileName = new URL(url).pathname.split('/').pop() ?? '';
    const parsed: unknown = JSON.parse(readFileSync(new URL(fileName, dir), 'utf8'));
    if (!isJsonObject(parsed)) throw new Error(`bundled context ${fileName} is not a JSON object`);
    return { id: shortHash(url), url, body: parsed, processing: withoutRemoteScopedContexts(parsed, isBundledUrl) };
  });
  const [core] = all;
  if (core === undefined) throw new Error('the core context is not bundled');
  const byUrl = new Map(all.map((c) => [c.url, c]));
  const byId = new Map(all.map((c) => [c.id, c]));
  return {
    core,
    all,
    find: (url) => (isCoreContextUrl(url) ? core : byUrl.get(url)),
    findById: (id) => byId.get(id),
  };
}

/**
 * A copy of a bundled context whose term-scoped contexts keep only bundled URLs.
 * NOTE: the core context's `ngsildproof` term scopes a W3C security context by URL. JSON-LD processing
 * validates scoped contexts eagerly, so using the core context would fetch that URL over the network;
 * its terms only matter inside `ngsildproof` values, which then expand through @vocab instead.
 */
function withoutRemoteScopedContexts(doc: JsonLdObject, isBundledUrl: (url: string) => boolean): JsonLdObject {
  const copy = structuredClone(doc);
  const ctx = copy['@context'];
  if (!isJsonObject(ctx)) return copy;
  for (const definition of Object.values(ctx)) {
    if (!isJsonObject(definition) || !('@context' in definition)) continue;
    const scoped = definition['@context'];
    if (typeof scoped === 'string' && !isBundledUrl(scoped)) definition['@context'] = {};
    if (Array.isArray(scoped)) {
      definition['@context'] = scoped.filter((c: unknown) => typeof c !== 'string' || isBundledUrl(c));
    }
  }
  return copy;
}
