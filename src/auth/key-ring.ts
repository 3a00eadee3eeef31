// Key selection over every trusted key (the JWKS, the key file, the built-in identity provider's
// in-process keys): which public keys may have signed a token, judged from its protected header, and
// whether each is the provider's own. jose imports and caches the keys.

import { createLocalJWKSet, errors, type CryptoKey, type JWK, type LocalJWKSet } from 'jose';

export interface TokenHeader {
  alg: string;
  kid?: string;
}

/** A key that may have signed a token; `isLocal`: one of the built-in identity provider's keys. */
export interface KeyCandidate {
  key: CryptoKey;
  isLocal: boolean;
}

export interface KeyRing {
  /** The trusted keys from outside (JWKS, key file) this ring was built from, in order. */
  readonly keys: readonly JWK[];
  /** The built-in identity provider's keys this ring was built from. */
  readonly localKeys: readonly JWK[];
  /**
   * The keys that may have signed a token with this header: with a `kid`, the keys with that kid;
   * without, every key. Either way only keys whose type (and `alg`, `use`, `key_ops` when present)
   * fit the algorithm. Outside keys first.
   */
  candidates(header: TokenHeader): Promise<KeyCandidate[]>;
  /** The keys without a kid that fit the algorithm (a PEM key file has none): tried for a kid no key has. */
  kidlessCandidates(alg: string): Promise<KeyCandidate[]>;
}

const tagged = (keys: CryptoKey[], isLocal: boolean): KeyCandidate[] => keys.map((key) => ({ key, isLocal }));

export function createKeyRing(keys: readonly JWK[], localKeys: readonly JWK[] = []): KeyRing {
  const outside = createLocalJWKSet({ keys: [...keys] });
  const local = createLocalJWKSet({ keys: [...localKeys] });
  // NOTE: the provider's keys always have a kid (their thumbprint).
  const kidless = createLocalJWKSet({ keys: keys.filter((key) => key.kid === undefined) });
  return {
    keys,
    localKeys,
    candidates: async (header) => [...tagged(await matching(outside, header), false), ...tagged(await matching(local, header), true)],
    kidlessCandidates: async (alg) => tagged(await matching(kidless, { alg }), false),
  };
}

/** True when both lists hold the same key objects: the ring built from one serves the other. */
export function hasSameKeys(a: readonly JWK[], b: readonly JWK[]): boolean {
  return a.length === b.length && a.every((key, i) => key === b[i]);
}

async function matching(set: LocalJWKSet, header: TokenHeader): Promise<CryptoKey[]> {
  try {
    return [await set(header.kid === undefined ? { alg: header.alg } : { alg: header.alg, kid: header.kid })];
  } catch (err) {
    if (err instanceof errors.JWKSMultipleMatchingKeys) {
      // NOTE: jose skips the candidates it cannot import and yields the rest.
      const keys: CryptoKey[] = [];
      for await (const key of err) keys.push(key);
      return keys;
    }
    // No key fits, or the one that fits cannot be imported (malformed, private, a curve WebCrypto
    // lacks): none to try. NOTE: jose and WebCrypto report import failures with several error types.
    return [];
  }
}
