// Tokens signed with the built-in identity provider's key, through the HTTP API: they must expire,
// name the provider as issuer when no issuer is configured, and name a user or client it still has.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SignJWT, importJWK, type JWK } from 'jose';
import { defaultConfig } from '../../../src/config/index.js';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { addUser, requestToken } from '../../helpers/identity.js';

const ENTITIES = '/ngsi-ld/v1/entities?type=Building';

let b: TestBroker;
beforeEach(async () => {
  const application = defaultConfig().application;
  b = await startTestBroker({
    config: {
      application: { authentication: { ...application.authentication, enabled: true }, identityProvider: { ...application.identityProvider, enabled: true } },
    },
  });
});
afterEach(() => b.close());

async function passwordToken(username: string, password: string): Promise<string> {
  const res = await requestToken(b, { grant_type: 'password', username, password });
  expect(res.status, res.text).toBe(200);
  return res.json.access_token;
}

const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });

/**
 * A token signed with the provider's private key as stored in the database: what anyone who can read
 * the database file can make.
 */
async function forged(claims: Record<string, unknown>): Promise<string> {
  const [key] = b.broker.store.identity.signingKeys();
  if (key === undefined) throw new Error('the provider has no signing key');
  const privateJwk = JSON.parse(key.privateJwk) as JWK; // NOTE: the store keeps the JWK as JSON text
  const iat = Math.floor(b.clock.now() / 1000);
  return new SignJWT({ iat, ...claims }).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(await importJWK(privateJwk, key.alg));
}

async function issuer(): Promise<string> {
  return (await b.request('GET', '/.well-known/openid-configuration')).json.issuer;
}

describe('tokens of the built-in identity provider', () => {
  it('refuses a token of a deleted user with 401 once the users are read again, though it was verified before', async () => {
    addUser(b.broker, 'alice', 'alice-password');
    const token = await passwordToken('alice', 'alice-password');
    expect((await b.request('GET', ENTITIES, { headers: bearer(token) })).status).toBe(200);
    b.broker.store.identity.deleteUser('alice');
    b.broker.identity!.refreshSubjects(); // NOTE: the provider is enabled above
    const res = await b.request('GET', ENTITIES, { headers: bearer(token) });
    expect(res.status).toBe(401);
    expect(res.json.detail).toMatch(/no longer exists/);
  });

  it('keeps accepting the tokens of the users that remain', async () => {
    addUser(b.broker, 'alice', 'alice-password');
    addUser(b.broker, 'bob', 'bob-password');
    const token = await passwordToken('bob', 'bob-password');
    b.broker.store.identity.deleteUser('alice');
    b.broker.identity!.refreshSubjects(); // NOTE: the provider is enabled above
    expect((await b.request('GET', ENTITIES, { headers: bearer(token) })).status).toBe(200);
  });

  it('refuses a token without exp, and one naming another issuer, with 401 saying why', async () => {
    const sub = addUser(b.broker, 'alice', 'alice-password');
    // Put straight into the store: no grant nor the periodic job told the provider.
    b.broker.identity!.refreshSubjects(); // NOTE: the provider is enabled above
    const exp = Math.floor(b.clock.now() / 1000) + 600;
    const good = await b.request('GET', ENTITIES, { headers: bearer(await forged({ sub, iss: await issuer(), exp })) });
    expect(good.status, good.text).toBe(200);

    const noExp = await b.request('GET', ENTITIES, { headers: bearer(await forged({ sub, iss: await issuer() })) });
    expect(noExp.status).toBe(401);
    expect(noExp.json.detail).toMatch(/no expiry \(exp\)/);
    const otherIssuer = await b.request('GET', ENTITIES, { headers: bearer(await forged({ sub, iss: 'https://elsewhere.example', exp })) });
    expect(otherIssuer.status).toBe(401);
    expect(otherIssuer.json.detail).toMatch(/wrong issuer/);
  });

  it('refuses a token for a subject it never had, even with its own issuer', async () => {
    const exp = Math.floor(b.clock.now() / 1000) + 600;
    const res = await b.request('GET', ENTITIES, { headers: bearer(await forged({ sub: 'urn:ngsi-ld:User:nobody', iss: await issuer(), exp })) });
    expect(res.status).toBe(401);
    expect(res.json.detail).toMatch(/no longer exists/);
  });
});
