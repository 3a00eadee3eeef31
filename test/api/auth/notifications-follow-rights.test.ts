// Notifications follow the rights their subscription's owner has at delivery, not those it had when
// it created the subscription (behaviour §8; docs/notifications.md): a lost group or permission, a
// lost admin role, a deleted subject; over HTTP and over the embedded MQTT broker. No sleeps: a
// change that must not be notified is followed by one that must, and a subscription's notifications
// arrive in order.

import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config/index.js';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../../helpers/auth.js';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { addUser, requestToken } from '../../helpers/identity.js';
import { connectClient, endClient, freePort, subscribe } from '../../helpers/mqtt.js';
import { within } from '../../helpers/process.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';

const E = '/ngsi-ld/v1/entities';
const SUBS = '/ngsi-ld/v1/subscriptions';
const P = '/ngsi-ld/v1/auth/permissions';
const R1 = 'urn:ngsi-ld:Room:r1';
const R2 = 'urn:ngsi-ld:Room:r2';
const ROOT = { roles: [ADMIN_ROLE] };
const OPERATOR = { groups: ['operators'] };

let receiver: Receiver;
const cleanups: Array<() => Promise<unknown>> = [];

beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await receiver.close();
});

const temperature = (value: number) => ({ temperature: { type: 'Property', value } });
const room = (id: string) => ({ id, type: 'Room', ...temperature(20) });
const subscription = (uri: string) => ({ type: 'Subscription', entities: [{ type: 'Room' }], notification: { endpoint: { uri, accept: 'application/json' } } });
const idOf = (res: { headers: Headers }): string => res.headers.get('location')!.split('/').pop()!;
/** The entity ids a notification carries. */
const notified = (body: { data: Array<{ id: string }> }): string[] => body.data.map((e) => e.id);

async function mqttClient(url: string, password: string): Promise<MqttClient> {
  const c = await connectClient(url, { username: 'token', password });
  cleanups.push(() => (c.connected ? endClient(c) : Promise.resolve()));
  return c;
}

/** Resolves once the client's connection is closed by the broker; rejects after `ms`. */
const closedWithin = (c: MqttClient, ms: number): Promise<void> => within(new Promise<void>((resolve) => c.once('close', () => resolve())), ms, 'the MQTT connection closed');

describe('notifications follow the owner\'s rights (tokens of an outside identity provider)', () => {
  /** root owns R1 and R2; the group `operators` may read R1, alice may read R2. */
  async function world(): Promise<AuthBroker> {
    const b = await startAuthBroker({ config: { notifications: { retryBase: 5, retryMax: 20 } } });
    cleanups.push(() => b.close());
    for (const id of [R1, R2]) expect((await b.as('root', 'POST', E, { body: room(id), claims: ROOT })).status).toBe(201);
    for (const [id, assignee] of [[R1, 'operators'], [R2, 'alice']] as const) {
      expect((await b.as('root', 'POST', P, { body: { type: 'Permission', target: { id }, assignee, action: 'read' }, claims: ROOT })).status).toBe(201);
    }
    return b;
  }
  const update = async (b: AuthBroker, id: string, value: number) =>
    expect((await b.as('root', 'PATCH', `${E}/${id}/attrs`, { body: temperature(value), claims: ROOT })).status).toBe(204);

  it('stops notifying an entity once the owner leaves the group that may read it (HTTP)', async () => {
    const b = await world();
    expect((await b.as('alice', 'POST', SUBS, { body: subscription(receiver.url()), claims: OPERATOR })).status).toBe(201);
    await update(b, R1, 21);
    expect(notified((await receiver.waitFor(1))[0]!.body)).toEqual([R1]);
    // alice's next token no longer lists the group.
    expect((await b.as('alice', 'GET', `${E}?type=Room`, { claims: { groups: [] } })).status).toBe(200);
    await update(b, R1, 22);
    await update(b, R2, 23);
    const all = await receiver.waitFor(2);
    expect(notified(all[1]!.body)).toEqual([R2]);
    await b.broker.notifier.idle();
    expect(receiver.received).toHaveLength(2);
  });

  it('stops notifying an entity once the owner\'s read permission on it is deleted (HTTP)', async () => {
    const b = await world();
    expect((await b.as('alice', 'POST', SUBS, { body: subscription(receiver.url()) })).status).toBe(201);
    await update(b, R2, 21);
    expect(notified((await receiver.waitFor(1))[0]!.body)).toEqual([R2]);
    const held = await b.as('root', 'GET', `${P}?assignee=alice&action=read`, { claims: ROOT });
    expect(held.json).toHaveLength(1);
    expect((await b.as('root', 'DELETE', `${P}/${held.json[0].id}`, { claims: ROOT })).status).toBe(204);
    expect((await b.as('root', 'POST', P, { body: { type: 'Permission', target: { id: R1 }, assignee: 'alice', action: 'read' }, claims: ROOT })).status).toBe(201);
    await update(b, R2, 22);
    await update(b, R1, 23);
    const all = await receiver.waitFor(2);
    expect(notified(all[1]!.body)).toEqual([R1]);
  });

  it('stops publishing an entity on the owner\'s MQTT topic once it leaves the group that may read it', async () => {
    const b = await world();
    await b.broker.listen();
    const url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    const topic = 'edgeld/notify/alice/rooms';
    const alice = await mqttClient(url, await b.token('alice', OPERATOR));
    const next = await subscribe(alice, topic, 0);
    expect((await b.as('alice', 'POST', SUBS, { body: subscription(`${url}/${topic}`), claims: OPERATOR })).status).toBe(201);
    await update(b, R1, 21);
    expect(notified(JSON.parse((await next()).payload.toString('utf8')).body)).toEqual([R1]);
    expect((await b.as('alice', 'GET', `${E}?type=Room`, { claims: { groups: [] } })).status).toBe(200);
    await update(b, R1, 22);
    await update(b, R2, 23);
    expect(notified(JSON.parse((await next()).payload.toString('utf8')).body)).toEqual([R2]);
  });

  it('suspends the subscriptions of a user deleted through the subject API and closes its MQTT connections', async () => {
    const b = await world();
    await b.broker.listen();
    const url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    const alice = await mqttClient(url, await b.token('alice'));
    await subscribe(alice, 'edgeld/notify/alice/rooms', 0);
    const own = await b.as('alice', 'POST', SUBS, { body: subscription(receiver.url('/alice')) });
    expect(own.status).toBe(201);
    expect((await b.as('root', 'POST', SUBS, { body: subscription(receiver.url('/root')), claims: ROOT })).status).toBe(201);
    const closed = closedWithin(alice, 5_000);
    expect((await b.as('root', 'DELETE', '/ngsi-ld/v1/auth/subjects/users/alice', { claims: ROOT })).status).toBe(204);
    await closed;
    await update(b, R2, 24);
    await receiver.waitFor(1);
    await b.broker.notifier.idle();
    expect(receiver.received.map((r) => r.path)).toEqual(['/root']);
    const shown = (await b.as('root', 'GET', `${SUBS}/${idOf(own)}`, { claims: ROOT })).json;
    expect(shown).toMatchObject({ status: 'paused', statusReason: expect.stringContaining('owner was deleted') });
  });
});

describe('notifications follow the owner\'s rights (built-in identity provider)', () => {
  async function idpBroker(): Promise<TestBroker> {
    const application = defaultConfig().application;
    const b = await startTestBroker({
      config: {
        application: { authentication: { ...application.authentication, enabled: true }, identityProvider: { ...application.identityProvider, enabled: true } },
        notifications: { retryBase: 5, retryMax: 20 },
      },
    });
    cleanups.push(() => b.close());
    return b;
  }
  async function tokenOf(b: TestBroker, username: string): Promise<string> {
    const res = await requestToken(b, { grant_type: 'password', username, password: `${username}-password` });
    expect(res.status, res.text).toBe(200);
    return res.json.access_token;
  }
  const call = async (b: TestBroker, token: string, method: string, path: string, body?: unknown) =>
    b.request(method, path, { headers: { Authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { body }) });

  /** root (admin) owns R1 and R2; carol may read R2. */
  async function world(b: TestBroker): Promise<string> {
    addUser(b.broker, 'root', 'root-password', { roles: [ADMIN_ROLE] });
    const root = await tokenOf(b, 'root');
    for (const id of [R1, R2]) expect((await call(b, root, 'POST', E, room(id))).status).toBe(201);
    expect((await call(b, root, 'POST', P, { type: 'Permission', target: { id: R2 }, assignee: 'urn:ngsi-ld:User:carol', action: 'read' })).status).toBe(201);
    return root;
  }

  it('notifies an administrator demoted in the identity provider only of what it may read, once the users are read again', async () => {
    const b = await idpBroker();
    const root = await world(b);
    const sub = addUser(b.broker, 'carol', 'carol-password', { roles: [ADMIN_ROLE] });
    const carol = await tokenOf(b, 'carol');
    expect((await call(b, carol, 'POST', SUBS, subscription(receiver.url()))).status).toBe(201);
    await call(b, root, 'PATCH', `${E}/${R1}/attrs`, temperature(21));
    expect(notified((await receiver.waitFor(1))[0]!.body)).toEqual([R1]);
    // Demoted as scripts/idp.mjs would: the user again, with the same sub, without the role.
    b.broker.store.identity.deleteUser('carol');
    addUser(b.broker, 'carol', 'carol-password');
    expect(`urn:ngsi-ld:User:carol`).toBe(sub);
    b.broker.identity!.refreshSubjects(); // NOTE: the provider is enabled above; the job does this each second
    expect((await call(b, root, 'PATCH', `${E}/${R1}/attrs`, temperature(22))).status).toBe(204);
    expect((await call(b, root, 'PATCH', `${E}/${R2}/attrs`, temperature(23))).status).toBe(204);
    const all = await receiver.waitFor(2);
    expect(notified(all[1]!.body)).toEqual([R2]);
    await b.broker.notifier.idle();
    expect(receiver.received).toHaveLength(2);
  });

  it('suspends the subscriptions of a user deleted from the identity provider and closes its MQTT connections within seconds', async () => {
    const b = await idpBroker();
    await b.broker.listen();
    const root = await world(b);
    addUser(b.broker, 'carol', 'carol-password');
    const carol = await tokenOf(b, 'carol');
    const url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    const client = await mqttClient(url, carol);
    const topic = `edgeld/notify/${encodeURIComponent('urn:ngsi-ld:User:carol')}/rooms`;
    const next = await subscribe(client, topic, 0);
    // The topic's own %-escapes are escaped again in the URI's path.
    const mqttSub = await call(b, carol, 'POST', SUBS, subscription(`${url}/${topic.replaceAll('%', '%25')}`));
    expect(mqttSub.status, mqttSub.text).toBe(201);
    const httpSub = await call(b, carol, 'POST', SUBS, subscription(receiver.url('/carol')));
    expect(httpSub.status).toBe(201);
    expect((await call(b, root, 'POST', SUBS, subscription(receiver.url('/root')))).status).toBe(201);
    await call(b, root, 'PATCH', `${E}/${R2}/attrs`, temperature(21));
    expect(notified(JSON.parse((await next()).payload.toString('utf8')).body)).toEqual([R2]);
    await receiver.waitFor(2);
    const closed = closedWithin(client, 5_000);
    // Removed while the broker runs; nothing tells it but the job that reads the users again each second.
    b.broker.store.identity.deleteUser('carol');
    await closed;
    await call(b, root, 'PATCH', `${E}/${R2}/attrs`, temperature(22));
    await receiver.waitFor(3);
    await b.broker.notifier.idle();
    expect(receiver.received.map((r) => r.path).sort()).toEqual(['/carol', '/root', '/root']);
    for (const res of [mqttSub, httpSub]) {
      const shown = (await call(b, root, 'GET', `${SUBS}/${idOf(res)}`)).json;
      expect(shown).toMatchObject({ status: 'paused', statusReason: expect.stringContaining('owner was deleted') });
    }
  });
});

describe('a stored subscription naming a topic of the embedded broker outside its owner\'s prefix', () => {
  it('is not published there: its notification fails with why [written before the endpoint rule]', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgeld-authon-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const dbPath = join(dir, 'edgeld.db');
    const port = await freePort();
    const config = { mqtt: { port, host: '127.0.0.1' }, notifications: { retryBase: 5, retryMax: 20 } };
    const first = await startAuthBroker({ dbPath, config });
    expect((await first.as('root', 'POST', E, { body: room(R1), claims: ROOT })).status).toBe(201);
    expect((await first.as('root', 'POST', P, { body: { type: 'Permission', target: { id: R1 }, assignee: 'bob', action: 'read' }, claims: ROOT })).status).toBe(201);
    const made = await first.as('bob', 'POST', SUBS, { body: subscription(`mqtt://127.0.0.1:${port}/edgeld/notify/bob/rooms`) });
    expect(made.status, made.text).toBe(201);
    await first.close();
    // As an older version wrote it: any topic of the embedded broker.
    const db = new Database(dbPath);
    db.prepare("UPDATE subscriptions SET doc = json_set(doc, '$.notification.endpoint.uri', ?) WHERE id = ?").run(`mqtt://127.0.0.1:${port}/plant/alerts`, idOf(made));
    db.close();
    const b = await startAuthBroker({ dbPath, config });
    cleanups.push(() => b.close());
    await b.broker.listen();
    const root = await mqttClient(`mqtt://127.0.0.1:${port}`, await b.token('root', ROOT));
    const seen: string[] = [];
    root.on('message', (topic) => seen.push(topic));
    await root.subscribeAsync('plant/alerts', { qos: 0 });
    expect((await b.as('root', 'PATCH', `${E}/${R1}/attrs`, { body: temperature(30), claims: ROOT })).status).toBe(204);
    await expect.poll(async () => (await b.as('root', 'GET', `${SUBS}/${idOf(made)}`, { claims: ROOT })).json.notification.status, { timeout: 5_000 })
      .toBe('failed');
    const shown = (await b.as('root', 'GET', `${SUBS}/${idOf(made)}`, { claims: ROOT })).json;
    expect(shown.notification.lastFailureReason).toMatch(/not published: .*edgeld\/notify\/bob\//);
    expect(shown.notification).not.toHaveProperty('lastSuccess');
    expect(seen).toEqual([]);
  });
});
