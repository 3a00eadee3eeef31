// The identity provider's HTTP endpoints on the real app: POST /auth/token (RFC 6749 §4.3, §4.4,
// §5.1, §5.2), GET /auth/jwks and OpenID Connect discovery; tokens verified against the served JWKS.

import { afterEach, describe, expect, it } from 'vitest';
import { startTestBroker, tempDir, type TestBroker } from '../helpers/broker.js';
import { addClient, addUser, basic, idpConfig, requestToken, verifyServed } from '../helpers/identity.js';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

let brokers: TestBroker[] = [];
afterEach(async () => {
  for (const b of brokers) await b.close();
  brokers = [];
});

async function start(opts: Parameters<typeof startTestBroker>[0] = { config: idpConfig() }): Promise<TestBroker> {
  const b = await startTestBroker(opts);
  brokers.push(b);
  return b;
}

async function seeded(opts?: Parameters<typeof startTestBroker>[0]): Promise<TestBroker> {
  const b = await start(opts);
  addUser(b.broker, 'alice', 'correct horse', { roles: ['operator'], groups: ['site-a'], givenName: 'Alice' });
  addClient(b.broker, 'sensor-gw', 's3cret', { roles: ['writer'] });
  return b;
}

describe('POST /auth/token', () => {
  it('answers a client credentials grant with a Bearer token that the served JWKS verifies [RFC 6749 §4.4, §5.1]', async () => {
    const b = await seeded({ config: idpConfig({ issuer: 'https://gw.example' }) });
    const res = await requestToken(b, { grant_type: 'client_credentials', client_id: 'sensor-gw', client_secret: 's3cret' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(res.json).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(res.json).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    const { payload, header } = await verifyServed(b, res.json.access_token);
    expect(header['alg']).toBe('ES256');
    expect(payload).toMatchObject({ iss: 'https://gw.example', sub: 'urn:ngsi-ld:Client:sensor-gw', client_id: 'sensor-gw', realm_access: { roles: ['writer'] } });
  });

  it('takes the client credentials from HTTP Basic authentication [RFC 6749 §2.3.1]', async () => {
    const b = await seeded();
    const res = await requestToken(b, { grant_type: 'client_credentials' }, { Authorization: basic('sensor-gw', 's3cret') });
    expect(res.status).toBe(200);
    expect((await verifyServed(b, res.json.access_token)).payload.client_id).toBe('sensor-gw');
  });

  it('answers a password grant, with or without client credentials [RFC 6749 §4.3]', async () => {
    const b = await seeded();
    const res = await requestToken(b, { grant_type: 'password', username: 'alice', password: 'correct horse' });
    expect(res.status).toBe(200);
    const { payload } = await verifyServed(b, res.json.access_token);
    expect(payload).toMatchObject({ sub: 'urn:ngsi-ld:User:alice', preferred_username: 'alice', given_name: 'Alice', groups: ['site-a'] });
    const viaClient = await requestToken(b, { grant_type: 'password', username: 'alice', password: 'correct horse' }, { Authorization: basic('sensor-gw', 's3cret') });
    expect((await verifyServed(b, viaClient.json.access_token)).payload.azp).toBe('sensor-gw');
  });

  it('uses server.public-url as the issuer when none is set, and the token lifetime as expiry', async () => {
    const b = await seeded({ config: idpConfig({ tokenLifetime: 600 }, { publicUrl: 'http://gw.local:1026' }) });
    const res = await requestToken(b, { grant_type: 'password', username: 'alice', password: 'correct horse' });
    expect(res.json.expires_in).toBe(600);
    const { payload } = await verifyServed(b, res.json.access_token);
    expect(payload.iss).toBe('http://gw.local:1026');
    expect(payload.exp! - payload.iat!).toBe(600);
    expect(payload.iat).toBe(b.clock.now() / 1000);
  });

  it('signs with RS256 when configured', async () => {
    const b = await seeded({ config: idpConfig({ algorithm: 'RS256' }) });
    const res = await requestToken(b, { grant_type: 'client_credentials', client_id: 'sensor-gw', client_secret: 's3cret' });
    expect((await verifyServed(b, res.json.access_token)).header['alg']).toBe('RS256');
  });

  it('gives the same 400 invalid_grant for a wrong password and an unknown user [RFC 6749 §5.2]', async () => {
    const b = await seeded();
    const wrong = await requestToken(b, { grant_type: 'password', username: 'alice', password: 'wrong horse' });
    const unknown = await requestToken(b, { grant_type: 'password', username: 'mallory', password: 'correct horse' });
    expect(wrong.status).toBe(400);
    expect(wrong.json).toEqual({ error: 'invalid_grant', error_description: 'Invalid username or password' });
    expect(unknown.status).toBe(wrong.status);
    expect(unknown.text).toBe(wrong.text);
    expect(wrong.headers.get('cache-control')).toBe('no-store');
  });

  it('gives the same 401 invalid_client for a wrong secret, an unknown client and no client [RFC 6749 §5.2]', async () => {
    const b = await seeded();
    const wrong = await requestToken(b, { grant_type: 'client_credentials', client_id: 'sensor-gw', client_secret: 'nope' });
    const unknown = await requestToken(b, { grant_type: 'client_credentials' }, { Authorization: basic('ghost', 's3cret') });
    const none = await requestToken(b, { grant_type: 'client_credentials' });
    const noSecret = await requestToken(b, { grant_type: 'client_credentials', client_id: 'sensor-gw' });
    for (const res of [wrong, unknown, none, noSecret]) {
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
    }
  });

  it('answers unsupported_grant_type for a grant it does not implement', async () => {
    const b = await seeded();
    for (const grant of ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']) {
      const res = await requestToken(b, { grant_type: grant, code: 'x' });
      expect(res.status, grant).toBe(400);
      expect(res.json.error, grant).toBe('unsupported_grant_type');
    }
  });

  it('answers invalid_request for missing, unknown, repeated or doubly given parameters', async () => {
    const b = await seeded();
    const cases: Array<[string, Record<string, string> | Array<[string, string]>, Record<string, string>?]> = [
      ['no grant_type', { username: 'alice', password: 'correct horse' }],
      ['no password', { grant_type: 'password', username: 'alice' }],
      ['empty username', { grant_type: 'password', username: '', password: 'correct horse' }],
      ['unknown field', { grant_type: 'password', username: 'alice', password: 'correct horse', realm: 'x' }],
      ['user fields in client credentials', { grant_type: 'client_credentials', client_id: 'sensor-gw', client_secret: 's3cret', username: 'alice' }],
      ['repeated field', [['grant_type', 'password'], ['username', 'alice'], ['username', 'bob'], ['password', 'correct horse']]],
      ['secret without id', { grant_type: 'password', username: 'alice', password: 'correct horse', client_secret: 's3cret' }],
      ['Basic and body credentials', { grant_type: 'client_credentials', client_id: 'sensor-gw', client_secret: 's3cret' }, { Authorization: basic('sensor-gw', 's3cret') }],
    ];
    for (const [name, fields, headers] of cases) {
      const res = await requestToken(b, fields, headers);
      expect(res.status, name).toBe(400);
      expect(res.json.error, name).toBe('invalid_request');
      expect(typeof res.json.error_description, name).toBe('string');
    }
  });

  it('answers invalid_request to a JSON body, which RFC 6749 §4.4.2 does not allow', async () => {
    const b = await seeded();
    const res = await b.request('POST', '/auth/token', { body: { grant_type: 'client_credentials', client_id: 'sensor-gw', client_secret: 's3cret' } });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('invalid_request');
  });

  it('accepts a charset parameter and a scope, and needs no tenant header', async () => {
    const b = await seeded();
    const raw = new URLSearchParams({ grant_type: 'password', username: 'alice', password: 'correct horse', scope: 'openid' }).toString();
    const res = await b.request('POST', '/auth/token', { raw, headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=UTF-8' } });
    expect(res.status).toBe(200);
  });
});

describe('GET /auth/jwks and discovery', () => {
  it('serves only public key members [RFC 7517 §5]', async () => {
    for (const algorithm of ['ES256', 'RS256'] as const) {
      const b = await start({ config: idpConfig({ algorithm }) });
      const res = await b.request('GET', '/auth/jwks');
      expect(res.status).toBe(200);
      expect(res.json.keys).toHaveLength(1);
      for (const key of res.json.keys) {
        for (const member of PRIVATE_MEMBERS) expect(key, `${algorithm} ${member}`).not.toHaveProperty(member);
      }
      expect(res.text).not.toMatch(/"(d|p|q|dp|dq|qi)"/);
    }
  });

  it('serves OpenID Connect discovery metadata naming its endpoints', async () => {
    const b = await start({ config: idpConfig({ issuer: 'https://gw.example' }) });
    const res = await b.request('GET', '/.well-known/openid-configuration');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      issuer: 'https://gw.example', token_endpoint: 'http://127.0.0.1/auth/token', jwks_uri: 'http://127.0.0.1/auth/jwks',
      grant_types_supported: ['client_credentials', 'password'], id_token_signing_alg_values_supported: ['ES256'],
    });
  });

  it('has none of these routes when the identity provider is off', async () => {
    const b = await start({});
    expect(b.broker.identity).toBeUndefined();
    for (const [method, path] of [['POST', '/auth/token'], ['GET', '/auth/jwks'], ['GET', '/.well-known/openid-configuration']] as const) {
      expect((await b.request(method, path)).status, path).toBe(404);
    }
  });

  it('keeps its signing key across a restart on the same database', async () => {
    const tmp = tempDir();
    try {
      const dbPath = `${tmp.path}/edgeld.db`;
      const first = await startTestBroker({ config: idpConfig(), dbPath });
      addUser(first.broker, 'alice', 'correct horse');
      const token = (await requestToken(first, { grant_type: 'password', username: 'alice', password: 'correct horse' })).json.access_token;
      const keysBefore = (await first.request('GET', '/auth/jwks')).json;
      await first.close();
      const second = await startTestBroker({ config: idpConfig(), dbPath });
      try {
        expect((await second.request('GET', '/auth/jwks')).json).toEqual(keysBefore);
        expect((await verifyServed(second, token)).payload.sub).toBe('urn:ngsi-ld:User:alice');
      } finally {
        await second.close();
      }
    } finally {
      tmp.remove();
    }
  });
});
