// Password and client secret hashes: scrypt with a random 16-byte salt, its cost parameters kept in
// the hash text (`scrypt$N$r$p$salt$hash`, base64url), so stronger settings can come later.
// NOTE: scripts/idp.mjs imports this file from dist/, so the broker and the script share one format.

import { randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto';

const SCHEME = 'scrypt';
/** N × r × 128 bytes = 32 MiB of memory per hash (OWASP suggests at least N = 2^15 with r = 8). */
const DEFAULT_PARAMS: ScryptParams = { N: 32_768, r: 8, p: 1 };
const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** Bounds on parameters read back from a hash, so a tampered row cannot exhaust memory or time. */
const MAX_N = 1_048_576;
const MAX_R = 32;
const MAX_P = 16;
const MAX_MEMORY = 256 * 1_048_576;

interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

interface ParsedHash {
  params: ScryptParams;
  salt: Buffer;
  key: Buffer;
}

const memoryOf = (params: ScryptParams): number => 128 * params.N * params.r * params.p + 4096;

/** Hashes a password or client secret; every call draws a new salt. */
export function hashSecret(secret: string): string {
  const salt = randomBytes(SALT_BYTES);
  const { N, r, p } = DEFAULT_PARAMS;
  const key = scryptSync(secret.normalize('NFC'), salt, KEY_BYTES, { N, r, p, maxmem: memoryOf(DEFAULT_PARAMS) });
  return [SCHEME, N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/**
 * hashSecret off the main thread (libuv's pool): for hashes made while requests are served, such as
 * the decoys that unknown names are checked against, whose first use must not stall the event loop.
 */
export async function hashSecretAsync(secret: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const { N, r, p } = DEFAULT_PARAMS;
  const key = await new Promise<Buffer>((resolve, reject) => {
    scrypt(secret.normalize('NFC'), salt, KEY_BYTES, { N, r, p, maxmem: memoryOf(DEFAULT_PARAMS) }, (err, out) => (err ? reject(err) : resolve(out)));
  });
  return [SCHEME, N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

function parseHash(encoded: string): ParsedHash | undefined {
  const parts = encoded.split('$');
  if (parts.length !== 6 || parts[0] !== SCHEME) return undefined;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (N === undefined || r === undefined || p === undefined) return undefined;
  const isPowerOfTwo = Number.isInteger(N) && N > 1 && (N & (N - 1)) === 0;
  if (!isPowerOfTwo || N > MAX_N || !Number.isInteger(r) || r < 1 || r > MAX_R || !Number.isInteger(p) || p < 1 || p > MAX_P) return undefined;
  if (memoryOf({ N, r, p }) > MAX_MEMORY) return undefined;
  const salt = Buffer.from(parts[4] ?? '', 'base64url');
  const key = Buffer.from(parts[5] ?? '', 'base64url');
  if (salt.length < 8 || key.length < 16) return undefined;
  return { params: { N, r, p }, salt, key };
}

/** Whether a text is a hash this module can verify. */
export function isSecretHash(encoded: string): boolean {
  return parseHash(encoded) !== undefined;
}

/**
 * Whether the secret matches the hash, compared in constant time. Runs scrypt off the main thread
 * (libuv's pool), so a login does not stall other requests. An unreadable hash matches nothing.
 */
export async function verifySecret(secret: string, encoded: string): Promise<boolean> {
  const parsed = parseHash(encoded);
  if (!parsed) return false;
  const { params, salt, key } = parsed;
  const derived = await new Promise<Buffer>((resolve, reject) => {
    scrypt(secret.normalize('NFC'), salt, key.length, { ...params, maxmem: memoryOf(params) }, (err, out) => (err ? reject(err) : resolve(out)));
  });
  return timingSafeEqual(derived, key);
}
