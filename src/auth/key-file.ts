// A local public key file that verifies tokens: PEM (an SPKI public key or an X.509 certificate),
// or JSON (one JWK, or a JWKS). Read as a key set, so it joins the JWKS in key selection.

import { readFile } from 'node:fs/promises';
import { exportJWK, importSPKI, importX509, type CryptoKey } from 'jose';
import { parseJwkOrSet, type JwkSet } from './jwk-set.js';

class KeyFileError extends Error {
  override name = 'KeyFileError';
}

const PEM_BLOCK = /-----BEGIN (PUBLIC KEY|CERTIFICATE)-----[\s\S]+?-----END \1-----/;
/**
 * One algorithm per key type. NOTE: a PEM names no algorithm but WebCrypto imports a key for one;
 * the first that accepts the key tells its type. The exported JWK has no `alg`, so an RSA key
 * verifies RS* and PS* tokens alike.
 */
const PROBE_ALGORITHMS = ['RS256', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

export async function loadKeyFile(path: string): Promise<JwkSet> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new KeyFileError(`${path} cannot be read`, { cause: err });
  }
  const set = text.trimStart().startsWith('{') ? parseJson(path, text) : await parsePem(path, text);
  if (set.keys.length === 0) throw new KeyFileError(`${path} holds no public key that verifies signatures`);
  return set;
}

function parseJson(path: string, text: string): JwkSet {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (err) {
    throw new KeyFileError(`${path} is not JSON`, { cause: err });
  }
  const set = parseJwkOrSet(document);
  if (set === undefined) throw new KeyFileError(`${path} is neither a JWK nor a JWKS`);
  return set;
}

async function parsePem(path: string, text: string): Promise<JwkSet> {
  const match = PEM_BLOCK.exec(text);
  if (match === null) {
    throw new KeyFileError(`${path} holds no PEM public key ("BEGIN PUBLIC KEY") or certificate ("BEGIN CERTIFICATE")`);
  }
  const [pem, label] = match;
  const importPem = label === 'CERTIFICATE' ? importX509 : importSPKI;
  for (const alg of PROBE_ALGORITHMS) {
    let key: CryptoKey;
    try {
      key = await importPem(pem, alg, { extractable: true });
    } catch {
      continue;
    }
    return { keys: [await exportJWK(key)] };
  }
  throw new KeyFileError(`${path} holds a key of a type no accepted algorithm uses (RSA, EC P-256/384/521, Ed25519)`);
}
