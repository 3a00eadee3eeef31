// One bounded fetch of the identity provider's JWKS: timeout over headers and body, size cap while
// streaming, the reply checked to be a key set. Failures are `JwksFetchError`s naming the reason.

import { deadline, readLimited } from '../lib/index.js';
import { parseJwkSet, type JwkSet } from './jwk-set.js';

export interface JwksFetchLimits {
  fetch: typeof fetch;
  timeoutMs: number;
  maxBytes: number;
  /** Aborts the fetch early (the verifier closing). */
  signal: AbortSignal;
}

class JwksFetchError extends Error {
  override name = 'JwksFetchError';
}

const ACCEPT = 'application/jwk-set+json, application/json';

export async function fetchJwks(uri: string, limits: JwksFetchLimits): Promise<JwkSet> {
  const limit = deadline(limits.signal, limits.timeoutMs);
  let text: string;
  try {
    const res = await limits.fetch(uri, { headers: { accept: ACCEPT }, signal: limit.signal, redirect: 'follow' });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new JwksFetchError(`the server answered ${res.status}`);
    }
    text = await readBody(res, limits.maxBytes);
  } catch (err) {
    if (err instanceof JwksFetchError) throw err;
    if (limit.timedOut) throw new JwksFetchError(`no answer within ${limits.timeoutMs} ms`, { cause: err });
    if (limits.signal.aborted) throw new JwksFetchError('closed', { cause: err });
    throw new JwksFetchError(errorMessage(err), { cause: err });
  } finally {
    limit.done();
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (err) {
    throw new JwksFetchError('the reply is not JSON', { cause: err });
  }
  const set = parseJwkSet(document);
  if (set === undefined) throw new JwksFetchError('the reply is not a JSON object with a keys array of objects');
  return set;
}

async function readBody(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new JwksFetchError(`the reply is larger than ${maxBytes} bytes`);
  }
  if (res.body === null) return '';
  const bytes = await readLimited(res.body, maxBytes);
  if (bytes === undefined) throw new JwksFetchError(`the reply is larger than ${maxBytes} bytes`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (err) {
    throw new JwksFetchError('the reply is not UTF-8 text', { cause: err });
  }
}

function errorMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return err.message + cause;
}
