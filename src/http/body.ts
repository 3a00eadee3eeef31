// Reading request bodies: size cap while streaming (413), JSON syntax (400 InvalidRequest), and the
// JSON-LD context rules of NGSI-LD §6.3.5 (where the @context may and may not come from).

import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import {
  BadRequestDataError, InvalidRequestError, PayloadTooLargeError, UnsupportedMediaTypeError, isNestedDeeper, isPlainObject,
} from '../ngsi/index.js';
import type { ContextInput } from '../jsonld/index.js';
import { readLimited } from '../lib/index.js';
import { APP_LD_JSON, contextFromLink, requestMediaType } from './media.js';

export interface BodyOptions {
  limit: number;
  /** Deepest nesting of arrays and objects accepted (`http.max-json-depth`). */
  maxDepth: number;
  allowMergePatch?: boolean;
  /** Batch endpoints: the body is an array, each element carrying its own @context in ld+json. */
  isArray?: boolean;
}

export interface ParsedBody {
  body: unknown;
  /** The request context: from the Link header (json) or the body @context (ld+json). */
  context: ContextInput | undefined;
  /**
   * Per element contexts of an array body; an element whose context is misplaced carries that error
   * instead (batch operations report it for that entity alone).
   */
  elementContexts?: Array<ContextInput | undefined | BadRequestDataError>;
}

/**
 * A body over the limit is still read (and dropped) up to this many bytes before the 413 is sent:
 * a client that writes its whole body before reading the answer then receives it. Larger ones are
 * cut off, and such a client may see the connection reset instead.
 */
const DISCARD_MAX_BYTES = 16 * 1_048_576;

const gunzipAsync = promisify(gunzip);

function tooLarge(limit: number): PayloadTooLargeError {
  return new PayloadTooLargeError('Request body too large', `The limit is ${limit} bytes`);
}

/** The coding of a request body (RFC 9110 §8.4): none, or gzip; any other is refused with 415. */
function bodyCoding(req: Request): 'gzip' | undefined {
  const header = req.headers.get('content-encoding');
  if (header === null) return undefined;
  const codings = header.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return undefined;
  if (codings.length === 1 && (codings[0] === 'gzip' || codings[0] === 'x-gzip')) return 'gzip';
  throw new UnsupportedMediaTypeError('Unsupported Content-Encoding', `A request body is sent as it is or with Content-Encoding gzip, not ${header.slice(0, 100)}`);
}

/** The body's bytes as sent (compressed or not), at most `limit` of them. */
async function readRaw(req: Request, limit: number): Promise<Buffer> {
  const declared = req.headers.get('content-length');
  const discardUpTo = Math.max(limit, DISCARD_MAX_BYTES);
  if (declared !== null) {
    const length = Number(declared);
    if (length > limit) {
      if (length <= discardUpTo && req.body) await readLimited(req.body, 0, discardUpTo).catch(() => undefined);
      throw tooLarge(limit);
    }
  }
  if (!req.body) return Buffer.alloc(0);
  const bytes = await readLimited(req.body, limit, discardUpTo);
  if (bytes === undefined) throw tooLarge(limit);
  return bytes;
}

/**
 * A gzip body inflated, refused (413) as soon as it would pass `limit` bytes: the limit holds for
 * what the body stands for, so a small compressed body never becomes a large one in memory.
 */
async function inflate(bytes: Buffer, limit: number): Promise<string> {
  try {
    return (await gunzipAsync(bytes, { maxOutputLength: Math.max(1, limit) })).toString('utf8');
  } catch (err) {
    // NOTE: past maxOutputLength, zlib fails with a RangeError (ERR_BUFFER_TOO_LARGE); a broken stream with an Error.
    if (err instanceof RangeError) throw tooLarge(limit);
    throw new InvalidRequestError('Malformed gzip body', err instanceof Error ? err.message : undefined);
  }
}

export async function readBytes(req: Request, limit: number): Promise<string> {
  if (bodyCoding(req) === 'gzip') return inflate(await readRaw(req, limit), limit);
  const length = Number(req.headers.get('content-length') ?? Number.NaN);
  // NOTE: with a declared length, Node's HTTP parser delivers exactly that many bytes, so the
  // whole body may be read at once; text() reads the socket directly, without a web stream.
  if (Number.isSafeInteger(length) && length <= limit) return req.text();
  return (await readRaw(req, limit)).toString('utf8');
}

export function isContextInput(v: unknown): v is ContextInput {
  if (typeof v === 'string' || isPlainObject(v)) return true;
  return Array.isArray(v) && v.every((e) => typeof e === 'string' || isPlainObject(e));
}

function contextOf(body: Record<string, unknown>): ContextInput {
  const ctx = body['@context'];
  if (!isContextInput(ctx)) throw new BadRequestDataError('Invalid @context', 'A context is a URL, an object, or an array of them');
  return ctx;
}

/**
 * Parses a request body. The nesting depth is checked first, in one pass without recursion, so no
 * deeply nested document reaches a recursive walker (or JSON.parse's own stack).
 */
export function parseJsonText(text: string, maxDepth: number): unknown {
  if (isNestedDeeper(text, maxDepth)) {
    throw new BadRequestDataError('JSON nested too deeply', `Arrays and objects may nest ${maxDepth} levels at most (http.max-json-depth)`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InvalidRequestError('Malformed JSON body', err instanceof Error ? err.message : undefined);
  }
}

/** Reads, size-checks and parses a JSON body, and locates its JSON-LD context. */
export async function readJsonBody(req: Request, opts: BodyOptions): Promise<ParsedBody> {
  const mediaType = requestMediaType(req.headers.get('content-type') ?? undefined, opts.allowMergePatch ?? false);
  const text = await readBytes(req, opts.limit);
  if (text.trim() === '') throw new InvalidRequestError('Empty request body');
  const body = parseJsonText(text, opts.maxDepth);
  const linkContext = contextFromLink(req.headers.get('link') ?? undefined);
  if (opts.isArray) {
    if (!Array.isArray(body)) throw new InvalidRequestError('The body must be a JSON array');
  } else if (!isPlainObject(body)) {
    throw new InvalidRequestError('The body must be a JSON object');
  }
  const elements: unknown[] = Array.isArray(body) ? body : [body];
  if (mediaType === APP_LD_JSON) {
    // NGSI-LD §6.3.5: with application/ld+json the context is in the body, never in a Link header.
    if (linkContext !== undefined) {
      throw new BadRequestDataError('A JSON-LD Link header is not allowed with application/ld+json');
    }
    const contexts = elements.map((el) => {
      if (!isPlainObject(el) || !('@context' in el)) {
        return new BadRequestDataError('Missing @context', 'An application/ld+json body must carry @context');
      }
      return contextOf(el);
    });
    return opts.isArray ? { body, context: undefined, elementContexts: contexts } : { body, context: orThrow(contexts[0]) };
  }
  const contexts = elements.map((el) => (isPlainObject(el) && '@context' in el
    ? new BadRequestDataError('@context is not allowed in an application/json body', 'Send the context in a Link header, or use application/ld+json')
    : linkContext));
  return opts.isArray ? { body, context: linkContext, elementContexts: contexts } : { body, context: orThrow(contexts[0]) };
}

function orThrow(context: ContextInput | undefined | BadRequestDataError): ContextInput | undefined {
  if (context instanceof BadRequestDataError) throw context;
  return context;
}
