// The last good JWKS on disk, so tokens still verify after a restart while the identity provider is
// out of reach. Written atomically (temp file, fsync, rename); a missing or damaged file reads as none.

import { open, readFile, rename, rm } from 'node:fs/promises';
import { uuid } from '../lib/index.js';
import { parseJwkSet, type JwkSet } from './jwk-set.js';

export interface CachedJwks {
  set: JwkSet;
  /** When the keys were fetched (epoch ms). */
  fetchedAt: number;
}

class JwksCacheFileError extends Error {
  override name = 'JwksCacheFileError';
}

/**
 * The cached key set of `uri`, or `undefined` when there is no cache file. NOTE: a cache written for
 * another URI is ignored: after the identity provider changes, the old one's keys must not stay trusted.
 */
export async function readJwksCache(file: string, uri: string): Promise<CachedJwks | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new JwksCacheFileError('the cache file cannot be read', { cause: err });
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (err) {
    throw new JwksCacheFileError('the cache file is not JSON', { cause: err });
  }
  const set = parseJwkSet(document);
  if (set === undefined) throw new JwksCacheFileError('the cache file holds no key set');
  // NOTE: parseJwkSet accepted an object, so the two fields below can be read from it.
  const { uri: cachedUri, fetchedAt } = document as { uri?: unknown; fetchedAt?: unknown };
  if (cachedUri !== uri) return undefined;
  return { set, fetchedAt: typeof fetchedAt === 'number' ? fetchedAt : 0 };
}

export async function writeJwksCache(file: string, uri: string, cached: CachedJwks): Promise<void> {
  const text = JSON.stringify({ uri, fetchedAt: cached.fetchedAt, keys: cached.set.keys });
  await writeFileAtomically(file, text);
}

/** Readers see the old file or the new one, never a part; the fsync makes that hold across a power cut. */
async function writeFileAtomically(file: string, text: string): Promise<void> {
  const temp = `${file}.${uuid()}.tmp`;
  try {
    const handle = await open(temp, 'w', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw err;
  }
}

function isNotFound(err: unknown): boolean {
  return err instanceof Error && 'code' in err && err.code === 'ENOENT';
}
