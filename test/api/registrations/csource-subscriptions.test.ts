// Context source registration subscriptions over HTTP (NGSI-LD §5.11, §6.12, §6.13): create,
// query, retrieve, update and delete; bad input; apart from entity subscriptions; owners with
// authentication on; notifications pending across a restart; MQTT endpoints on the embedded broker.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { ADMIN_ROLE, startAuthBroker } from '../../helpers/auth.js';
import { startTestBroker, T0, type TestBroker, type TestResponse } from '../../helpers/broker.js';
import { connectClient, endClient, subscribe as subscribeMqtt } from '../../helpers/mqtt.js';
import { startReceiver } from '../../helpers/receiver.js';

const S = '/ngsi-ld/v1/csourceSubscriptions';
const R = '/ngsi-ld/v1/csourceRegistrations';
const SUBS = '/ngsi-ld/v1/subscriptions';
const LD = { 'Content-Type': 'application/ld+json' };
const CONTEXT = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});
async function broker(opts: Parameters<typeof startTestBroker>[0] = {}): Promise<TestBroker> {
  const b = await startTestBroker(opts);
  open.push(b);
  return b;
}

function sub(id: string | undefined, more: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...(id !== undefined ? { id } : {}), type: 'Subscription', entities: [{ type: 'Vehicle' }],
    notification: { endpoint: { uri: 'http://127.0.0.1:9/notify', accept: 'application/json' } }, ...more,
  };
}

function reg(id: string, more: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, type: 'ContextSourceRegistration', endpoint: 'http://source.example:1026', information: [{ entities: [{ type: 'Vehicle' }] }], ...more };
}

function expectProblem(res: TestResponse, status: number, type: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.json).toMatchObject({ type: `https://uri.etsi.org/ngsi-ld/errors/${type}` });
}

describe('create, retrieve, query, update and delete [§5.11.2-§5.11.6]', () => {
  it('creates with 201 and Location, and shows it back without entity-only members', async () => {
    const b = await broker();
    const id = 'urn:ngsi-ld:Subscription:c1';
    const created = await b.request('POST', S, { body: sub(id, { '@context': CONTEXT, q: 'brand=="A"', csf: 'endpoint=="x"' }), headers: LD });
    expect(created.status, created.text).toBe(201);
    expect(created.text).toBe('');
    expect(created.headers.get('location')).toBe(`${S}/${id}`);
    const got = await b.request('GET', `${S}/${id}`);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({
      id, type: 'Subscription', entities: [{ type: 'Vehicle' }], q: 'brand=="A"', csf: 'endpoint=="x"', status: 'active',
      notification: { format: 'normalized', endpoint: { uri: 'http://127.0.0.1:9/notify', accept: 'application/json' } },
    });
    expect(got.json).not.toHaveProperty('notificationTrigger');
  });

  it('draws an id when none is given; isActive false is paused; temporalQ is shown back', async () => {
    const b = await broker();
    const temporalQ = { timerel: 'before', timeAt: '2030-01-01T00:00:00Z', timeproperty: 'modifiedAt' };
    const created = await b.request('POST', S, { body: sub(undefined, { isActive: false, temporalQ }) });
    expect(created.status, created.text).toBe(201);
    const location = created.headers.get('location')!;
    expect(location).toMatch(new RegExp(`^${S}/urn:ngsi-ld:Subscription:`));
    const got = await b.request('GET', location);
    expect(got.json).toMatchObject({ isActive: false, status: 'paused', temporalQ });
  });

  it('lists with limit, offset and count, apart from entity subscriptions', async () => {
    const b = await broker();
    for (const n of [1, 2, 3]) expect((await b.request('POST', S, { body: sub(`urn:ngsi-ld:Subscription:l${n}`) })).status).toBe(201);
    expect((await b.request('POST', SUBS, { body: sub('urn:ngsi-ld:Subscription:entity') })).status).toBe(201);
    const page = await b.request('GET', `${S}?limit=2&offset=1&count=true`);
    expect(page.status).toBe(200);
    expect(page.json.map((s: { id: string }) => s.id)).toEqual(['urn:ngsi-ld:Subscription:l2', 'urn:ngsi-ld:Subscription:l3']);
    expect(page.headers.get('ngsild-results-count')).toBe('3');
    expect((await b.request('GET', SUBS)).json.map((s: { id: string }) => s.id)).toEqual(['urn:ngsi-ld:Subscription:entity']);
    expectProblem(await b.request('GET', `${S}/urn:ngsi-ld:Subscription:entity`), 404, 'ResourceNotFound');
    expectProblem(await b.request('GET', `${SUBS}/urn:ngsi-ld:Subscription:l1`), 404, 'ResourceNotFound');
    expectProblem(await b.request('DELETE', `${SUBS}/urn:ngsi-ld:Subscription:l1`), 404, 'ResourceNotFound');
  });

  it('answers 400 BadRequestData to a negative limit or offset [§5.5.9]', async () => {
    const b = await broker();
    expectProblem(await b.request('GET', `${S}?limit=-5&offset=2`), 400, 'BadRequestData');
    expectProblem(await b.request('GET', `${S}?limit=2&offset=-3`), 400, 'BadRequestData');
    expectProblem(await b.request('GET', `${S}?limit=x`), 400, 'InvalidRequest');
  });

  it('updates members given, keeps the others, and deletes (expiresAt shown as written)', async () => {
    const b = await broker();
    const id = 'urn:ngsi-ld:Subscription:u1';
    await b.request('POST', S, { body: sub(id) });
    const patched = await b.request('PATCH', `${S}/${id}`, { body: { entities: [{ type: 'Bus' }], expiresAt: '2030-01-01T00:00:00Z' } });
    expect(patched.status, patched.text).toBe(204);
    expect((await b.request('GET', `${S}/${id}`)).json).toMatchObject({ entities: [{ type: 'Bus' }], expiresAt: '2030-01-01T00:00:00Z', status: 'active' });
    b.clock.set(Date.parse('2030-01-02T00:00:00Z'));
    expect((await b.request('GET', `${S}/${id}`)).json.status).toBe('expired');
    expect((await b.request('DELETE', `${S}/${id}`)).status).toBe(204);
    expectProblem(await b.request('GET', `${S}/${id}`), 404, 'ResourceNotFound');
    expectProblem(await b.request('DELETE', `${S}/${id}`), 404, 'ResourceNotFound');
  });
});

describe('bad registration subscriptions', () => {
  it('answers 409 AlreadyExists for an id in use, 400 for a bad id in the path', async () => {
    const b = await broker();
    await b.request('POST', S, { body: sub('urn:ngsi-ld:Subscription:d1') });
    expectProblem(await b.request('POST', S, { body: sub('urn:ngsi-ld:Subscription:d1') }), 409, 'AlreadyExists');
    expectProblem(await b.request('DELETE', `${S}/not-a-uri`), 400, 'BadRequestData');
    expectProblem(await b.request('GET', `${S}/not-a-uri`), 400, 'BadRequestData');
  });

  it.each([
    ['a type other than Subscription', { type: 'ContextSourceRegistration' }],
    ['no notification', { notification: undefined }],
    ['a q that does not parse', { q: 'brand==' }],
    ['a csf that does not parse', { csf: '((' }],
    ['an expiresAt in the past', { expiresAt: new Date(T0 - 1_000).toISOString() }],
    ['notificationTrigger, an entity subscription member', { notificationTrigger: ['entityCreated'] }],
    ['a temporalQ without timeAt', { temporalQ: { timerel: 'after' } }],
    ['a temporalQ with an unknown timeproperty', { temporalQ: { timerel: 'after', timeAt: '2020-01-01T00:00:00Z', timeproperty: 'deletedAt' } }],
    ['neither entities nor watchedAttributes', { entities: undefined }],
    ['an endpoint that is not a URI', { notification: { endpoint: { uri: 'nowhere' } } }],
    ['a read-only member', { status: 'active' }],
  ])('answers 400 for %s', async (_, more) => {
    const b = await broker();
    const res = await b.request('POST', S, { body: sub('urn:ngsi-ld:Subscription:bad', more) });
    expect(res.status, res.text).toBe(400);
    expect((await b.request('GET', `${S}/urn:ngsi-ld:Subscription:bad`)).status).toBe(404);
  });

  it('keeps answering 501 for csf on entity subscriptions', async () => {
    const b = await broker();
    expectProblem(await b.request('POST', SUBS, { body: sub('urn:ngsi-ld:Subscription:e1', { csf: 'a==1' }) }), 501, 'NotImplemented');
  });
});

describe('owners of registration subscriptions with authentication on [behaviour §8]', () => {
  it('lets the owner and an administrator manage one; others get 403 and do not list it', async () => {
    const b = await startAuthBroker();
    open.push(b);
    const id = 'urn:ngsi-ld:Subscription:o1';
    expect((await b.as('alice', 'POST', S, { body: sub(id) })).status).toBe(201);
    expectProblem(await b.as('bob', 'GET', `${S}/${id}`), 403, 'AccessDenied');
    expectProblem(await b.as('bob', 'PATCH', `${S}/${id}`, { body: { description: 'mine' } }), 403, 'AccessDenied');
    expectProblem(await b.as('bob', 'DELETE', `${S}/${id}`), 403, 'AccessDenied');
    expect((await b.as('bob', 'GET', S)).json).toEqual([]);
    expect((await b.as('alice', 'GET', S)).json).toHaveLength(1);
    expect((await b.as('root', 'GET', `${S}/${id}`, { claims: { roles: [ADMIN_ROLE] } })).status).toBe(200);
    expect((await b.as('root', 'DELETE', `${S}/${id}`, { claims: { roles: [ADMIN_ROLE] } })).status).toBe(204);
    expect((await b.as(undefined, 'GET', S)).status).toBe(401);
  });

  it('notifies a subscriber of its own registrations only (administrators write them all); an administrator of all', async () => {
    const receiver = await startReceiver();
    open.push(receiver);
    const b = await startAuthBroker();
    open.push(b);
    const endpoint = { uri: receiver.url(), accept: 'application/json' };
    expect((await b.as('alice', 'POST', S, { body: sub('urn:ngsi-ld:Subscription:alice', { notification: { endpoint } }) })).status).toBe(201);
    const admin = { claims: { roles: [ADMIN_ROLE] } };
    expect((await b.as('root', 'POST', S, { body: sub('urn:ngsi-ld:Subscription:root', { notification: { endpoint } }), ...admin })).status).toBe(201);
    // Only administrators register sources: alice may not, so she owns none and is told of none.
    expect((await b.as('alice', 'POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:alice') })).status).toBe(403);
    expect((await b.as('ops', 'POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:ops'), ...admin })).status).toBe(201);
    expect((await b.as('root', 'POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:root'), ...admin })).status).toBe(201);
    await receiver.waitFor(2);
    await b.broker.notifier.idle();
    const seen = receiver.received.map((r) => `${r.body.subscriptionId as string} ${r.body.data[0].id as string}`).sort();
    expect(seen).toEqual([
      'urn:ngsi-ld:Subscription:root urn:ngsi-ld:ContextSourceRegistration:ops',
      'urn:ngsi-ld:Subscription:root urn:ngsi-ld:ContextSourceRegistration:root',
    ]);
  });
});

describe('durability', () => {
  it('delivers a notification pending while the receiver is down after a restart of the broker', async () => {
    const receiver = await startReceiver();
    open.push(receiver);
    receiver.respondWith(503);
    const dir = mkdtempSync(join(tmpdir(), 'edgeld-csub-'));
    const dbPath = join(dir, 'edgeld.db');
    try {
      const config = { notifications: { retryBase: 5, retryMax: 10, maxAttempts: 1_000 } };
      const first = await startTestBroker({ dbPath, config });
      const body = sub('urn:ngsi-ld:Subscription:k1', { notification: { endpoint: { uri: receiver.url(), accept: 'application/json' } } });
      expect((await first.request('POST', S, { body })).status).toBe(201);
      expect((await first.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:k1') })).status).toBe(201);
      await receiver.waitFor(2);
      await first.close();
      receiver.respondWith(200);
      const second = await startTestBroker({ dbPath, config });
      open.push(second);
      const [delivered] = await receiver.waitFor(1, { accepted: true });
      expect(delivered!.body).toMatchObject({ type: 'ContextSourceNotification', subscriptionId: 'urn:ngsi-ld:Subscription:k1', triggerReason: 'newlyMatching' });
      await second.broker.notifier.idle();
      expect(receiver.accepted()).toHaveLength(1);
      // The subscription is still one of registrations after the restart.
      expect((await second.request('GET', S)).json.map((s: { id: string }) => s.id)).toEqual(['urn:ngsi-ld:Subscription:k1']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('MQTT endpoints [§5.2.15, MQTT binding]', () => {
  it('publishes {metadata, body} on the embedded broker', async () => {
    const b = await broker({ config: { server: { port: 0, host: '127.0.0.1' } } });
    await b.broker.listen();
    const port = b.broker.mqttPort!;
    const client: MqttClient = await connectClient(`mqtt://127.0.0.1:${port}`);
    try {
      const next = await subscribeMqtt(client, 'gateway/registrations', 1);
      const body = sub('urn:ngsi-ld:Subscription:m1', { notification: { endpoint: { uri: `mqtt://127.0.0.1:${port}/gateway/registrations`, accept: 'application/json' } } });
      expect((await b.request('POST', S, { body })).status).toBe(201);
      expect((await b.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:m1') })).status).toBe(201);
      const message = JSON.parse((await next()).payload.toString('utf8'));
      expect(message.metadata).toMatchObject({ 'Content-Type': 'application/json' });
      expect(message.body).toMatchObject({ type: 'ContextSourceNotification', subscriptionId: 'urn:ngsi-ld:Subscription:m1', triggerReason: 'newlyMatching' });
      expect(message.body.data[0].id).toBe('urn:ngsi-ld:ContextSourceRegistration:m1');
    } finally {
      await endClient(client);
    }
  });
});
