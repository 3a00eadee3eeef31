// Normalizes a request's @context into the list that is processed: the client's contexts in order,
// then the core context unless the client listed it (the core context always applies, last).

import { BadRequestDataError, CORE_CONTEXT_URL } from '../ngsi/index.js';
import { isCoreContextUrl } from './bundled.js';
import { canonicalJson } from './canonical-json.js';
import { isJsonObject, type JsonLdObject } from './jsonld-api.js';

export type ContextEntry = string | JsonLdObject;

export interface ContextRequest {
  readonly key: string;
  /** The client's contexts without trailing core URLs; empty means core only. */
  readonly entries: readonly ContextEntry[];
  /** The list that is processed: the entries, then the core URL unless listed. */
  readonly processed: readonly ContextEntry[];
  /** What a JSON-LD response carries as @context: the client's context as given (NGSI-LD §6.3.6). */
  readonly bodyContext: ContextEntry | ContextEntry[];
  /** Set when the client's context is one URL (or only core). */
  readonly linkUrl: string | undefined;
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

export const CORE_REQUEST: ContextRequest = {
  key: canonicalJson(CORE_CONTEXT_URL),
  entries: [],
  processed: [CORE_CONTEXT_URL],
  bodyContext: CORE_CONTEXT_URL,
  linkUrl: CORE_CONTEXT_URL,
};

function invalid(detail: string): BadRequestDataError {
  return new BadRequestDataError('Invalid JSON-LD context', detail);
}

function toEntry(value: unknown): ContextEntry {
  if (typeof value === 'string') {
    if (!SCHEME.test(value)) throw invalid(`a context URL must be absolute: ${JSON.stringify(value)}`);
    return value;
  }
  if (isJsonObject(value)) return value;
  throw invalid('a context must be a URL, an object, or an array of these');
}

/**
 * Validates the shape of a request's @context (JSON-LD itself is checked when it is processed).
 * NOTE: a response echoes the context as the client gave it (a string stays a string, a list keeps
 * its members, the core is not added), so the same list given as "X" and ["X"] are two requests.
 */
export function toContextRequest(input: unknown): ContextRequest {
  if (input === undefined) return CORE_REQUEST;
  const given = Array.isArray(input) ? input.map(toEntry) : toEntry(input);
  const entries = Array.isArray(given) ? [...given] : [given];
  while (entries.length > 0) {
    const last = entries[entries.length - 1];
    if (typeof last !== 'string' || !isCoreContextUrl(last)) break;
    entries.pop();
  }
  if (entries.length === 0) return CORE_REQUEST;
  const hasCore = entries.some((e) => typeof e === 'string' && isCoreContextUrl(e));
  const processed = hasCore ? entries : [...entries, CORE_CONTEXT_URL];
  const [first] = entries;
  return {
    key: canonicalJson({ given, processed }),
    entries,
    processed,
    bodyContext: given,
    linkUrl: entries.length === 1 && typeof first === 'string' ? first : undefined,
  };
}
