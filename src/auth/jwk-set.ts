// The shape check every key set passes before it is trusted, whatever its source: a JWKS endpoint,
// the cache file, the key file.

import type { JWK } from 'jose';

export interface JwkSet {
  keys: JWK[];
}

/** Key types of the accepted signature algorithms; `oct` (shared secrets) is deliberately absent. */
const PUBLIC_KEY_TYPES = new Set(['RSA', 'EC', 'OKP']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A verification key: a public key of an asymmetric type, not meant for encryption only. */
function isVerificationKey(key: Record<string, unknown>): boolean {
  if (typeof key['kty'] !== 'string' || !PUBLIC_KEY_TYPES.has(key['kty'])) return false;
  // NOTE: a member with a private part (`d`) is a leak at the provider, not a key to verify with.
  if ('d' in key) return false;
  return key['use'] === undefined || key['use'] === 'sig';
}

/**
 * The verification keys of a JWKS-shaped value, or `undefined` when it is not a JSON object with a
 * `keys` array of objects. Members that cannot verify signatures are dropped, so they count as absent.
 */
export function parseJwkSet(value: unknown): JwkSet | undefined {
  if (!isPlainObject(value) || !Array.isArray(value['keys'])) return undefined;
  const members: unknown[] = value['keys'];
  if (!members.every(isPlainObject)) return undefined;
  // NOTE: each member is an object with a known kty; jose checks the rest of a JWK when importing it.
  const keys = members.filter(isVerificationKey) as JWK[];
  return { keys };
}

/** A single JWK as a one-key set, or a JWKS; `undefined` for anything else. */
export function parseJwkOrSet(value: unknown): JwkSet | undefined {
  if (isPlainObject(value) && typeof value['kty'] === 'string' && !('keys' in value)) {
    return parseJwkSet({ keys: [value] });
  }
  return parseJwkSet(value);
}
