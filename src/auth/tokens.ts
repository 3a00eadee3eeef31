// The token verifier: checks a bearer JWT's signature against the trusted keys (the identity
// provider's JWKS, a local key file, the built-in provider's keys) and its claims, with jose. Every
// token must expire (`exp`); one signed by the built-in provider must name the provider as its issuer.

import { decodeProtectedHeader, errors, jwtVerify, type JWK, type JWTPayload, type JWTVerifyOptions } from 'jose';
import type { Clock, Logger } from '../lib/index.js';
import { UnauthorizedError } from '../ngsi/index.js';
import { createJwksCache, type JwksCache } from './jwks-cache.js';
import type { JwkSet } from './jwk-set.js';
import { createKeyRing, hasSameKeys, type KeyCandidate, type KeyRing, type TokenHeader } from './key-ring.js';
import { loadKeyFile } from './key-file.js';
import { REASONS, refusalOf, unauthorized } from './token-errors.js';

export interface TokenVerifierOptions {
  /** JWKS URL of the identity provider ('' or undefined: none). */
  jwksUri?: string;
  /** A local public key file: PEM (SPKI "PUBLIC KEY", or an X.509 certificate), or a JSON JWK / JWKS. */
  publicKeyFile?: string;
  /**
   * The built-in identity provider's public keys, trusted in-process; called per verification, cheap.
   * The same key objects at each call keep the imported keys.
   */
  localKeys?: () => { keys: JWK[] } | undefined;
  /** Expected `iss` ('' or undefined: not checked, but for tokens signed by a local key, see localIssuer). */
  issuer?: string;
  /**
   * The built-in identity provider's `iss`, expected of the tokens its keys signed when `issuer` is
   * not set; read at each verification (the port may be known only once listening).
   */
  localIssuer?: () => string;
  /** Expected `aud` ('' or undefined: not checked). */
  audience?: string;
  clockToleranceSec: number;
  /** Least ms between two JWKS fetches (the start-up fetch and unknown-kid refetches alike). */
  refreshIntervalMs: number;
  /** ms allowed for one JWKS fetch. */
  timeoutMs: number;
  /** Where the last good JWKS is kept, so tokens verify while the identity provider is out of reach after a restart. */
  cacheFile?: string;
  /** Injectable for tests; default: the global fetch. */
  fetch?: typeof fetch;
  /** "Now" for exp/nbf checks and for the fetch rate limit. */
  clock: Clock;
  log: Logger;
}

/** A verified token: its claims, and whether one of the built-in identity provider's keys signed it. */
export interface VerifiedToken {
  claims: JWTPayload;
  isLocal: boolean;
}

export interface TokenVerifier {
  /** The verified payload; rejects with an UnauthorizedError whose detail says why, never quoting the token. */
  verify(token: string): Promise<JWTPayload>;
  /** As verify, also telling whether the built-in identity provider signed the token. */
  verifyToken(token: string): Promise<VerifiedToken>;
  /** Loads the key file and the JWKS cache file, and starts one background JWKS fetch. Never rejects. */
  start(): Promise<void>;
  /** Whether the JWKS cache holds keys (fetched, or read from the cache file); false without a JWKS URI. */
  hasJwksKeys(): boolean;
  close(): void;
}

/** Asymmetric signatures only: `none` and the HS* family (a shared secret) are refused. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const ACCEPTED_ALGORITHMS: ReadonlySet<string> = new Set(ALGORITHMS);
/** NOTE: Node refuses request headers over 16 KiB, so no bearer token is longer. */
const MAX_TOKEN_LENGTH = 16 * 1024;
/** header.payload.signature in base64url; an empty signature is let through so `alg: none` is named as such. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const NO_KEYS: JwkSet = { keys: [] };

/** The protected header of a compact JWS with an accepted algorithm; anything else is refused here. */
function readHeader(token: string): TokenHeader {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token)) {
    throw unauthorized(REASONS.malformed);
  }
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw unauthorized(REASONS.malformed);
  }
  const { alg, kid } = header;
  if (typeof alg !== 'string' || !ACCEPTED_ALGORITHMS.has(alg)) throw unauthorized(REASONS.unsupportedAlgorithm);
  if (kid === undefined) return { alg };
  if (typeof kid !== 'string') throw unauthorized(REASONS.malformed);
  return { alg, kid };
}

function hasSubject(payload: JWTPayload): boolean {
  return typeof payload.sub === 'string' && payload.sub !== '';
}

/** The keys of a key file; a bad one is logged and verifies nothing. */
function readKeyFile(path: string, log: Logger): Promise<JwkSet> {
  return loadKeyFile(path).then(
    (set) => {
      log.info('loaded the public key file', { file: path, keys: set.keys.length });
      return set;
    },
    (err: unknown) => {
      log.error('the public key file verifies no token', { file: path, err });
      return NO_KEYS;
    },
  );
}

/** The payload verified by the first candidate key whose signature matches, with the claims expected of that key's tokens. */
async function verifyWithAny(token: string, keys: readonly KeyCandidate[], options: (isLocal: boolean) => JWTVerifyOptions): Promise<VerifiedToken> {
  let refusal: unknown;
  for (const { key, isLocal } of keys) {
    try {
      const { payload } = await jwtVerify(token, key, options(isLocal));
      if (!hasSubject(payload)) throw unauthorized(REASONS.noSubject);
      return { claims: payload, isLocal };
    } catch (err) {
      // jose checks the signature before any claim: another error means this key is the signer's.
      if (!(err instanceof errors.JWSSignatureVerificationFailed)) throw err;
      refusal = err;
    }
  }
  throw refusal;
}

export function createTokenVerifier(opts: TokenVerifierOptions): TokenVerifier {
  const { clock, log } = opts;
  const jwks: JwksCache = createJwksCache({
    uri: opts.jwksUri ?? '',
    cacheFile: opts.cacheFile,
    refreshIntervalMs: opts.refreshIntervalMs,
    timeoutMs: opts.timeoutMs,
    fetch: opts.fetch ?? fetch,
    clock,
    log,
  });
  let keyFile: Promise<JwkSet> | undefined;
  let ring: KeyRing = createKeyRing([]);

  /** The key file, read once. */
  const keyFileKeys = (): Promise<JwkSet> => {
    const path = opts.publicKeyFile ?? '';
    if (path === '') return Promise.resolve(NO_KEYS);
    keyFile ??= readKeyFile(path, log);
    return keyFile;
  };

  /** The ring over the keys trusted now; rebuilt only when they changed, so jose's import cache survives. */
  const currentRing = async (): Promise<KeyRing> => {
    const keys = [...jwks.current().keys, ...(await keyFileKeys()).keys];
    const localKeys = opts.localKeys?.()?.keys ?? [];
    if (!hasSameKeys(ring.keys, keys) || !hasSameKeys(ring.localKeys, localKeys)) ring = createKeyRing(keys, localKeys);
    return ring;
  };

  /**
   * NOTE: `exp` is required: a token without one would be good forever, past any deletion of its
   * subject. A token the built-in provider signed must name it as issuer even when no issuer is
   * configured; tokens of other keys keep the configured check (none by default).
   */
  const verifyOptions = (isLocal: boolean): JWTVerifyOptions => {
    const issuer = opts.issuer || (isLocal ? opts.localIssuer?.() : undefined);
    return {
      algorithms: ALGORITHMS,
      clockTolerance: opts.clockToleranceSec,
      currentDate: new Date(clock.now()),
      requiredClaims: ['sub', 'exp'],
      ...(issuer ? { issuer } : {}),
      ...(opts.audience ? { audience: opts.audience } : {}),
    };
  };

  /**
   * The candidate keys for a token. NOTE: a kid no key has is first taken for a key the provider
   * rotated in (a refetch, rate-limited), and only then matched against the keys without a kid. A
   * kid-less key file beside a JWKS thus costs a token the wait for a fetch at most once per interval.
   */
  const findKeys = async (header: TokenHeader): Promise<KeyCandidate[]> => {
    const keys = await (await currentRing()).candidates(header);
    if (keys.length > 0) return keys;
    await jwks.refresh();
    const refreshed = await currentRing();
    const refetched = await refreshed.candidates(header);
    if (refetched.length > 0 || header.kid === undefined) return refetched;
    return refreshed.kidlessCandidates(header.alg);
  };

  const verifyToken = async (token: string): Promise<VerifiedToken> => {
    const header = readHeader(token);
    jwks.refreshIfStale();
    const keys = await findKeys(header);
    if (keys.length === 0) throw unauthorized(REASONS.unknownKey);
    try {
      return await verifyWithAny(token, keys, verifyOptions);
    } catch (err) {
      if (err instanceof UnauthorizedError) throw err;
      const refusal = refusalOf(err);
      if (refusal.detail === REASONS.unverifiable) {
        // Not the token's fault: a trusted key jose refuses, e.g. an RSA key under 2048 bits.
        log.warn('a trusted key cannot verify tokens', { alg: header.alg, reason: err instanceof Error ? err.message : String(err) });
      }
      throw refusal;
    }
  };

  return {
    verify: async (token) => (await verifyToken(token)).claims,
    verifyToken,
    async start() {
      await Promise.all([keyFileKeys(), jwks.loadCacheFile()]);
      void jwks.refresh();
    },
    hasJwksKeys: () => jwks.hasKeys(),
    close() {
      jwks.close();
    },
  };
}
