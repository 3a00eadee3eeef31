// Compiles a context list into term maps on a cache miss: one JSON-LD 1.1 context processing by
// jsonld, plus one probe compaction for IRIs several terms share. jsonld errors are translated here.

import { BadRequestDataError, NgsiError } from '../ngsi/index.js';
import {
  compactDocument, processContext, type DocumentLoader, type JsonLdObject,
} from './jsonld-api.js';
import { expandTermWith } from './term-mapper.js';
import { draftTermMaps, settleTermMaps, type TermMaps } from './term-maps.js';

/** Loads a context document by URL; throws an NgsiError when it cannot. */
export type LoadContext = (url: string) => Promise<JsonLdObject>;

export interface CompiledContext {
  maps: TermMaps;
  /** The URLs loaded while processing (for usage statistics). */
  urls: ReadonlySet<string>;
}

/**
 * Most (term definitions × scoped contexts) a context list may hold. NOTE: jsonld copies the whole
 * active context for every scoped context it meets, so processing costs about that product (measured:
 * about a microsecond each; 2,000 scoped terms took 1.6 s, 64 scoped among 60,000 terms 3.4 s and
 * 600 MB). Real contexts have hundreds of terms and few scoped ones: this bound leaves them alone.
 */
const MAX_CONTEXT_COST = 200_000;

/** Term definitions and scoped contexts in a context value (objects, arrays of them; URLs count when loaded). */
function measureContext(value: unknown, into: { terms: number; scoped: number }): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      stack.push(...v);
    } else if (typeof v === 'object' && v !== null) {
      for (const [key, definition] of Object.entries(v)) {
        if (key.startsWith('@')) continue;
        into.terms++;
        if (typeof definition === 'object' && definition !== null && '@context' in definition) {
          into.scoped++;
          stack.push((definition as Record<string, unknown>)['@context']); // NOTE: checked to be an object just above
        }
      }
    }
  }
}

function checkCost(size: { terms: number; scoped: number }): void {
  if (size.terms * size.scoped > MAX_CONTEXT_COST) {
    throw new BadRequestDataError('JSON-LD context too complex',
      `${size.scoped} scoped contexts among ${size.terms} term definitions; (terms × scoped contexts) may be ${MAX_CONTEXT_COST} at most`);
  }
}

export async function compileContext(list: unknown[], load: LoadContext): Promise<CompiledContext> {
  const urls = new Set<string>();
  let failure: NgsiError | undefined;
  const size = { terms: 0, scoped: 0 };
  measureContext(list, size);
  checkCost(size);
  const loader: DocumentLoader = async (url) => {
    try {
      const document = await load(url);
      if (!urls.has(url)) {
        measureContext(document['@context'], size);
        checkCost(size);
      }
      urls.add(url);
      // jsonld resolves relative URLs inside loaded documents in place: give it a copy.
      return { contextUrl: null, documentUrl: url, document: structuredClone(document) };
    } catch (err) {
      failure ??= err instanceof NgsiError ? err : undefined;
      throw err;
    }
  };
  try {
    const draft = draftTermMaps(await processContext(list, loader));
    const chosen = draft.ambiguous.length === 0
      ? new Map<string, string>()
      : await probeCompaction(list, loader, draft.ambiguous, (key) => expandTermWith(draft.maps, key));
    return { maps: settleTermMaps(draft.maps, chosen), urls };
  } catch (err) {
    // NOTE: jsonld rewraps loader errors (and drops their cause inside scoped contexts): report the load failure.
    throw failure ?? translateJsonLdError(err);
  }
}

/** Turns anything jsonld throws into an NgsiError (an invalid context is the client's fault). */
function translateJsonLdError(err: unknown): NgsiError {
  if (err instanceof NgsiError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const details: unknown = typeof err === 'object' && err !== null ? Reflect.get(err, 'details') : undefined;
  const code: unknown = typeof details === 'object' && details !== null ? Reflect.get(details, 'code') : undefined;
  const detail = typeof code === 'string' ? `${message} (${code})` : message;
  return new BadRequestDataError('Invalid JSON-LD context', detail, { cause: err });
}

/**
 * Asks jsonld which key compaction writes for each IRI, valued by an empty node object, and maps the
 * keys back to IRIs. NOTE: when several terms share an IRI the choice depends on their containers and
 * coercions (JSON-LD 1.1 API §4.3); asking jsonld keeps the run-time map identical to it.
 */
async function probeCompaction(
  list: unknown[], loader: DocumentLoader, iris: readonly string[], expandKey: (key: string) => string,
): Promise<Map<string, string>> {
  const wanted = new Set(iris);
  const chosen = new Map<string, string>();
  const read = (compacted: JsonLdObject): void => {
    for (const key of Object.keys(compacted)) {
      const iri = expandKey(key);
      if (key !== '@context' && wanted.has(iri)) chosen.set(iri, key);
    }
  };
  try {
    read(await compactDocument(Object.fromEntries(iris.map((iri) => [iri, [{}]])), list, loader));
  } catch {
    // One IRI jsonld refuses (e.g. confused with a prefix) must not cost the others their choice.
    for (const iri of iris) {
      try {
        read(await compactDocument({ [iri]: [{}] }, list, loader));
      } catch {
        // Left to the run-time fallback.
      }
    }
  }
  return chosen;
}
