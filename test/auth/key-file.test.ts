// The token verifier with a local public key file: PEM (SPKI public key, X.509 certificate), a JWK,
// a JWKS; a key file that cannot be used; a key file beside a JWKS.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exportSPKI, importPKCS8 } from 'jose';
import { createTokenVerifier, type TokenVerifier, type TokenVerifierOptions } from '../../src/auth/index.js';
import {
  AUDIENCE, capturingLogger, ISSUER, mint, signingKey, startJwksServer, testClock, type SigningKey,
} from './support.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'auth');
let dir: string;
const open: TokenVerifier[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgeld-keyfile-'));
});
afterEach(async () => {
  for (const v of open.splice(0)) v.close();
  await rm(dir, { recursive: true, force: true });
});

function verifier(overrides: Partial<TokenVerifierOptions>) {
  const { log, lines } = capturingLogger();
  const v = createTokenVerifier({
    issuer: ISSUER, audience: AUDIENCE, clockToleranceSec: 30, refreshIntervalMs: 30_000, timeoutMs: 2_000,
    clock: testClock(), log, ...overrides,
  });
  open.push(v);
  return { v, lines };
}

async function keyFile(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

/** A signing key whose public half is only in a PEM file: its JWK has neither kid nor alg. */
async function pemKey(alg: string): Promise<{ key: SigningKey; pem: string }> {
  const key = await signingKey(alg, undefined, { withAlg: false });
  return { key, pem: await exportSPKI(key.publicKey) };
}

describe('createTokenVerifier: public key file', () => {
  it.each(['RS256', 'PS384', 'ES256', 'ES384', 'ES512', 'EdDSA'])('verifies %s tokens with a PEM public key (SPKI)', async (alg) => {
    const { key, pem } = await pemKey(alg);
    const { v } = verifier({ publicKeyFile: await keyFile('key.pem', pem) });
    await v.start();
    expect((await v.verify(await mint(key))).sub).toBe('user-1');
  });

  it('verifies a token that carries a kid with the kid-less PEM key', async () => {
    const { key, pem } = await pemKey('RS256');
    const { v } = verifier({ publicKeyFile: await keyFile('key.pem', pem) });
    expect((await v.verify(await mint({ ...key, kid: 'realm-key-7' }))).sub).toBe('user-1');
    const foreign = await signingKey('RS256', 'realm-key-7');
    await expect(v.verify(await mint(foreign))).rejects.toMatchObject({ detail: expect.stringMatching(/bad signature/) });
  });

  it('verifies tokens with the public key of an X.509 certificate', async () => {
    const privateKey = await importPKCS8(await readFile(join(FIXTURES, 'test-signer.key.pem'), 'utf8'), 'ES256');
    const { v } = verifier({ publicKeyFile: join(FIXTURES, 'test-signer.cert.pem') });
    await v.start();
    const token = await mint({ alg: 'ES256', kid: undefined, privateKey });
    expect((await v.verify(token)).sub).toBe('user-1');
    const other = await signingKey('ES256', undefined);
    await expect(v.verify(await mint(other))).rejects.toMatchObject({ detail: expect.stringMatching(/bad signature/) });
  });

  it('verifies tokens with a JWK file', async () => {
    const key = await signingKey('ES256', 'file-1');
    const { v } = verifier({ publicKeyFile: await keyFile('key.json', JSON.stringify(key.jwk)) });
    expect((await v.verify(await mint(key))).sub).toBe('user-1');
  });

  it('verifies tokens with a JWKS file, choosing the key by kid', async () => {
    const a = await signingKey('RS256', 'a');
    const b = await signingKey('RS256', 'b');
    const { v } = verifier({ publicKeyFile: await keyFile('keys.json', JSON.stringify({ keys: [a.jwk, b.jwk] })) });
    expect((await v.verify(await mint(a))).sub).toBe('user-1');
    expect((await v.verify(await mint(b))).sub).toBe('user-1');
    await expect(v.verify(await mint({ ...b, kid: 'a' }))).rejects.toMatchObject({ detail: expect.stringMatching(/bad signature/) });
  });

  it.each([
    ['a missing file', null],
    ['a private key', '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n'],
    ['JSON that is no key', '{"hello":"world"}'],
    ['a symmetric JWK', '{"kty":"oct","k":"c2VjcmV0"}'],
    ['a damaged PEM', '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n'],
  ])('logs an error for %s and verifies nothing with it, without throwing', async (_name, text) => {
    const path = text === null ? join(dir, 'absent.pem') : await keyFile('bad', text);
    const { v, lines } = verifier({ publicKeyFile: path });
    await v.start();
    expect(lines.some((l) => l.includes('"level":"error"') && l.includes('the public key file verifies no token'))).toBe(true);
    const key = await signingKey('ES256', undefined);
    await expect(v.verify(await mint(key))).rejects.toMatchObject({ status: 401, detail: expect.stringMatching(/unknown key/) });
  });

  it('still refetches the JWKS for a rotated kid when a kid-less key file is configured too', async () => {
    const { pem } = await pemKey('RS256');
    const first = await signingKey('RS256', 'k1');
    const server = await startJwksServer([first.jwk]);
    try {
      const clock = testClock();
      const { v } = verifier({ publicKeyFile: await keyFile('key.pem', pem), jwksUri: server.url, clock });
      await v.start();
      await v.verify(await mint(first));
      const rotated = await signingKey('RS256', 'k2');
      server.setKeys([first.jwk, rotated.jwk]);
      clock.advance(30_000);
      expect((await v.verify(await mint(rotated, {}, clock.now()))).sub).toBe('user-1');
      expect(server.requests).toBe(2);
    } finally {
      await server.close();
    }
  });
});
