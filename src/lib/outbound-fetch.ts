// The one client for requests the broker makes on its own (remote @contexts, the JWKS, the upstream
// token): a fetch-shaped function over node:http(s) that resolves the host first, checks the
// resolved address against an allow-list and connects to that very address (DNS rebinding cannot
// swap it), and re-checks every redirect the same way.

import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import type { HostAllowList } from './host-allow-list.js';

/** Why the client would not connect: the host is not allowed (its real reason is for the log). */
export class OutboundRefusedError extends Error {
  override name = 'OutboundRefusedError';
}

export type OutboundFetch = typeof fetch;

/** Redirects followed at most (fetch's own limit is 20; a context or key set needs a few). */
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 204, 205, 304]);

interface Target {
  url: URL;
  /** The resolved addresses the allow-list allows, in the resolver's order (at least one). */
  addresses: Array<{ address: string; family: number }>;
  port: number;
}

/** `promise`, or the signal's abort reason when it aborts first (a lookup itself cannot be cancelled). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Resolves the URL's host and keeps the allowed addresses; throws OutboundRefusedError when there is none. */
async function resolveTarget(url: URL, allowList: HostAllowList, signal: AbortSignal | undefined): Promise<Target> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefusedError(`not an http(s) URL: ${url.protocol}`);
  if (url.username !== '' || url.password !== '') throw new OutboundRefusedError('a URL with credentials');
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (allowList.isClosed) throw new OutboundRefusedError(`${url.host}: no host is allowed`);
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = await untilAborted(dnsLookup(hostname, { all: true, verbatim: true }), signal);
  const allowed = addresses.filter((a) => allowList.allows(hostname, port, a.address));
  if (allowed.length === 0) {
    throw new OutboundRefusedError(`${url.host} (${addresses.map((a) => a.address).join(', ') || 'no address'}) is not an allowed host`);
  }
  return { url, addresses: allowed, port };
}

function bodyOf(init: RequestInit | undefined, headers: Record<string, string>): Buffer | undefined {
  const body = init?.body;
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof URLSearchParams) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    return Buffer.from(body.toString());
  }
  if (body instanceof Uint8Array) return Buffer.from(body);
  throw new TypeError('the outbound client sends string, URLSearchParams or byte bodies only');
}

function headersOf(init: RequestInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

function responseOf(res: IncomingMessage): Response {
  const headers = new Headers();
  for (const [key, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(key, v);
  }
  const status = res.statusCode ?? 0;
  if (NULL_BODY.has(status)) {
    res.resume();
    return new Response(null, { status, headers });
  }
  // NOTE: Readable.toWeb's type is the node:stream/web ReadableStream, the same object fetch's Response takes.
  return new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status, headers });
}

/** One request to the resolved address, without following redirects. */
function send(target: Target, method: string, headers: Record<string, string>, body: Buffer | undefined, signal: AbortSignal | undefined):
  Promise<IncomingMessage> {
  const { url, addresses } = target;
  // NOTE: the socket connects to the checked addresses whatever the name resolves to by now.
  const lookup: LookupFunction = (_host, opts, cb) => {
    const [first] = addresses;
    if (opts.all === true) cb(null, addresses);
    else if (first !== undefined) cb(null, first.address, first.family);
  };
  const secure = url.protocol === 'https:';
  const outHeaders: OutgoingHttpHeaders = { ...headers, host: url.host };
  if (body !== undefined) outHeaders['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    try {
      const req = (secure ? httpsRequest : httpRequest)({
        method, hostname: url.hostname.replace(/^\[|\]$/g, ''), port: target.port, path: `${url.pathname}${url.search}`,
        headers: outHeaders, lookup, agent: false, ...(signal ? { signal } : {}),
      }, resolve);
      req.on('error', reject);
      req.end(body);
    } catch (err) {
      reject(err);
    }
  });
}

/**
 * A fetch-shaped client that only connects to hosts `allowList` allows (checked on the resolved
 * address, again on every redirect; at most 5 redirects). Refusals reject with OutboundRefusedError.
 * Takes string or URL inputs and string, URLSearchParams or byte bodies.
 */
export function createOutboundFetch(allowList: HostAllowList): OutboundFetch {
  return async (input, init) => {
    if (typeof input !== 'string' && !(input instanceof URL)) throw new TypeError('the outbound client takes a URL');
    let url = new URL(input);
    let method = (init?.method ?? 'GET').toUpperCase();
    const headers = headersOf(init);
    let body = bodyOf(init, headers);
    const signal = init?.signal ?? undefined;
    for (let hop = 0; ; hop += 1) {
      const target = await resolveTarget(url, allowList, signal);
      const res = await send(target, method, headers, body, signal);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (!REDIRECTS.has(status) || location === undefined || init?.redirect === 'manual') return responseOf(res);
      res.resume();
      if (init?.redirect === 'error') throw new TypeError(`redirected (${status}) where redirects are refused`);
      if (hop >= MAX_REDIRECTS) throw new TypeError(`more than ${MAX_REDIRECTS} redirects`);
      const next = new URL(location, url);
      if (next.origin !== url.origin) delete headers['authorization'];
      if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = undefined;
        delete headers['content-type'];
      }
      url = next;
    }
  };
}
