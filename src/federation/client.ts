// The upstream NGSI-LD client: every request goes to the configured base URL with the upstream
// context's Link, the tenant and the bearer token, under a timeout; replies are read bounded.

import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { deadline, type Clock } from '../lib/index.js';
import { UpstreamError } from './errors.js';
import { createHttpTransport, type Transport } from '../lib/index.js';
import { createTokenSource, type TokenSource } from './token.js';

/** Largest upstream reply read; a larger one is an upstream failure. */
const MAX_REPLY_BYTES = 1_048_576;
/** Sockets kept to the upstream: as many requests go at once (the drain's history, send.ts). */
export const UPSTREAM_SOCKETS = 16;
/** Smallest request body compressed (with compression on): below, gzip's header and dictionary outweigh what it saves. */
const COMPRESS_FROM_BYTES = 1_024;
const gzipAsync = promisify(gzip);

export interface UpstreamReply {
  status: number;
  /** The JSON body, undefined when empty or not JSON. */
  body: unknown;
  /** The body's text (for error messages). */
  text: string;
}

export interface UpstreamClientOptions {
  /** Base URL, without a trailing slash. */
  url: string;
  tenant: string;
  timeoutMs: number;
  token?: TokenSource;
  transport: Transport;
  /** Request bodies of COMPRESS_FROM_BYTES or more go with Content-Encoding gzip. */
  gzip: boolean;
  /** Called once when the upstream turned out not to take gzip bodies (compression is then off). */
  onGzipRefused?: (status: number) => void;
}

export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path and query, starting with /ngsi-ld/v1/. */
  path: string;
  body?: unknown;
  /** The Link header value of the upstream context. */
  link: string;
  signal: AbortSignal;
}

export interface UpstreamClient {
  /** Sends a request (once more with a fresh token after a 401). Throws UpstreamError when no usable reply came. */
  send(req: UpstreamRequest): Promise<UpstreamReply>;
}

function createUpstreamClient(opts: UpstreamClientOptions): UpstreamClient {
  let compressing = opts.gzip;

  /** The request body as sent: JSON text, gzip-compressed when asked and worth it (RFC 9110 §8.4). */
  const encode = async (body: unknown, headers: Record<string, string>, compress: boolean): Promise<string | Buffer> => {
    const text = JSON.stringify(body);
    if (!compress || text.length < COMPRESS_FROM_BYTES) return text;
    headers['Content-Encoding'] = 'gzip';
    // NOTE: on libuv's thread pool, off the event loop. A batch upsert of 100 measurements of three
    // numbers (30 KB of JSON) becomes about 2 KB, in about 0.3 ms.
    return gzipAsync(text);
  };

  const once = async (req: UpstreamRequest, compress: boolean): Promise<UpstreamReply & { compressed: boolean }> => {
    const headers: Record<string, string> = { Accept: 'application/json', Link: req.link };
    if (req.body !== undefined) headers['Content-Type'] = 'application/json';
    const payload = req.body === undefined ? undefined : await encode(req.body, headers, compress);
    if (opts.tenant !== '') headers['NGSILD-Tenant'] = opts.tenant;
    if (opts.token !== undefined) headers['Authorization'] = `Bearer ${await opts.token.get(req.signal)}`;
    const limit = deadline(req.signal, opts.timeoutMs);
    let status: number;
    let bytes: Buffer | undefined;
    try {
      ({ status, bytes } = await opts.transport(opts.url + req.path, {
        method: req.method, headers, signal: limit.signal, maxBytes: MAX_REPLY_BYTES,
        ...(payload !== undefined ? { body: payload } : {}),
      }));
    } catch (err) {
      throw new UpstreamError(`${req.method} ${req.path.split('?')[0]}: ${limit.timedOut ? 'timed out' : causeOf(err)}`, { cause: err });
    } finally {
      limit.done();
    }
    if (bytes === undefined) throw new UpstreamError(`${req.method} ${req.path.split('?')[0]}: reply larger than ${MAX_REPLY_BYTES} bytes`);
    const text = bytes.toString('utf8');
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status, body, text, compressed: headers['Content-Encoding'] !== undefined };
  };

  /**
   * NOTE: an upstream that does not take gzip bodies answers 415 (RFC 9110 §15.5.16) or, failing to
   * parse them, 400: the request is then sent again as it is, and when that one is not refused the
   * same way, compression stays off for good (a 400 of the content itself comes back the same).
   */
  const sendOnce = async (req: UpstreamRequest): Promise<UpstreamReply> => {
    const reply = await once(req, compressing);
    if (!reply.compressed || (reply.status !== 415 && reply.status !== 400)) return reply;
    const plain = await once(req, false);
    if (plain.status !== reply.status && compressing) {
      compressing = false;
      opts.onGzipRefused?.(reply.status);
    }
    return plain;
  };

  return {
    async send(req) {
      const reply = await sendOnce(req);
      if (reply.status !== 401 || opts.token === undefined) return reply;
      opts.token.invalidate();
      return sendOnce(req);
    },
  };
}

/** What the federation's one upstream client is made of: the link options, and what tests replace. */
export interface FederationClientDeps {
  options: { url: string; upstreamTenant: string; timeoutMs: number; gzip?: boolean; token?: { url: string; clientId: string; clientSecret: string } | undefined };
  clock: Clock;
  /** Told when the upstream refuses gzip bodies (federation.compression is then off until restart). */
  onGzipRefused?: ((status: number) => void) | undefined;
  /** Requests to the upstream (default node:http(s)). */
  transport?: Transport | undefined;
  /** Requests to the token endpoint (default the global fetch). */
  fetch?: typeof fetch | undefined;
}

/** The client the drain and the registration keeper share: one connection pool, one token. */
export function createFederationClient(deps: FederationClientDeps): UpstreamClient {
  const { options, clock } = deps;
  return createUpstreamClient({
    url: options.url.replace(/\/+$/, ''), tenant: options.upstreamTenant, timeoutMs: options.timeoutMs, gzip: options.gzip === true,
    ...(deps.onGzipRefused ? { onGzipRefused: deps.onGzipRefused } : {}), transport: deps.transport ?? createHttpTransport(UPSTREAM_SOCKETS),
    ...(options.token ? {
      token: createTokenSource({
        tokenUrl: options.token.url, clientId: options.token.clientId, clientSecret: options.token.clientSecret, timeoutMs: options.timeoutMs,
        clock, fetch: deps.fetch ?? fetch,
      }),
    } : {}),
  });
}

function causeOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}
