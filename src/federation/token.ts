// OAuth 2.0 client credentials (RFC 6749 §4.4) against the cloud's token endpoint: one token at a
// time, cached until 30 s before it expires, fetched again after an upstream 401.

import type { Clock } from '../lib/index.js';
import { deadline, readLimited } from '../lib/index.js';
import { UpstreamError } from './errors.js';
import { TOKEN, describeReply } from './replies.js';

/** Renewed this long before `expires_in` runs out. */
const EARLY_MS = 30_000;
/** Largest token response read. */
const MAX_REPLY_BYTES = 65_536;

export interface TokenSourceOptions {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  timeoutMs: number;
  clock: Clock;
  fetch: typeof fetch;
}

export interface TokenSource {
  /** A valid access token (cached, or fetched now). */
  get(signal: AbortSignal): Promise<string>;
  /** Forgets the cached token (the upstream refused it). */
  invalidate(): void;
}

export function createTokenSource(opts: TokenSourceOptions): TokenSource {
  let cached: { token: string; until: number } | undefined;
  let pending: Promise<string> | undefined;

  const fetchToken = async (signal: AbortSignal): Promise<string> => {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: opts.clientId, client_secret: opts.clientSecret });
    let res: Response;
    const limit = deadline(signal, opts.timeoutMs);
    let bytes: Buffer | undefined;
    try {
      try {
        res = await opts.fetch(opts.tokenUrl, {
          method: 'POST', body: form, headers: { Accept: 'application/json' }, redirect: 'error', signal: limit.signal,
        });
      } catch (err) {
        throw new UpstreamError(`token endpoint unreachable: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      bytes = res.body === null ? Buffer.alloc(0) : await readLimited(res.body, MAX_REPLY_BYTES).catch(() => undefined);
    } finally {
      limit.done();
    }
    if (bytes === undefined) throw new UpstreamError(`token endpoint: reply unreadable or larger than ${MAX_REPLY_BYTES} bytes`);
    const text = bytes.toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!res.ok) throw new UpstreamError(`token endpoint: ${describeReply(res.status, body, text)}`);
    const parsed = TOKEN.safeParse(body);
    if (!parsed.success) throw new UpstreamError('token endpoint: not a token response');
    const lifetimeMs = (parsed.data.expires_in ?? 60) * 1_000;
    cached = { token: parsed.data.access_token, until: opts.clock.now() + lifetimeMs - EARLY_MS };
    return parsed.data.access_token;
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
