// The token verifier's checks: accepted algorithms, signatures, time claims with the clock tolerance,
// issuer, audience, subject, malformed input, and refusals that never quote the token.

import { createSign, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { createTokenVerifier, type TokenVerifier, type TokenVerifierOptions } from '../../src/auth/index.js';
import { UnauthorizedError } from '../../src/ngsi/index.js';
import {
  AUDIENCE, base64url, capturingLogger, ISSUER, mint, signingKey, startJwksServer, T0, testClock,
  type JwksServer, type SigningKey,
} from './support.js';

let server: JwksServer;
let rsa: SigningKey;
let ec: SigningKey;
const others: Record<string, SigningKey> = {};

beforeAll(async () => {
  rsa = await signingKey('RS256', 'rsa-1');
  ec = await signingKey('ES256', 'ec-1');
  for (const alg of ['RS512', 'PS256', 'ES384', 'ES512', 'EdDSA']) others[alg] = await signingKey(alg, `${alg}-1`);
  server = await startJwksServer([rsa.jwk, ec.jwk, ...Object.values(others).map((k) => k.jwk)]);
});
afterAll(() => server.close());

function verifier(overrides: Partial<TokenVerifierOptions> = {}): TokenVerifier & { clock: ReturnType<typeof testClock> } {
  const clock = testClock();
  const v = createTokenVerifier({
    jwksUri: server.url, issuer: ISSUER, audience: AUDIENCE, clockToleranceSec: 30, refreshIntervalMs: 30_000,
    timeoutMs: 2_000, clock, log: capturingLogger().log, ...overrides,
  });
  return Object.assign(v, { clock });
}

/** The refusal's detail, checked to be a 401 that quotes no part of the token. */
async function refusal(v: TokenVerifier, token: string): Promise<string> {
  const err: unknown = await v.verify(token).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(UnauthorizedError);
  // NOTE: checked just above.
  const { status, detail = '', message } = err as UnauthorizedError;
  expect(status).toBe(401);
  for (const part of token.split('.').filter((p) => p.length >= 8)) {
    expect(detail).not.toContain(part);
    expect(message).not.toContain(part);
  }
  return detail;
}

describe('createTokenVerifier: signatures and algorithms', () => {
  it('accepts a valid RS256 token and resolves with its payload', async () => {
    const v = verifier();
    const payload = await v.verify(await mint(rsa, { roles: ['a'] }));
    expect(payload).toMatchObject({ sub: 'user-1', iss: ISSUER, aud: AUDIENCE, roles: ['a'] });
    v.close();
  });

  it('accepts a valid ES256 token', async () => {
    const v = verifier();
    expect((await v.verify(await mint(ec))).sub).toBe('user-1');
    v.close();
  });

  it.each(['RS512', 'PS256', 'ES384', 'ES512', 'EdDSA'])('accepts a valid %s token', async (alg) => {
    const v = verifier();
    expect((await v.verify(await mint(others[alg]!))).sub).toBe('user-1');
    v.close();
  });

  it('refuses alg none as an unsupported algorithm', async () => {
    const v = verifier();
    const iat = Math.floor(T0 / 1000);
    const token = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ sub: 'user-1', iss: ISSUER, aud: AUDIENCE, iat, exp: iat + 60 })}.`;
    expect(await refusal(v, token)).toMatch(/unsupported algorithm/);
    v.close();
  });

  it('refuses an HS256 token whatever its secret, even naming a trusted kid', async () => {
    const v = verifier();
    const secret = new TextEncoder().encode('a shared secret of thirty-two bytes!');
    const token = await new SignJWT({ sub: 'user-1', iss: ISSUER, aud: AUDIENCE })
      .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' }).setIssuedAt(T0 / 1000).setExpirationTime(T0 / 1000 + 60).sign(secret);
    expect(await refusal(v, token)).toMatch(/unsupported algorithm/);
    v.close();
  });

  it('refuses a token whose payload was changed after signing (bad signature)', async () => {
    const v = verifier();
    const [header, payload, signature] = (await mint(rsa)).split('.');
    const claims: unknown = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    // NOTE: the payload of a token jose signed is a JSON object.
    const tampered = `${header}.${base64url({ ...(claims as object), sub: 'admin' })}.${signature}`;
    expect(await refusal(v, tampered)).toMatch(/bad signature/);
    v.close();
  });

  it('refuses a token whose signature was changed (bad signature)', async () => {
    const v = verifier();
    const [header, payload, signature] = (await mint(ec)).split('.');
    const flipped = Buffer.from(signature!, 'base64url');
    flipped[10] = flipped[10]! ^ 0xff;
    expect(await refusal(v, `${header}.${payload}.${flipped.toString('base64url')}`)).toMatch(/bad signature/);
    v.close();
  });

  it('refuses a token signed by a foreign key that claims a trusted kid (bad signature)', async () => {
    const v = verifier();
    const foreign = await signingKey('RS256', 'rsa-1');
    expect(await refusal(v, await mint(foreign))).toMatch(/bad signature/);
    v.close();
  });

  it('refuses a token whose kid no trusted key has (unknown key)', async () => {
    const v = verifier();
    const stranger = await signingKey('ES256', 'stranger');
    expect(await refusal(v, await mint(stranger))).toMatch(/unknown key/);
    v.close();
  });

  it('tries every key of the algorithm for a token without kid, and accepts the one that verifies', async () => {
    const first = await signingKey('ES256', undefined);
    const second = await signingKey('ES256', undefined);
    const v = verifier({ jwksUri: '', localKeys: () => ({ keys: [first.jwk, second.jwk] }) });
    expect((await v.verify(await mint(second))).sub).toBe('user-1');
    const foreign = await signingKey('ES256', undefined);
    expect(await refusal(v, await mint(foreign))).toMatch(/bad signature/);
    v.close();
  });

  it('refuses a token whose trusted key jose refuses (RSA under 2048 bits), and warns', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'weak', alg: 'RS256' };
    const { log, lines } = capturingLogger();
    const v = verifier({ jwksUri: '', localKeys: () => ({ keys: [jwk] }), log });
    const iat = Math.floor(T0 / 1000);
    const input = `${base64url({ alg: 'RS256', kid: 'weak' })}.${base64url({ sub: 'user-1', iss: ISSUER, aud: AUDIENCE, iat, exp: iat + 60 })}`;
    const token = `${input}.${createSign('RSA-SHA256').update(input).sign(privateKey).toString('base64url')}`;
    expect(await refusal(v, token)).toMatch(/cannot be verified/);
    expect(lines.some((l) => l.includes('"level":"warn"') && l.includes('a trusted key cannot verify tokens'))).toBe(true);
    v.close();
  });

  it('trusts the in-process keys, asked on every verification', async () => {
    const local = await signingKey('ES256', 'local-1');
    let keys = [local.jwk];
    const v = verifier({ jwksUri: '', localKeys: () => ({ keys }) });
    expect((await v.verify(await mint(local))).sub).toBe('user-1');
    keys = [];
    expect(await refusal(v, await mint(local))).toMatch(/unknown key/);
    v.close();
  });
});

describe('createTokenVerifier: claims', () => {
  it('refuses a token expired beyond the clock tolerance', async () => {
    const v = verifier();
    const iat = Math.floor(T0 / 1000) - 7200;
    expect(await refusal(v, await mint(rsa, { iat, exp: iat + 3600 }))).toMatch(/expired/);
    v.close();
  });

  it('accepts a token expired within the clock tolerance', async () => {
    const v = verifier();
    const now = Math.floor(T0 / 1000);
    expect((await v.verify(await mint(rsa, { iat: now - 60, exp: now - 20 }))).sub).toBe('user-1');
    v.close();
  });

  it('refuses a token whose nbf is in the future beyond the tolerance, accepts one within it', async () => {
    const v = verifier();
    const now = Math.floor(T0 / 1000);
    expect(await refusal(v, await mint(rsa, { nbf: now + 120 }))).toMatch(/not yet valid/);
    expect((await v.verify(await mint(rsa, { nbf: now + 20 }))).sub).toBe('user-1');
    v.close();
  });

  it('judges time by the injected clock', async () => {
    const v = verifier();
    const token = await mint(rsa);
    expect((await v.verify(token)).sub).toBe('user-1');
    v.clock.advance(2 * 3600_000);
    expect(await refusal(v, token)).toMatch(/expired/);
    const later = await mint(rsa, { nbf: Math.floor(T0 / 1000) });
    v.clock.set(T0 - 3600_000);
    expect(await refusal(v, later)).toMatch(/not yet valid/);
    v.clock.set(T0);
    expect((await v.verify(later)).sub).toBe('user-1');
    v.close();
  });

  it('refuses a token of another issuer', async () => {
    const v = verifier();
    expect(await refusal(v, await mint(rsa, { iss: 'https://evil.example/' }))).toMatch(/wrong issuer/);
    v.close();
  });

  it('refuses a token for another audience, accepts one listing ours among others', async () => {
    const v = verifier();
    expect(await refusal(v, await mint(rsa, { aud: 'another-service' }))).toMatch(/wrong audience/);
    expect((await v.verify(await mint(rsa, { aud: ['account', AUDIENCE] }))).sub).toBe('user-1');
    v.close();
  });

  it('checks neither issuer nor audience when they are not configured', async () => {
    const v = verifier({ issuer: '', audience: '' });
    expect((await v.verify(await mint(rsa, { iss: 'https://other.example/', aud: 'x' }))).sub).toBe('user-1');
    v.close();
  });

  it('refuses a token without a subject, or with an empty one', async () => {
    const v = verifier();
    expect(await refusal(v, await mint(rsa, { sub: undefined }))).toMatch(/no subject/);
    expect(await refusal(v, await mint(rsa, { sub: '' }))).toMatch(/no subject/);
    v.close();
  });
});

describe('createTokenVerifier: malformed input', () => {
  it.each([
    ['an empty string', ''],
    ['a word', 'garbage'],
    ['a bearer header value', 'Bearer abc.def.ghi'],
    ['dots only', '..'],
    ['two parts', 'abc.def'],
    ['four parts', 'a.b.c.d'],
    ['a header that is not JSON', `${Buffer.from('not json').toString('base64url')}.e30.c2ln`],
    ['a header that is not an object', `${base64url([1, 2])}.e30.c2ln`],
    ['a numeric kid', `${base64url({ alg: 'RS256', kid: 7 })}.e30.c2ln`],
    ['a token over 16 KiB', `${base64url({ alg: 'RS256' })}.${'A'.repeat(17_000)}.c2ln`],
  ])('refuses %s as malformed', async (_name, token) => {
    const v = verifier();
    expect(await refusal(v, token)).toMatch(/malformed/);
    v.close();
  });

  it('refuses a signed token whose payload is not JSON', async () => {
    const v = verifier();
    const [header, , signature] = (await mint(rsa)).split('.');
    expect(await refusal(v, `${header}.${Buffer.from('{sub:').toString('base64url')}.${signature}`)).toMatch(/signature|malformed/);
    v.close();
  });
});

describe('createTokenVerifier: logging', () => {
  it('writes no log line that contains a token or one of its parts', async () => {
    const { log, lines } = capturingLogger();
    const v = verifier({ log });
    await v.start();
    const stranger = await signingKey('ES256', 'stranger');
    const tokens = [
      await mint(rsa), await mint(ec, { exp: 1 }), await mint(stranger), await mint(rsa, { iss: 'x' }), 'garbage.token.here',
    ];
    for (const token of tokens) await v.verify(token).catch(() => undefined);
    v.close();
    expect(lines.length).toBeGreaterThan(0);
    for (const token of tokens) {
      for (const part of token.split('.').filter((p) => p.length >= 8)) {
        for (const line of lines) expect(line).not.toContain(part);
      }
    }
  });
});

describe('createTokenVerifier: expiry, and the tokens of the built-in identity provider', () => {
  const OWN_ISSUER = 'http://127.0.0.1:1026';
  let own: SigningKey;
  let ownKeys: { keys: SigningKey['jwk'][] };
  beforeAll(async () => {
    own = await signingKey('ES256', 'own-1');
    ownKeys = { keys: [own.jwk] };
  });
  /** The JWKS server's keys (no issuer configured) beside the provider's own. */
  const withProvider = (overrides: Partial<TokenVerifierOptions> = {}): ReturnType<typeof verifier> =>
    verifier({ issuer: '', localKeys: () => ownKeys, localIssuer: () => OWN_ISSUER, ...overrides });

  it('refuses a token without exp, whoever signed it, saying so', async () => {
    const v = withProvider();
    expect(await refusal(v, await mint(rsa, { exp: undefined }))).toMatch(/no expiry \(exp\)/);
    expect(await refusal(v, await mint(own, { iss: OWN_ISSUER, exp: undefined }))).toMatch(/no expiry \(exp\)/);
    v.close();
  });

  it('refuses a token of the provider\'s key naming another issuer, or none, when no issuer is configured', async () => {
    const v = withProvider();
    expect(await refusal(v, await mint(own, { iss: 'https://evil.example/' }))).toMatch(/wrong issuer/);
    expect(await refusal(v, await mint(own, { iss: undefined }))).toMatch(/no iss claim/);
    // Without a kid, the provider's key is still the one that verifies, and its issuer still checked.
    expect(await refusal(v, await mint({ ...own, kid: undefined }, { iss: 'https://evil.example/' }))).toMatch(/wrong issuer/);
    v.close();
  });

  it('accepts the provider\'s own tokens, telling them from those of other keys, which keep any issuer', async () => {
    const v = withProvider();
    expect(await v.verifyToken(await mint(own, { iss: OWN_ISSUER }))).toMatchObject({ isLocal: true, claims: { sub: 'user-1', iss: OWN_ISSUER } });
    expect(await v.verifyToken(await mint(rsa, { iss: 'https://keycloak.example/' }))).toMatchObject({ isLocal: false, claims: { sub: 'user-1' } });
    v.close();
  });

  it('checks a configured issuer on every token, the provider\'s included', async () => {
    const v = withProvider({ issuer: ISSUER });
    expect(await refusal(v, await mint(own, { iss: OWN_ISSUER }))).toMatch(/wrong issuer/);
    expect((await v.verifyToken(await mint(own, { iss: ISSUER }))).isLocal).toBe(true);
    expect(await refusal(v, await mint(rsa, { iss: OWN_ISSUER }))).toMatch(/wrong issuer/);
    v.close();
  });
});
