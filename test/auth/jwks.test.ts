// The token verifier and the identity provider's JWKS: key rotation, the refetch rate limit, shared
// fetches, an endpoint that is down, slow or answers garbage, and the cache file for offline restarts.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTokenVerifier, type TokenVerifier, type TokenVerifierOptions } from '../../src/auth/index.js';
import {
  AUDIENCE, capturingLogger, ISSUER, mint, signingKey, startJwksServer, testClock, waitUntil,
  type JwksServer, type SigningKey,
} from './support.js';

const INTERVAL = 30_000;
let server: JwksServer;
let key: SigningKey;
let dir: string;
const open: TokenVerifier[] = [];

beforeEach(async () => {
  key = await signingKey('ES256', 'k1');
  server = await startJwksServer([key.jwk]);
  dir = await mkdtemp(join(tmpdir(), 'edgeld-jwks-'));
});
afterEach(async () => {
  for (const v of open.splice(0)) v.close();
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

function verifier(overrides: Partial<TokenVerifierOptions> = {}) {
  const clock = testClock();
  const { log, lines } = capturingLogger();
  const v = createTokenVerifier({
    jwksUri: server.url, issuer: ISSUER, audience: AUDIENCE, clockToleranceSec: 30, refreshIntervalMs: INTERVAL,
    timeoutMs: 2_000, clock, log, ...overrides,
  });
  open.push(v);
  return { v, clock, lines };
}

const warnings = (lines: string[]): string[] => lines.filter((l) => l.includes('"level":"warn"'));

describe('createTokenVerifier: JWKS fetching', () => {
  it('fetches the JWKS once in the background at start and verifies with it', async () => {
    const { v } = verifier();
    await v.start();
    expect((await v.verify(await mint(key))).sub).toBe('user-1');
    expect(server.requests).toBe(1);
  });

  it('shares one fetch among concurrent verifications that need it', async () => {
    const { v } = verifier();
    const tokens = await Promise.all(Array.from({ length: 20 }, () => mint(key)));
    const payloads = await Promise.all(tokens.map((t) => v.verify(t)));
    expect(payloads.every((p) => p.sub === 'user-1')).toBe(true);
    expect(server.requests).toBe(1);
  });

  it('refetches for a kid the provider rotated in, and accepts the token', async () => {
    const { v, clock } = verifier();
    await v.start();
    await v.verify(await mint(key));
    const rotated = await signingKey('RS256', 'k2');
    server.setKeys([key.jwk, rotated.jwk]);
    clock.advance(INTERVAL);
    expect((await v.verify(await mint(rotated, {}, clock.now()))).sub).toBe('user-1');
    expect(server.requests).toBe(2);
  });

  it('fetches at most once per refresh interval however many unknown kids arrive', async () => {
    const { v, clock } = verifier();
    await v.start();
    await server.waitForRequests(1);
    const strangers = await Promise.all(Array.from({ length: 10 }, (_, i) => signingKey('ES256', `unknown-${i}`)));
    const flood = async (): Promise<void> => {
      const tokens = await Promise.all(strangers.map((s) => mint(s, {}, clock.now())));
      const results = await Promise.allSettled(tokens.map((t) => v.verify(t)));
      expect(results.every((r) => r.status === 'rejected')).toBe(true);
      for (const t of tokens) await expect(v.verify(t)).rejects.toMatchObject({ detail: expect.stringMatching(/unknown key/) });
    };
    await flood();
    expect(server.requests).toBe(1);
    clock.advance(INTERVAL - 1);
    await flood();
    expect(server.requests).toBe(1);
    clock.advance(1);
    await flood();
    expect(server.requests).toBe(2);
    clock.advance(INTERVAL / 2);
    await flood();
    expect(server.requests).toBe(2);
  });

  it('keeps verifying with the fetched keys when the JWKS server is down', async () => {
    const { v, clock, lines } = verifier();
    await v.start();
    await v.verify(await mint(key));
    await server.close();
    clock.advance(INTERVAL);
    const stranger = await signingKey('ES256', 'k9');
    await expect(v.verify(await mint(stranger, {}, clock.now()))).rejects.toMatchObject({ detail: expect.stringMatching(/unknown key/) });
    expect((await v.verify(await mint(key, {}, clock.now()))).sub).toBe('user-1');
    expect(warnings(lines).some((l) => l.includes('could not fetch the JWKS'))).toBe(true);
  });

  it('starts without keys and without throwing when the JWKS server is down', async () => {
    await server.close();
    const { v, lines } = verifier();
    await v.start();
    await expect(v.verify(await mint(key))).rejects.toMatchObject({ status: 401, detail: expect.stringMatching(/unknown key/) });
    await waitUntil(() => warnings(lines).length > 0, 5_000, 'a warning');
  });

  it('verifies a token of a cached kid without waiting for a JWKS server that never answers', async () => {
    const { v, clock } = verifier({ timeoutMs: 10_000 });
    await v.start();
    await v.verify(await mint(key));
    server.answer('hang');
    // Old keys are refetched in the background; that fetch hangs, and the verification must not wait for it.
    clock.advance(3600_000);
    const started = Date.now();
    expect((await v.verify(await mint(key, {}, clock.now()))).sub).toBe('user-1');
    expect(Date.now() - started).toBeLessThan(1_000);
    await server.waitForRequests(2);
  });

  it('refuses a token of an unknown kid within about the timeout when the JWKS server never answers', async () => {
    const { v, clock } = verifier({ timeoutMs: 300 });
    await v.start();
    await v.verify(await mint(key));
    server.answer('hang');
    clock.advance(INTERVAL);
    const stranger = await signingKey('ES256', 'k9');
    const token = await mint(stranger, {}, clock.now());
    const started = Date.now();
    await expect(v.verify(token)).rejects.toMatchObject({ detail: expect.stringMatching(/unknown key/) });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1_500);
  });

  it.each([
    ['HTML', { status: 200, body: '<html><body>Service Unavailable</body></html>', contentType: 'text/html' }],
    ['text that is not JSON', { status: 200, body: '{"keys": [' }],
    ['JSON without keys', { status: 200, body: '{"error":"realm not found"}' }],
    ['keys that are not objects', { status: 200, body: '{"keys":["k1", 2]}' }],
    ['a JSON array', { status: 200, body: '[]' }],
    ['an error status', { status: 503, body: '{"keys":[]}' }],
    ['a reply over 1 MiB', { status: 200, body: JSON.stringify({ keys: [], pad: 'x'.repeat(1024 * 1024) }) }],
  ])('keeps the previous keys when the JWKS server answers %s', async (_name, answer) => {
    const { v, clock, lines } = verifier();
    await v.start();
    await v.verify(await mint(key));
    server.answer(answer);
    clock.advance(INTERVAL);
    const stranger = await signingKey('ES256', 'k9');
    await expect(v.verify(await mint(stranger, {}, clock.now()))).rejects.toMatchObject({ detail: expect.stringMatching(/unknown key/) });
    expect(server.requests).toBe(2);
    expect((await v.verify(await mint(key, {}, clock.now()))).sub).toBe('user-1');
    expect(warnings(lines).some((l) => l.includes('could not fetch the JWKS'))).toBe(true);
  });
});

describe('createTokenVerifier: JWKS cache file', () => {
  it('verifies after a restart with the JWKS server down, from the keys the previous run cached', async () => {
    const cacheFile = join(dir, 'jwks.json');
    const first = verifier({ cacheFile });
    await first.v.start();
    const token = await mint(key);
    await first.v.verify(token);
    await waitUntil(() => fileHasKid(cacheFile, 'k1'), 5_000, 'the cache file');
    first.v.close();
    await server.close();

    const second = verifier({ cacheFile });
    await second.v.start();
    expect((await second.v.verify(token)).sub).toBe('user-1');
    expect(second.lines.some((l) => l.includes('loaded the cached JWKS'))).toBe(true);
  });

  it('ignores a cache file written for another JWKS URI', async () => {
    const cacheFile = join(dir, 'jwks.json');
    await writeFile(cacheFile, JSON.stringify({ uri: 'https://old-idp.example/certs', fetchedAt: 0, keys: [key.jwk] }));
    await server.close();
    const { v } = verifier({ cacheFile });
    await v.start();
    await expect(v.verify(await mint(key))).rejects.toMatchObject({ detail: expect.stringMatching(/unknown key/) });
  });

  it('ignores a damaged cache file with a warning, and replaces it after the next fetch', async () => {
    const cacheFile = join(dir, 'jwks.json');
    await writeFile(cacheFile, '{"uri": "trunc');
    const { v, lines } = verifier({ cacheFile });
    await v.start();
    expect(warnings(lines).some((l) => l.includes('ignored the JWKS cache file'))).toBe(true);
    expect((await v.verify(await mint(key))).sub).toBe('user-1');
    await waitUntil(() => fileHasKid(cacheFile, 'k1'), 5_000, 'the cache file');
  });

  it('warns and keeps verifying when the cache file cannot be written', async () => {
    const cacheFile = join(dir, 'missing-dir', 'jwks.json');
    const { v, lines } = verifier({ cacheFile });
    await v.start();
    expect((await v.verify(await mint(key))).sub).toBe('user-1');
    await waitUntil(() => warnings(lines).some((l) => l.includes('could not write the JWKS cache file')), 5_000, 'a warning');
  });
});

/** Whether the cache file holds a key with this kid (false while it does not exist). */
async function fileHasKid(file: string, kid: string): Promise<boolean> {
  try {
    const cached: unknown = JSON.parse(await readFile(file, 'utf8'));
    // NOTE: the verifier writes { uri, fetchedAt, keys }.
    return (cached as { keys: Array<{ kid?: string }> }).keys.some((k) => k.kid === kid);
  } catch {
    return false;
  }
}
