// Signing keys of the built-in identity provider: one key pair per algorithm, made on first start and
// kept in the store, so tokens issued before a restart still verify after it. The kid is the key's
// RFC 7638 thumbprint.

import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKeyInput, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import type { Logger, SigningKeyRecord } from '../lib/index.js';

export type SigningAlgorithm = 'RS256' | 'ES256';

export interface SigningKeyPersistence {
  /** Every key, newest first. */
  signingKeys(): SigningKeyRecord[];
  addSigningKey(key: SigningKeyRecord): void;
}

export interface SigningKeys {
  /** The key new tokens are signed with. */
  current: { kid: string; alg: SigningAlgorithm; privateKey: KeyObject };
  /** Public halves of every stored key, as served in the JWKS. */
  publicJwks: JWK[];
}

/** RFC 7638 §3.2: the required members of each key type, the only ones a public JWK needs. */
const PUBLIC_MEMBERS: Record<string, readonly string[]> = { EC: ['crv', 'kty', 'x', 'y'], RSA: ['e', 'kty', 'n'] };

function publicMembers(jwk: Record<string, unknown>): Record<string, string> {
  const names = PUBLIC_MEMBERS[String(jwk['kty'])];
  if (!names) throw new Error(`unsupported signing key type ${String(jwk['kty'])}`);
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = jwk[name];
    if (typeof value !== 'string') throw new Error(`signing key lacks its ${name} member`);
    out[name] = value;
  }
  return out;
}

/** RFC 7638 JWK thumbprint (SHA-256, base64url) of a public key. */
function jwkThumbprint(jwk: Record<string, unknown>): string {
  // Members in lexicographic order and no whitespace (§3.3): JSON.stringify of the sorted record.
  return createHash('sha256').update(JSON.stringify(publicMembers(jwk))).digest('base64url');
}

/**
 * NOTE: generated with node:crypto, synchronously, because the broker is built synchronously and its
 * JWKS must be complete before the first request; jose signs with the key as it is.
 */
function generateKey(alg: SigningAlgorithm, now: number): SigningKeyRecord {
  const { privateKey, publicKey } = alg === 'ES256'
    ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
    : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicJwk = publicMembers(publicKey.export({ format: 'jwk' }));
  return {
    kid: jwkThumbprint(publicJwk), alg, privateJwk: JSON.stringify(privateKey.export({ format: 'jwk' })), publicJwk: JSON.stringify(publicJwk), createdAt: now,
  };
}

/** The served form of a stored key: its public members only, whatever the stored text holds. */
function toPublicJwk(key: SigningKeyRecord): JWK {
  const parsed: unknown = JSON.parse(key.publicJwk);
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`signing key ${key.kid} is not a JWK`);
  // A parsed JSON object; publicMembers reads only the named string members.
  return { ...publicMembers(parsed as Record<string, unknown>), kid: key.kid, alg: key.alg, use: 'sig' };
}

/** The keys to sign and verify with; makes and stores a key for `alg` when there is none yet. */
export function loadSigningKeys(persistence: SigningKeyPersistence, alg: SigningAlgorithm, now: number, log: Logger): SigningKeys {
  let stored = persistence.signingKeys();
  let current = stored.find((k) => k.alg === alg);
  if (!current) {
    current = generateKey(alg, now);
    persistence.addSigningKey(current);
    log.info('signing key generated', { kid: current.kid, alg });
    stored = persistence.signingKeys();
  }
  const privateJwk: unknown = JSON.parse(current.privateJwk);
  // Node checks the JWK itself (the cast only names its input type): a bad stored key fails at start-up.
  const privateKey = createPrivateKey({ key: privateJwk as JsonWebKeyInput['key'], format: 'jwk' });
  if (jwkThumbprint(createPublicKey(privateKey).export({ format: 'jwk' })) !== current.kid) {
    throw new Error(`stored signing key ${current.kid} does not match its kid`);
  }
  return { current: { kid: current.kid, alg, privateKey }, publicJwks: stored.map(toPublicJwk) };
}
