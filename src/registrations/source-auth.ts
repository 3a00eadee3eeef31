// OAuth 2.0 client credentials per registration (RFC 6749 §4.4): contextSourceInfo pairs of edgeld's
// own (GS CIM 009 names none) say where and as whom to get a token for the registration's endpoint.
// They steer the request and are never sent to the source; the secret is never shown. Tokens are
// cached per token endpoint and client id until they expire, and fetched again once after a 401.

import { createLru, type TokenSource } from '../lib/index.js';
import { invalidMember } from './parse-members.js';
import type { Registration } from './model.js';

/** The contextSourceInfo keys of a registration's client credentials (compared case-insensitively). */
const OAUTH2_TOKEN_URL = 'oauth2TokenUrl';
const OAUTH2_CLIENT_ID = 'oauth2ClientId';
const OAUTH2_CLIENT_SECRET = 'oauth2ClientSecret';
const OAUTH2_SCOPE = 'oauth2Scope';

/** Keys lower-cased, for the source client's list of keys that are not headers. */
export const OAUTH2_KEYS: readonly string[] = [OAUTH2_TOKEN_URL, OAUTH2_CLIENT_ID, OAUTH2_CLIENT_SECRET, OAUTH2_SCOPE].map((k) => k.toLowerCase());

/** Token endpoints and clients remembered at most (each with its cached token). */
const MAX_CLIENTS = 256;

type Pairs = ReadonlyArray<{ key: string; value: string }>;

interface SourceCredentials {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string | undefined;
}

const valueOf = (pairs: Pairs | undefined, key: string): string | undefined =>
  pairs?.find((p) => p.key.toLowerCase() === key.toLowerCase())?.value;

/** The client credentials a registration asks for; undefined when it names none. */
function credentialsOf(pairs: Pairs | undefined): SourceCredentials | undefined {
  const tokenUrl = valueOf(pairs, OAUTH2_TOKEN_URL);
  const clientId = valueOf(pairs, OAUTH2_CLIENT_ID);
  const clientSecret = valueOf(pairs, OAUTH2_CLIENT_SECRET);
  if (tokenUrl === undefined || clientId === undefined || clientSecret === undefined) return undefined;
  return { tokenUrl, clientId, clientSecret, scope: valueOf(pairs, OAUTH2_SCOPE) };
}

/** A registration's contextSourceInfo with its client secret left out (the API never shows it). */
export function withoutSecret(pairs: Pairs): Array<{ key: string; value: string }> {
  return pairs.filter((p) => p.key.toLowerCase() !== OAUTH2_CLIENT_SECRET.toLowerCase()).map((p) => ({ key: p.key, value: p.value }));
}

/** 400 unless the client credential pairs are all there or none is, with an http(s) token endpoint. */
export function checkSourceCredentials(pairs: Pairs): void {
  const given = pairs.filter((p) => OAUTH2_KEYS.includes(p.key.toLowerCase()));
  if (given.length === 0) return;
  const creds = credentialsOf(pairs);
  if (creds === undefined) {
    throw invalidMember('contextSourceInfo', `${OAUTH2_TOKEN_URL}, ${OAUTH2_CLIENT_ID} and ${OAUTH2_CLIENT_SECRET} go together`);
  }
  let url: URL | undefined;
  try {
    url = new URL(creds.tokenUrl);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') {
    throw invalidMember('contextSourceInfo', `${OAUTH2_TOKEN_URL} '${creds.tokenUrl.slice(0, 200)}' is not an http(s) URL`);
  }
  if (creds.clientId === '' || creds.clientSecret === '') throw invalidMember('contextSourceInfo', `${OAUTH2_CLIENT_ID} and ${OAUTH2_CLIENT_SECRET} may not be empty`);
}

export interface SourceAuth {
  /** Whether a registration asks for a token (no I/O). */
  asks(reg: Registration): boolean;
  /** The Authorization header of a registration's requests; undefined when it asks for none. Throws TokenEndpointError. */
  authorization(reg: Registration, signal: AbortSignal): Promise<string | undefined>;
  /** The source refused the token (401): the next request fetches a new one. */
  refused(reg: Registration): void;
}

export interface SourceAuthOptions {
  /** A token source for one client (the composition root gives it its outbound client). */
  tokenSource: (creds: SourceCredentials) => TokenSource;
}

export function createSourceAuth(opts: SourceAuthOptions): SourceAuth {
  const clients = createLru<string, { secret: string; scope: string | undefined; source: TokenSource }>(MAX_CLIENTS);
  const sourceOf = (reg: Registration): TokenSource | undefined => {
    const creds = credentialsOf(reg.contextSourceInfo);
    if (creds === undefined) return undefined;
    const key = `${creds.tokenUrl}\u0000${creds.clientId}`;
    const held = clients.get(key);
    // NOTE: a registration updated with another secret or scope gets a client of its own from then on.
    if (held !== undefined && held.secret === creds.clientSecret && held.scope === creds.scope) return held.source;
    const source = opts.tokenSource(creds);
    clients.set(key, { secret: creds.clientSecret, scope: creds.scope, source });
    return source;
  };
  return {
    asks: (reg) => reg.contextSourceInfo !== undefined && credentialsOf(reg.contextSourceInfo) !== undefined,
    async authorization(reg, signal) {
      const source = sourceOf(reg);
      return source === undefined ? undefined : `Bearer ${await source.get(signal)}`;
    },
    refused: (reg) => sourceOf(reg)?.invalidate(),
  };
}
