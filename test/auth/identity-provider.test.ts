// The built-in identity provider over a real store: grants, token claims, signing keys kept across
// restarts, and the secret hash format.

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { calculateJwkThumbprint, createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import {
  createIdentityProvider, hashSecret, isSecretHash, TokenRequestError, verifySecret, type IdentityProvider, type SigningAlgorithm,
} from '../../src/auth/index.js';
import { createFixedClock, silentLogger } from '../../src/lib/index.js';
import type { Store } from '../../src/store/index.js';
import { fileStore, memoryStore, T0, tempDir } from '../store/helpers.js';

const ISSUER = 'https://gateway.example';
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

let stores: Store[] = [];
afterEach(() => {
  for (const s of stores) s.close();
  stores = [];
});

function track(store: Store): Store {
  stores.push(store);
  return store;
}

function provider(store: Store, opts: { algorithm?: SigningAlgorithm; audience?: string; lifetime?: number } = {}): IdentityProvider {
  let n = 0;
  return createIdentityProvider({
    persistence: store.identity, clock: createFixedClock(T0), newId: () => `jti-${++n}`, issuer: () => ISSUER,
    tokenLifetimeSec: opts.lifetime ?? 3600, algorithm: opts.algorithm ?? 'ES256', log: silentLogger,
    ...(opts.audience !== undefined ? { audience: opts.audience } : {}),
  });
}

function seed(store: Store): void {
  store.identity.insertUser({
    username: 'alice', sub: 'urn:ngsi-ld:User:alice', passwordHash: hashSecret('correct horse'), givenName: 'Alice', familyName: 'Liddell',
    roles: ['operator'], groups: ['site-a'], createdAt: T0,
  });
  store.identity.insertClient({
    clientId: 'sensor-gw', sub: 'urn:ngsi-ld:Client:sensor-gw', secretHash: hashSecret('s3cret'), roles: ['writer'], groups: ['devices'], createdAt: T0,
  });
}

async function verify(idp: IdentityProvider, token: string) {
  return jwtVerify(token, createLocalJWKSet(idp.publicJwks()), { currentDate: new Date(T0), issuer: ISSUER });
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const err: unknown = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(TokenRequestError);
  const { code, message } = err as TokenRequestError; // NOTE: checked just above
  return { code, message };
}

describe('identity provider grants', () => {
  it.each(['ES256', 'RS256'] as const)('issues a client credentials token signed with %s', async (algorithm) => {
    const store = track(memoryStore());
    seed(store);
    const idp = provider(store, { algorithm });
    const res = await idp.issueToken({ grantType: 'client_credentials', client: { clientId: 'sensor-gw', clientSecret: 's3cret' } });
    expect(res).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    const { payload, protectedHeader } = await verify(idp, res.access_token);
    expect(protectedHeader).toMatchObject({ alg: algorithm, typ: 'JWT' });
    expect(payload).toEqual({
      iss: ISSUER, sub: 'urn:ngsi-ld:Client:sensor-gw', iat: T0 / 1000, exp: T0 / 1000 + 3600, jti: 'jti-1',
      client_id: 'sensor-gw', azp: 'sensor-gw', realm_access: { roles: ['writer'] }, groups: ['devices'],
    });
  });

  it('issues a password token with the user names, roles and groups, and the client as azp when one is given', async () => {
    const store = track(memoryStore());
    seed(store);
    const idp = provider(store, { audience: 'edgeld' });
    const res = await idp.issueToken({ grantType: 'password', username: 'alice', password: 'correct horse' });
    const { payload } = await verify(idp, res.access_token);
    expect(payload).toEqual({
      iss: ISSUER, aud: 'edgeld', sub: 'urn:ngsi-ld:User:alice', iat: T0 / 1000, exp: T0 / 1000 + 3600, jti: 'jti-1',
      preferred_username: 'alice', given_name: 'Alice', family_name: 'Liddell', realm_access: { roles: ['operator'] }, groups: ['site-a'],
    });
    const withClient = await idp.issueToken({
      grantType: 'password', username: 'alice', password: 'correct horse', client: { clientId: 'sensor-gw', clientSecret: 's3cret' },
    });
    expect((await verify(idp, withClient.access_token)).payload).toMatchObject({ sub: 'urn:ngsi-ld:User:alice', azp: 'sensor-gw' });
  });

  it('sets exp to iat plus the token lifetime', async () => {
    const store = track(memoryStore());
    seed(store);
    const idp = provider(store, { lifetime: 120 });
    const res = await idp.issueToken({ grantType: 'password', username: 'alice', password: 'correct horse' });
    const { payload } = await verify(idp, res.access_token);
    expect(res.expires_in).toBe(120);
    expect(payload.exp! - payload.iat!).toBe(120);
  });

  it('refuses a wrong password and an unknown user with the same invalid_grant', async () => {
    const store = track(memoryStore());
    seed(store);
    const idp = provider(store);
    const wrong = await refusal(idp.issueToken({ grantType: 'password', username: 'alice', password: 'wrong' }));
    const unknown = await refusal(idp.issueToken({ grantType: 'password', username: 'mallory', password: 'correct horse' }));
    expect(wrong).toEqual({ code: 'invalid_grant', message: 'Invalid username or password' });
    expect(unknown).toEqual(wrong);
  });

  it('refuses a wrong secret and an unknown client with the same invalid_client, in both grants', async () => {
    const store = track(memoryStore());
    seed(store);
    const idp = provider(store);
    const wrong = await refusal(idp.issueToken({ grantType: 'client_credentials', client: { clientId: 'sensor-gw', clientSecret: 'nope' } }));
    const unknown = await refusal(idp.issueToken({ grantType: 'client_credentials', client: { clientId: 'ghost', clientSecret: 's3cret' } }));
    const inPassword = await refusal(idp.issueToken({
      grantType: 'password', username: 'alice', password: 'correct horse', client: { clientId: 'sensor-gw', clientSecret: 'nope' },
    }));
    expect(wrong).toEqual({ code: 'invalid_client', message: 'Client authentication failed' });
    expect(unknown).toEqual(wrong);
    expect(inPassword).toEqual(wrong);
  });
});

describe('identity provider signing keys', () => {
  it('serves public keys only, with the RFC 7638 thumbprint as kid', async () => {
    for (const algorithm of ['ES256', 'RS256'] as const) {
      const store = track(memoryStore());
      const { keys } = provider(store, { algorithm }).publicJwks();
      expect(keys).toHaveLength(1);
      const key = keys[0]!;
      for (const member of PRIVATE_MEMBERS) expect(key, member).not.toHaveProperty(member);
      expect(key).toMatchObject({ alg: algorithm, use: 'sig', kty: algorithm === 'ES256' ? 'EC' : 'RSA' });
      expect(key.kid).toBe(await calculateJwkThumbprint(key));
    }
  });

  it('keeps its key in the store: a token issued before a restart verifies after it', async () => {
    const tmp = tempDir();
    try {
      const first = fileStore(tmp.file);
      seed(first);
      const before = provider(first);
      const token = (await before.issueToken({ grantType: 'password', username: 'alice', password: 'correct horse' })).access_token;
      first.close();
      const second = track(fileStore(tmp.file));
      const after = provider(second);
      expect(after.publicJwks()).toEqual(before.publicJwks());
      expect((await verify(after, token)).payload.sub).toBe('urn:ngsi-ld:User:alice');
    } finally {
      tmp.cleanup();
    }
  });

  it('adds a key when the algorithm changes and still serves the old one', async () => {
    const store = track(memoryStore());
    seed(store);
    const es = provider(store, { algorithm: 'ES256' });
    const token = (await es.issueToken({ grantType: 'client_credentials', client: { clientId: 'sensor-gw', clientSecret: 's3cret' } })).access_token;
    const rs = provider(store, { algorithm: 'RS256' });
    expect(rs.publicJwks().keys.map((k) => k.alg).sort()).toEqual(['ES256', 'RS256']);
    expect((await verify(rs, token)).payload.sub).toBe('urn:ngsi-ld:Client:sensor-gw');
    const fresh = (await rs.issueToken({ grantType: 'client_credentials', client: { clientId: 'sensor-gw', clientSecret: 's3cret' } })).access_token;
    expect(decodeProtectedHeader(fresh).alg).toBe('RS256');
  });

  it('describes itself in OpenID Connect discovery metadata', () => {
    const idp = provider(track(memoryStore()));
    expect(idp.openidConfiguration('http://gw:1026')).toMatchObject({
      issuer: ISSUER, token_endpoint: 'http://gw:1026/auth/token', jwks_uri: 'http://gw:1026/auth/jwks',
      grant_types_supported: ['client_credentials', 'password'], id_token_signing_alg_values_supported: ['ES256'],
    });
  });
});

describe('identity provider subjects', () => {
  it('knows its users and clients, and forgets a deleted one at the next refresh', () => {
    const store = track(memoryStore());
    seed(store);
    const idp = provider(store);
    expect(idp.hasSubject('urn:ngsi-ld:User:alice')).toBe(true);
    expect(idp.hasSubject('urn:ngsi-ld:Client:sensor-gw')).toBe(true);
    expect(idp.hasSubject('urn:ngsi-ld:User:mallory')).toBe(false);
    store.identity.deleteUser('alice');
    store.identity.deleteClient('sensor-gw');
    idp.refreshSubjects();
    expect(idp.hasSubject('urn:ngsi-ld:User:alice')).toBe(false);
    expect(idp.hasSubject('urn:ngsi-ld:Client:sensor-gw')).toBe(false);
  });

  it('notices a user removed by another connection to the database (scripts/idp.mjs)', () => {
    const tmp = tempDir();
    try {
      const store = track(fileStore(tmp.file));
      seed(store);
      const idp = provider(store);
      const other = new Database(tmp.file, { timeout: 5_000 });
      try {
        other.prepare('DELETE FROM idp_users WHERE username = ?').run('alice');
      } finally {
        other.close();
      }
      expect(idp.hasSubject('urn:ngsi-ld:User:alice')).toBe(true);
      idp.refreshSubjects();
      expect(idp.hasSubject('urn:ngsi-ld:User:alice')).toBe(false);
      expect(idp.hasSubject('urn:ngsi-ld:Client:sensor-gw')).toBe(true);
    } finally {
      for (const s of stores) s.close();
      stores = [];
      tmp.cleanup();
    }
  });

  it('counts a user added since the last refresh as soon as it is granted a token', async () => {
    const store = track(memoryStore());
    const idp = provider(store);
    seed(store);
    expect(idp.hasSubject('urn:ngsi-ld:User:alice')).toBe(false);
    await idp.issueToken({ grantType: 'password', username: 'alice', password: 'correct horse' });
    expect(idp.hasSubject('urn:ngsi-ld:User:alice')).toBe(true);
  });
});

describe('secret hashes', () => {
  it('are scrypt$N$r$p$salt$hash with a fresh salt each time, and verify only their secret', async () => {
    const a = hashSecret('pässword');
    const b = hashSecret('pässword');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(a).not.toBe(b);
    expect(isSecretHash(a)).toBe(true);
    expect(await verifySecret('pässword', a)).toBe(true);
    // The same text in another Unicode normal form is the same password.
    expect(await verifySecret('pa\u0308ssword', a)).toBe(true);
    expect(await verifySecret('password', a)).toBe(false);
  });

  it('match nothing when unreadable or asking for too much memory', async () => {
    const good = hashSecret('x');
    const [, , , , salt, key] = good.split('$');
    for (const bad of ['', 'plain', `scrypt$1000$8$1$${salt}$${key}`, `scrypt$4194304$8$1$${salt}$${key}`, `bcrypt$32768$8$1$${salt}$${key}`]) {
      expect(isSecretHash(bad), bad).toBe(false);
      expect(await verifySecret('x', bad), bad).toBe(false);
    }
  });
});
