// OAuth 2.0 client credentials (RFC 6749 §4.4): one token per client at a time, cached until 30 s
// before it expires, fetched again when the resource server refuses it. Shared by the federation
// upstream and the context sources of registrations; the token reply is untrusted and checked here.

import type { Clock } from './clock.js';
import { deadline } from './deadline.js';
import { readLimited } from './stream.js';

/** Renewed this long before `expires_in` runs out. */
const EARLY_MS = 30_000;
/** Largest token response read. */
const MAX_REPLY_BYTES = 65_536;
/** Longest access token taken. */
const MAX_TOKEN_CHARS = 16_384;

/** The token endpoint could not be reached, refused the client, or answered something else than a token. */
export class TokenEndpointError extends Error {
  override name = 'TokenEndpointError';
}

export interface ClientCredentialsOptions {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** The `scope` asked for (RFC 6749 §3.3); none when undefined. */
  scope?: string | undefined;
  timeoutMs: number;
  clock: Clock;
  fetch: typeof fetch;
  /** A short text of an error reply (status, body and its text) for the error message. */
  describe?: (status: number, body: unknown, text: string) => string;
}

export interface TokenSource {
  /** A valid access token (cached, or fetched now); throws TokenEndpointError. */
  get(signal: AbortSignal): Promise<string>;
  /** Forgets the cached token (the resource server refused it). */
  invalidate(): void;
}

/** RFC 6749 §5.1: the members of a token response the client uses; undefined when it is not one. */
function tokenOf(body: unknown): { token: string; expiresIn: number | undefined } | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { access_token: token, expires_in: expiresIn, token_type: tokenType } = body as Record<string, unknown>; // NOTE: a plain object
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_CHARS || /[\0-\x1f\x7f]/.test(token)) return undefined;
  if (expiresIn !== undefined && (typeof expiresIn !== 'number' || !(expiresIn > 0))) return undefined;
  if (tokenType !== undefined && typeof tokenType !== 'string') return undefined;
  return { token, expiresIn };
}

const describeDefault = (status: number, _body: unknown, text: string): string => `${status} ${text.replace(/\s+/g, ' ').slice(0, 300)}`.trim();

async function requestToken(opts: ClientCredentialsOptions, signal: AbortSignal): Promise<{ res: Response; text: string }> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: opts.clientId, client_secret: opts.clientSecret });
  if (opts.scope !== undefined && opts.scope !== '') form.set('scope', opts.scope);
  const limit = deadline(signal, opts.timeoutMs);
  try {
    let res: Response;
    try {
      res = await opts.fetch(opts.tokenUrl, {
        method: 'POST', body: form, headers: { Accept: 'application/json' }, redirect: 'error', signal: limit.signal,
      });
    } catch (err) {
      const why = limit.timedOut ? `no answer within ${opts.timeoutMs} ms` : err instanceof Error ? err.message : String(err);
      throw new TokenEndpointError(`token endpoint unreachable: ${why}`, { cause: err });
    }
    const bytes = res.body === null ? Buffer.alloc(0) : await readLimited(res.body, MAX_REPLY_BYTES).catch(() => undefined);
    if (bytes === undefined) throw new TokenEndpointError(`token endpoint: reply unreadable or larger than ${MAX_REPLY_BYTES} bytes`);
    return { res, text: bytes.toString('utf8') };
  } finally {
    limit.done();
  }
}

/** A token source for one client at one token endpoint. */
export function createClientCredentials(opts: ClientCredentialsOptions): TokenSource {
  let cached: { token: string; until: number } | undefined;
  let pending: Promise<string> | undefined;

  const fetchToken = async (signal: AbortSignal): Promise<string> => {
    const { res, text } = await requestToken(opts, signal);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!res.ok) throw new TokenEndpointError(`token endpoint: ${(opts.describe ?? describeDefault)(res.status, body, text)}`);
    const parsed = tokenOf(body);
    if (parsed === undefined) throw new TokenEndpointError('token endpoint: not a token response');
    const lifetimeMs = (parsed.expiresIn ?? 60) * 1_000;
    cached = { token: parsed.token, until: opts.clock.now() + lifetimeMs - EARLY_MS };
    return parsed.token;
  };

  return {
    get(signal) {
      if (cached !== undefined && opts.clock.now() < cached.until) return Promise.resolve(cached.token);
      pending ??= fetchToken(signal).finally(() => {
        pending = undefined;
      });
      return pending;
    },
    invalidate() {
      cached = undefined;
    },
  };
}
