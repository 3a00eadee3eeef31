// Authentication at the API (interface 5): 401 with `WWW-Authenticate: Bearer` and a ProblemDetails
// body for every kind of bad token, no token in any log line, the writer's `sub` in the audit
// (2.9), subscriptions owned by their creator and notifying only what it may read, and tokens of the
// built-in identity provider accepted with no network.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from 'jose';
import { createLogger } from '../../../src/lib/index.js';
import { ADMIN_ROLE, mint, startAuthBroker, type AuthBroker } from '../../helpers/auth.js';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';
import { addUser, idpConfig, requestToken } from '../../helpers/identity.js';

const E = '/ngsi-ld/v1/entities';
const ROOM1 = 'urn:ngsi-ld:Room:1';
const ROOM2 = 'urn:ngsi-ld:Room:2';
const enc = encodeURIComponent;
const room = (id: string, value = 20) => ({ id, type: 'Room', temperature: { type: 'Property', value } });

function expectUnauthorized(res: { status: number; headers: Headers; json: any }, detail: RegExp): void {
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  expect(res.json).toMatchObject({ type: 'https://uri.etsi.org/ngsi-ld/errors/Unauthorized', status: 401, detail: expect.stringMatching(detail) });
}

describe('bad tokens at the API', () => {
  const lines: string[] = [];
  let b: AuthBroker;
  beforeAll(async () => {
    b = await startAuthBroker({ log: createLogger('debug', 'edgeld', (line) => lines.push(line)) });
  });
  afterAll(() => b.close());

  const withToken = (token: string, path = `${E}?type=Room`) => b.request('GET', path, { headers: { Authorization: `Bearer ${token}` } });

  it('accepts a valid token (the positive control of every refusal below)', async () => {
    const res = await withToken(await b.token('alice'));
    expect(res.status).toBe(200);
  });

  it('refuses a missing or malformed Authorization header', async () => {
    expectUnauthorized(await b.request('GET', `${E}?type=Room`), /token/);
    expectUnauthorized(await b.request('GET', `${E}?type=Room`, { headers: { Authorization: 'Basic YWxpY2U6c2VjcmV0' } }), /Bearer/);
    expectUnauthorized(await b.request('GET', `${E}?type=Room`, { headers: { Authorization: 'Bearer' } }), /Bearer/);
  });

  it('refuses garbage, a foreign key, alg none, a tampered payload', async () => {
    expectUnauthorized(await withToken('not.a.jwt'), /./);
    const { privateKey } = await generateKeyPair('ES256');
    expectUnauthorized(await withToken(await mint(privateKey, b.clock.now(), 'alice')), /./);
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(JSON.stringify({ sub: 'alice', exp: Math.floor(b.clock.now() / 1000) + 60 })).toString('base64url');
    expectUnauthorized(await withToken(`${header}.${payload}.`), /./);
    const [h, , s] = (await b.token('alice')).split('.');
    const forged = Buffer.from(JSON.stringify({ sub: 'alice', realm_access: { roles: [ADMIN_ROLE] }, exp: 9_999_999_999 })).toString('base64url');
    expectUnauthorized(await withToken(`${h}.${forged}.${s}`), /./);
  });

  it('refuses an expired token, also one it had accepted before', async () => {
    const token = await b.token('alice');
    expect((await withToken(token)).status).toBe(200);
    b.clock.advance(2 * 3600 * 1000);
    try {
      expectUnauthorized(await withToken(token), /expired/);
    } finally {
      b.clock.advance(-2 * 3600 * 1000);
    }
  });

  it('never writes a token into a log line', async () => {
    const token = await b.token('alice');
    await withToken(token);
    await withToken(`${token}x`);
    await b.request('POST', E, { body: room('urn:ngsi-ld:Room:log'), headers: { Authorization: `Bearer ${token}` } });
    expect(lines.length).toBeGreaterThan(0);
    const signature = token.split('.')[2] as string;
    for (const line of lines) {
      expect(line).not.toContain(signature);
      expect(line).not.toContain(token.split('.')[1] as string);
    }
  });

  it('never writes a request body into a log line, not even of a failed request', async () => {
    const marker = 'BODY-MARKER-7f3a9c';
    const token = await b.token('alice');
    const auth = { Authorization: `Bearer ${token}` };
    const noted = (id: string) => ({ ...room(id), name: { type: 'Property', value: marker } });
    const from = lines.length;
    // Not JSON, an invalid entity, a refused token, a write that conflicts.
    await b.request('POST', E, { raw: `{"id": "urn:ngsi-ld:Room:body", "name": "${marker}", `, headers: { ...auth, 'Content-Type': 'application/json' } });
    await b.request('POST', E, { body: { ...noted('urn:ngsi-ld:Room:body'), broken: { type: 'Nonsense', value: 1 } }, headers: auth });
    await b.request('POST', E, { body: noted('urn:ngsi-ld:Room:body'), headers: { Authorization: `Bearer ${token}x` } });
    expect((await b.request('POST', E, { body: noted('urn:ngsi-ld:Room:body2'), headers: auth })).status).toBe(201);
    expect((await b.request('POST', E, { body: noted('urn:ngsi-ld:Room:body2'), headers: auth })).status).toBe(409);
    // An error title quotes the input at fault; the log line keeps only its start.
    const long = `x${'y'.repeat(20_000)}`;
    expect((await b.request('POST', E, { body: { ...room('urn:ngsi-ld:Room:body3'), [long]: { type: 'Nonsense', value: marker } }, headers: auth })).status).toBe(400);
    const written = lines.slice(from);
    expect(written.filter((l) => l.includes('"msg":"request"'))).toHaveLength(6);
    for (const line of written) {
      expect(line).not.toContain(marker);
      expect(line.length).toBeLessThan(1_000);
    }
  });
});

describe('audit (interface 2.9)', () => {
  let b: AuthBroker;
  beforeAll(async () => {
    b = await startAuthBroker();
  });
  afterAll(() => b.close());

  it('returns the writer of each instance with options=audit', async () => {
    expect((await b.as('alice', 'POST', E, { body: room(ROOM1) })).status).toBe(201);
    b.clock.advance(1000);
    await b.as('urn:ngsi-ld:User:root', 'PATCH', `${E}/${enc(ROOM1)}/attrs`, { body: { temperature: { type: 'Property', value: 21 } }, claims: { roles: [ADMIN_ROLE] } });
    const res = await b.as('alice', 'GET', `/ngsi-ld/v1/temporal/entities/${enc(ROOM1)}?options=audit&timeproperty=createdAt&timerel=after&timeAt=2000-01-01T00:00:00Z`);
    expect(res.status, res.text).toBe(200);
    const subs = res.json.temperature.map((i: { sub?: { value: string } }) => i.sub?.value);
    expect(subs).toEqual(['alice', 'urn:ngsi-ld:User:root']);
    // Without options=audit, no sub.
    const plain = await b.as('alice', 'GET', `/ngsi-ld/v1/temporal/entities/${enc(ROOM1)}?timeproperty=createdAt&timerel=after&timeAt=2000-01-01T00:00:00Z`);
    expect(plain.json.temperature[0].sub).toBeUndefined();
  });
});

describe('subscriptions belong to their creator (behaviour §8)', () => {
  let b: AuthBroker;
  let receiver: Receiver;
  let subPath: string;
  beforeAll(async () => {
    b = await startAuthBroker();
    receiver = await startReceiver();
    expect((await b.as('alice', 'POST', E, { body: room(ROOM1) })).status).toBe(201);
    expect((await b.as('alice', 'POST', E, { body: room(ROOM2) })).status).toBe(201);
    const grant = await b.as('alice', 'POST', '/ngsi-ld/v1/auth/permissions', { body: { type: 'Permission', target: { id: ROOM1 }, assignee: 'bob', action: 'read' } });
    expect(grant.status).toBe(201);
    const created = await b.as('bob', 'POST', '/ngsi-ld/v1/subscriptions', {
      body: { type: 'Subscription', entities: [{ type: 'Room' }], notification: { endpoint: { uri: receiver.url('/bob'), accept: 'application/json' } } },
    });
    expect(created.status, created.text).toBe(201);
    subPath = created.headers.get('location') as string;
  });
  afterAll(async () => {
    await b.close();
    await receiver.close();
  });

  it('others than the owner get 403, the owner and the admin see it', async () => {
    expect((await b.as('bob', 'GET', subPath)).status).toBe(200);
    expect((await b.as('root', 'GET', subPath, { claims: { roles: [ADMIN_ROLE] } })).status).toBe(200);
    expect((await b.as('carol', 'GET', subPath)).status).toBe(403);
    expect((await b.as('carol', 'PATCH', subPath, { body: { isActive: false } })).status).toBe(403);
    expect((await b.as('carol', 'DELETE', subPath)).status).toBe(403);
    expect((await b.as('bob', 'GET', '/ngsi-ld/v1/subscriptions')).json).toHaveLength(1);
    expect((await b.as('carol', 'GET', '/ngsi-ld/v1/subscriptions')).json).toEqual([]);
  });

  it('notifies only the entities the owner may read', async () => {
    // Room:2 first: notifications are matched in commit order, so its would come before Room:1's.
    expect((await b.as('alice', 'PATCH', `${E}/${enc(ROOM2)}/attrs`, { body: { temperature: { type: 'Property', value: 30 } } })).status).toBe(204);
    expect((await b.as('alice', 'PATCH', `${E}/${enc(ROOM1)}/attrs`, { body: { temperature: { type: 'Property', value: 31 } } })).status).toBe(204);
    await receiver.waitFor(1, { ms: 5_000 });
    await b.broker.notifier.idle();
    const ids = receiver.received.flatMap((r) => r.body.data.map((e: { id: string }) => e.id));
    expect(ids).toEqual([ROOM1]);
  });
});

describe('the built-in identity provider', () => {
  let b: TestBroker;
  afterEach(() => b.close());

  it('issues tokens the API accepts, with no key file and no network', async () => {
    const patch = idpConfig();
    b = await startTestBroker({
      config: { ...patch, application: { ...patch.application!, authentication: { ...patch.application!.authentication!, enabled: true } } as never },
    });
    addUser(b.broker, 'alice', 'correct horse battery', { roles: [ADMIN_ROLE] });
    const token = await requestToken(b, { grant_type: 'password', username: 'alice', password: 'correct horse battery' });
    expect(token.status, token.text).toBe(200);
    const auth = { Authorization: `Bearer ${token.json.access_token}` };
    expect((await b.request('POST', E, { body: room(ROOM1), headers: auth })).status).toBe(201);
    expect((await b.request('GET', `${E}/${enc(ROOM1)}`, { headers: auth })).status).toBe(200);
    expect((await b.request('GET', `${E}/${enc(ROOM1)}`)).status).toBe(401);
  });
});


describe('@context deletion (behaviour §8)', () => {
  let b: AuthBroker;
  beforeAll(async () => {
    b = await startAuthBroker();
  });
  afterAll(() => b.close());

  it('needs the admin role; an unknown context is 404 first', async () => {
    const added = await b.as('alice', 'POST', '/ngsi-ld/v1/jsonldContexts', { body: { '@context': { temp: 'https://example.org/temp' } } });
    expect(added.status, added.text).toBe(201);
    const path = new URL(added.headers.get('location') as string, 'http://127.0.0.1').pathname;
    expect((await b.as('bob', 'DELETE', '/ngsi-ld/v1/jsonldContexts/unknown')).status).toBe(404);
    expect((await b.as('bob', 'DELETE', path)).status).toBe(403);
    expect((await b.as('root', 'DELETE', path, { claims: { roles: [ADMIN_ROLE] } })).status).toBe(204);
  });
});

describe('served @contexts with authentication on', () => {
  let b: AuthBroker;
  beforeAll(async () => {
    b = await startAuthBroker();
  });
  afterAll(() => b.close());

  it('are fetched without a token (receivers dereference Link headers); listing and adding still need one', async () => {
    const added = await b.as('alice', 'POST', '/ngsi-ld/v1/jsonldContexts', { body: { '@context': { temp: 'https://example.org/temp' } } });
    expect(added.status, added.text).toBe(201);
    const path = new URL(added.headers.get('location') as string, 'http://127.0.0.1').pathname;
    const served = await b.request('GET', path);
    expect(served.status).toBe(200);
    expect(served.json['@context']).toMatchObject({ temp: 'https://example.org/temp' });
    expect((await b.request('GET', '/ngsi-ld/v1/jsonldContexts')).status).toBe(401);
    expect((await b.request('POST', '/ngsi-ld/v1/jsonldContexts', { body: { '@context': {} } })).status).toBe(401);
    expect((await b.request('DELETE', path)).status).toBe(401);
  });
});
