// One bounded fetch of a remote context document: http(s) only, timeout over headers and body,
// size cap enforced while streaming, nesting bounded, JSON object with @context required. Failures → 503
// with one detail whatever went wrong (refused host, no answer, bad status, bad document), so that the
// broker cannot be used to scan what it can reach; the reason travels as the cause, for the log.

import { LdContextNotAvailableError, isNestedDeeper } from '../ngsi/index.js';
import { readLimited } from '../lib/index.js';
import { isJsonObject, type JsonLdObject } from './jsonld-api.js';

export interface FetchLimits {
  fetch: typeof fetch;
  timeoutMs: number;
  maxBytes: number;
}

export interface FetchedContext {
  /** The JSON text as received. */
  body: string;
  document: JsonLdObject;
}

const TITLE = 'Unable to load the JSON-LD context';
const ACCEPT = 'application/ld+json, application/json';
/**
 * Deepest nesting of arrays and objects in a context document. NOTE: jsonld's cost grows with the
 * cube of scoped-context nesting (500 levels exhaust the memory) and its walks are recursive; real
 * contexts nest a handful of levels. jsonld follows at most 10 context URLs, so this bounds a chain too.
 */
const MAX_DEPTH = 64;

/** The one detail of every failure to load a context, whatever the reason. */
export function contextUnavailableDetail(url: string): string {
  return `The @context ${url} could not be loaded`;
}

/** A failure to load `url`: the caller sees the generic detail; `reason` (and `cause`) are for the log. */
export function contextUnavailable(url: string, reason: string, cause?: unknown): LdContextNotAvailableError {
  const why = new Error(reason, cause === undefined ? undefined : { cause });
  return new LdContextNotAvailableError(TITLE, contextUnavailableDetail(url), { cause: why });
}

export async function fetchContextDocument(url: string, limits: FetchLimits): Promise<FetchedContext> {
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch (err) {
    throw contextUnavailable(url, 'not a URL', err);
  }
  if (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:') {
    throw contextUnavailable(url, 'only http and https contexts can be fetched');
  }
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let text: string;
  try {
    const res = await limits.fetch(parsedUrl, { headers: { accept: ACCEPT }, signal, redirect: 'follow' });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw contextUnavailable(url, `the server answered ${res.status}`);
    }
    text = await readCapped(url, res, limits.maxBytes);
  } catch (err) {
    if (err instanceof LdContextNotAvailableError) throw err;
    const reason = signal.aborted ? `no answer within ${limits.timeoutMs} ms` : errorMessage(err);
    throw contextUnavailable(url, reason, err);
  }
  if (isNestedDeeper(text, MAX_DEPTH)) throw contextUnavailable(url, `the document nests deeper than ${MAX_DEPTH} levels`);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (err) {
    throw contextUnavailable(url, 'the document is not JSON', err);
  }
  if (!isJsonObject(document) || !('@context' in document)) {
    throw contextUnavailable(url, 'the document is not a JSON object with @context');
  }
  return { body: text, document };
}

async function readCapped(url: string, res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw contextUnavailable(url, `the document is larger than ${maxBytes} bytes`);
  }
  if (res.body === null) return '';
  const bytes = await readLimited(res.body, maxBytes);
  if (bytes === undefined) throw contextUnavailable(url, `the document is larger than ${maxBytes} bytes`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (err) {
    throw contextUnavailable(url, 'the document is not UTF-8 text', err);
  }
}

function errorMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return err.message + cause;
}
