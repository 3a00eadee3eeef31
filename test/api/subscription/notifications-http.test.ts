// Notifications over HTTP through the real app, its journal and notifier, to a real receiver on
// 127.0.0.1: payload and headers, triggers, q, throttling and timeInterval on a controlled clock,
// expiry, retries in order while a receiver is down, and failures recorded without a crash.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/lib/index.js';
import { startTestBroker, T0, type TestBroker } from '../../helpers/broker.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';

const SUBS = '/ngsi-ld/v1/subscriptions';
const E = '/ngsi-ld/v1/entities';
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
const LD = { 'Content-Type': 'application/ld+json' };
const ROOM = 'urn:ngsi-ld:Room:n1';
const VOCAB = 'https://uri.etsi.org/ngsi-ld/default-context/';

let b: TestBroker;
let receiver: Receiver;

beforeEach(async () => {
  receiver = await startReceiver();
  b = await startTestBroker({ config: { notifications: { retryBase: 5, retryMax: 20, maxAttempts: 50, timeout: 2_000 } } });
});

afterEach(async () => {
  await b.close();
  await receiver.close();
});

async function subscribe(extra: Record<string, unknown> = {}, notification: Record<string, unknown> = {}): Promise<string> {
  const id = `urn:ngsi-ld:Subscription:${Math.random().toString(36).slice(2)}`;
  const res = await b.request('POST', SUBS, {
    headers: LD,
    body: {
      id, type: 'Subscription', entities: [{ type: 'Room' }],
      notification: { endpoint: { uri: receiver.url(), accept: 'application/json' }, ...notification },
      '@context': CORE, ...extra,
    },
  });
  expect(res.status, res.text).toBe(201);
  return id;
}

async function write(method: string, path: string, body?: unknown, status?: number): Promise<void> {
  const res = await b.request(method, path, body === undefined ? {} : { body });
  expect(res.status, res.text).toBe(status ?? (method === 'POST' && path === E ? 201 : 204));
}

const createRoom = (temperature = 20): Promise<void> =>
  write('POST', E, { id: ROOM, type: 'Room', temperature: { type: 'Property', value: temperature }, humidity: { type: 'Property', value: 50 } });
const setTemperature = (value: number): Promise<void> => write('PATCH', `${E}/${ROOM}/attrs`, { temperature: { type: 'Property', value } });
const temperatures = (): unknown[] => receiver.accepted().map((r) => r.body.data[0].temperature?.value);

describe('notification payload and headers [§5.11, behaviour §7]', () => {
  it('POSTs a Notification with the entity, createdAt on attributes, a Link header for application/json', async () => {
    const id = await subscribe({}, { attributes: ['temperature'] });
    await createRoom(21);
    const [n] = await receiver.waitFor(1);
    expect(n!.headers['content-type']).toMatch(/^application\/json/);
    expect(n!.headers['link']).toBe(`<${CORE}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`);
    expect(n!.body).toMatchObject({ type: 'Notification', subscriptionId: id, notifiedAt: new Date(T0).toISOString() });
    expect(n!.body.id).toMatch(/^urn:ngsi-ld:Notification:[0-9a-f-]{36}$/);
    expect(n!.body.data).toEqual([{
      id: ROOM, type: 'Room', temperature: { type: 'Property', value: 21, createdAt: new Date(T0).toISOString() },
    }]);
  });

  it('application/ld+json carries @context in the body; receiverInfo pairs become headers', async () => {
    await subscribe({}, { endpoint: { uri: receiver.url(), accept: 'application/ld+json', receiverInfo: [{ key: 'X-Plant', value: 'north' }] } });
    await createRoom();
    const [n] = await receiver.waitFor(1);
    expect(n!.headers['content-type']).toMatch(/^application\/ld\+json/);
    expect(n!.headers['x-plant']).toBe('north');
    expect(n!.headers['link']).toBeUndefined();
    expect(n!.body['@context']).toEqual(CORE);
    // Each entity is a JSON-LD document of its own.
    expect(n!.body.data[0]['@context']).toEqual(CORE);
  });

  it('each notification shows the entity as that change left it, also for writes committed together', async () => {
    await subscribe({}, { format: 'keyValues', attributes: ['temperature'] });
    await createRoom(0);
    // Twenty updates issued in one turn: one group commit, read by the notifier in one batch.
    await Promise.all(Array.from({ length: 20 }, (_, i) => b.broker.entities.update({ tenant: '', admin: true, assignees: [], groups: [] }, ROOM,
      (current, now) => ({
        entity: { ...current, modifiedAt: now, attrs: { ...current.attrs, [VOCAB + 'temperature']: [{ kind: 'Property', value: i + 1, createdAt: T0, modifiedAt: now, sub: {} }] } },
        changes: [{ attr: VOCAB + 'temperature', instance: { kind: 'Property', value: i + 1, createdAt: T0, modifiedAt: now, sub: {} } }],
        updated: [VOCAB + 'temperature'], notUpdated: [],
      }))));
    await receiver.waitFor(21);
    expect(receiver.received.map((r) => r.body.data[0].temperature)).toEqual(Array.from({ length: 21 }, (_, i) => i));
  });

  it('keyValues with showChanges is the simplified form; one notification per change, not per attribute', async () => {
    await subscribe({}, { format: 'keyValues' });
    await createRoom(20);
    await write('PATCH', `${E}/${ROOM}/attrs`, { temperature: { type: 'Property', value: 22 }, humidity: { type: 'Property', value: 55 } });
    const got = await receiver.waitFor(2);
    await b.broker.notifier.idle();
    expect(receiver.received).toHaveLength(2);
    expect(got[1]!.body.data).toEqual([{ id: ROOM, type: 'Room', temperature: 22, humidity: 55 }]);
  });
});

describe('linked entities in notifications [§4.5.23]', () => {
  const BUILDING = 'urn:ngsi-ld:Building:b1';
  const withBuilding = async (): Promise<void> => {
    await write('POST', E, { id: BUILDING, type: 'Building', name: { type: 'Property', value: 'Main' } });
    await write('POST', E, { id: ROOM, type: 'Room', inBuilding: { type: 'Relationship', object: BUILDING } });
  };

  it('join=flat lists the linked entity after the notified one', async () => {
    await subscribe({}, { join: 'flat', joinLevel: 1 });
    await withBuilding();
    const [n] = await receiver.waitFor(1);
    expect(n!.body.data.map((e: { id: string }) => e.id)).toEqual([ROOM, BUILDING]);
    expect(n!.body.data[1]).toMatchObject({ type: 'Building', name: { type: 'Property', value: 'Main' } });
  });

  it('join=inline puts the linked entity in its relationship', async () => {
    await subscribe({}, { join: 'inline' });
    await withBuilding();
    const [n] = await receiver.waitFor(1);
    expect(n!.body.data).toHaveLength(1);
    expect(n!.body.data[0].inBuilding.entity).toMatchObject({ id: BUILDING, type: 'Building', name: { value: 'Main' } });
  });

  it('notification.attributes limits the notified entity, not the entities it links to', async () => {
    await subscribe({}, { join: 'inline', attributes: ['inBuilding'] });
    await withBuilding();
    const [n] = await receiver.waitFor(1);
    expect(Object.keys(n!.body.data[0]).sort()).toEqual(['id', 'inBuilding', 'type']);
    expect(n!.body.data[0].inBuilding.entity).toMatchObject({ id: BUILDING, type: 'Building', name: { value: 'Main' } });
  });

  it('joinLevel without join is 400 naming the member', async () => {
    const res = await b.request('POST', SUBS, {
      headers: LD,
      body: { type: 'Subscription', entities: [{ type: 'Room' }], notification: { joinLevel: 2, endpoint: { uri: receiver.url() } }, '@context': CORE },
    });
    expect(res.status).toBe(400);
    expect(res.json.detail).toContain('notification.joinLevel');
  });
});

describe('firing [§5.11]', () => {
  it('default triggers: attributes created and updated notify; q is evaluated on the state after the change', async () => {
    await subscribe({ q: 'temperature>20' });
    await createRoom(18);
    await setTemperature(19);
    await setTemperature(25);
    await setTemperature(20);
    await setTemperature(30);
    await receiver.waitFor(2);
    await b.broker.notifier.idle();
    expect(temperatures()).toEqual([25, 30]);
  });

  it('entityDeleted fires only when asked, and an update then does not', async () => {
    await subscribe({ notificationTrigger: ['entityDeleted'] });
    await createRoom();
    await setTemperature(23);
    await write('DELETE', `${E}/${ROOM}`);
    const [n] = await receiver.waitFor(1);
    await b.broker.notifier.idle();
    expect(receiver.received).toHaveLength(1);
    expect(n!.body.data[0]).toMatchObject({ id: ROOM, type: 'Room', deletedAt: new Date(T0).toISOString() });
  });

  it('entityDeleted with sysAttrs shows the entity\'s createdAt and modifiedAt beside deletedAt', async () => {
    await subscribe({ notificationTrigger: ['entityDeleted'] }, { format: 'keyValues', sysAttrs: true });
    await createRoom();
    b.clock.set(T0 + 5_000);
    await write('DELETE', `${E}/${ROOM}`);
    const [n] = await receiver.waitFor(1);
    expect(n!.body.data[0]).toEqual({
      id: ROOM, type: 'Room', createdAt: new Date(T0).toISOString(), modifiedAt: new Date(T0).toISOString(), deletedAt: new Date(T0 + 5_000).toISOString(),
    });
  });

  it('entityDeleted with showChanges lists every attribute as NGSI-LD Null with what it held', async () => {
    await subscribe({ notificationTrigger: ['entityDeleted'] }, { showChanges: true });
    await write('POST', E, {
      id: ROOM, type: 'Room', temperature: { type: 'Property', value: 20 },
      label: { type: 'LanguageProperty', languageMap: { en: 'Hall' } }, inBuilding: { type: 'Relationship', object: 'urn:ngsi-ld:Building:b9' },
    });
    await write('DELETE', `${E}/${ROOM}`);
    const [n] = await receiver.waitFor(1);
    expect(n!.body.data[0]).toEqual({
      id: ROOM, type: 'Room', deletedAt: new Date(T0).toISOString(),
      temperature: { type: 'Property', value: 'urn:ngsi-ld:null', previousValue: 20 },
      label: { type: 'LanguageProperty', languageMap: { '@none': 'urn:ngsi-ld:null' }, previousLanguageMap: { en: 'Hall' } },
      inBuilding: { type: 'Relationship', object: 'urn:ngsi-ld:null', previousObject: 'urn:ngsi-ld:Building:b9' },
    });
  });

  it('deleting an entity fires attributeDeleted for a watched attribute, shown alone as NGSI-LD Null', async () => {
    await subscribe({ notificationTrigger: ['attributeDeleted'], watchedAttributes: ['humidity'] });
    await createRoom();
    await write('DELETE', `${E}/${ROOM}`);
    const [n] = await receiver.waitFor(1);
    expect(n!.body.data[0]).toEqual({
      id: ROOM, type: 'Room', deletedAt: new Date(T0).toISOString(), humidity: { type: 'Property', value: 'urn:ngsi-ld:null' },
    });
  });

  it('with sysAttrs a deleted attribute carries its timestamps and when it went', async () => {
    await subscribe({ notificationTrigger: ['attributeDeleted'] }, { sysAttrs: true });
    await createRoom();
    b.clock.set(T0 + 7_000);
    await write('DELETE', `${E}/${ROOM}/attrs/humidity`);
    const [n] = await receiver.waitFor(1);
    expect(n!.body.data[0].humidity).toEqual({
      type: 'Property', value: 'urn:ngsi-ld:null', createdAt: new Date(T0).toISOString(), modifiedAt: new Date(T0).toISOString(),
      deletedAt: new Date(T0 + 7_000).toISOString(),
    });
  });

  it('one datasetId instance deleted shows beside the instances that stay (keyValues and normalized)', async () => {
    await subscribe({ notificationTrigger: ['attributeDeleted'] }, { format: 'keyValues' });
    await subscribe({ notificationTrigger: ['attributeDeleted'] }, { attributes: ['name'] });
    await write('POST', E, {
      id: ROOM, type: 'Room',
      name: [{ type: 'Property', value: 'Hall' }, { type: 'Property', value: 'Salle', datasetId: 'urn:ngsi-ld:Dataset:fr' }],
    });
    await write('DELETE', `${E}/${ROOM}/attrs/name?datasetId=urn:ngsi-ld:Dataset:fr`);
    const got = await receiver.waitFor(2);
    const names = got.map((r) => r.body.data[0].name);
    expect(names).toContainEqual({ dataset: { '@none': 'Hall', 'urn:ngsi-ld:Dataset:fr': 'urn:ngsi-ld:null' } });
    expect(names).toContainEqual([
      { type: 'Property', value: 'Hall', createdAt: new Date(T0).toISOString() },
      { type: 'Property', value: 'urn:ngsi-ld:null', datasetId: 'urn:ngsi-ld:Dataset:fr' },
    ]);
  });

  it('a q percent-encoded as in a query string is decoded', async () => {
    await subscribe({ q: 'name=="Main%20hall"' });
    await write('POST', E, { id: ROOM, type: 'Room', name: { type: 'Property', value: 'Main hall' } });
    const [n] = await receiver.waitFor(1);
    expect(n!.body.data[0].name.value).toBe('Main hall');
  });

  it('attributeDeleted notifies with the attribute as NGSI-LD Null', async () => {
    await subscribe({ notificationTrigger: ['attributeDeleted'] });
    await createRoom();
    await write('DELETE', `${E}/${ROOM}/attrs/humidity`);
    const [n] = await receiver.waitFor(1);
    expect(n!.body.data[0].humidity).toMatchObject({ type: 'Property', value: 'urn:ngsi-ld:null' });
  });

  it('watchedAttributes: only changes of a watched attribute notify', async () => {
    await subscribe({ watchedAttributes: ['temperature'] });
    await createRoom();
    await write('PATCH', `${E}/${ROOM}/attrs`, { humidity: { type: 'Property', value: 60 } });
    await setTemperature(26);
    await receiver.waitFor(2);
    await b.broker.notifier.idle();
    expect(temperatures()).toEqual([20, 26]);
  });

  it('history-only writes (a temporal back-fill) do not notify', async () => {
    await subscribe();
    await createRoom();
    await write('POST', `/ngsi-ld/v1/temporal/entities/${ROOM}/attrs`, { temperature: [{ type: 'Property', value: 1, observedAt: '2001-01-01T00:00:00Z' }] });
    await setTemperature(27);
    await receiver.waitFor(2);
    await b.broker.notifier.idle();
    expect(temperatures()).toEqual([20, 27]);
  });

  it('a paused subscription (isActive false) does not notify; resumed, it does', async () => {
    const id = await subscribe({ isActive: false });
    await createRoom();
    await b.broker.notifier.idle();
    expect(receiver.received).toHaveLength(0);
    await write('PATCH', `${SUBS}/${id}`, { isActive: true });
    await setTemperature(28);
    await receiver.waitFor(1);
    expect(temperatures()).toEqual([28]);
  });
});

describe('throttling, timeInterval and expiry on a controlled clock', () => {
  it('throttling: no second notification within the period', async () => {
    await subscribe({ throttling: 10 });
    await createRoom(1);
    await setTemperature(2);
    b.clock.set(T0 + 9_999);
    await setTemperature(3);
    b.clock.set(T0 + 10_000);
    await setTemperature(4);
    await receiver.waitFor(2);
    await b.broker.notifier.idle();
    expect(temperatures()).toEqual([1, 4]);
  });

  it('timeInterval notifies every matching entity each interval, and nothing between', async () => {
    await createRoom(5);
    await write('POST', E, { id: 'urn:ngsi-ld:Room:n2', type: 'Room', temperature: { type: 'Property', value: 6 } });
    await write('POST', E, { id: 'urn:ngsi-ld:Office:n3', type: 'Office', temperature: { type: 'Property', value: 7 } });
    const id = await subscribe({ timeInterval: 60 });
    expect(await b.broker.notifier.runPeriodic(T0)).toBe(1);
    expect(await b.broker.notifier.runPeriodic(T0 + 59_999)).toBe(0);
    expect(await b.broker.notifier.runPeriodic(T0 + 60_000)).toBe(1);
    const got = await receiver.waitFor(2);
    expect(got.map((r) => r.body.subscriptionId)).toEqual([id, id]);
    expect(got[0]!.body.data.map((e: { id: string }) => e.id).sort()).toEqual([ROOM, 'urn:ngsi-ld:Room:n2']);
    // Changes do not notify a periodic subscription.
    await setTemperature(9);
    await b.broker.notifier.idle();
    expect(receiver.received).toHaveLength(2);
  });

  it('expiresAt moves the status to expired, and an expired subscription does not notify', async () => {
    const id = await subscribe({ expiresAt: new Date(T0 + 60_000).toISOString() });
    expect((await b.request('GET', `${SUBS}/${id}`)).json.status).toBe('active');
    b.clock.set(T0 + 60_000);
    expect((await b.request('GET', `${SUBS}/${id}`)).json.status).toBe('expired');
    await createRoom();
    await b.broker.notifier.idle();
    expect(receiver.received).toHaveLength(0);
  });
});

describe('delivery that loses nothing', () => {
  it('a receiver answering 500 then recovering gets every notification, in order; counters follow', async () => {
    receiver.respondWith((i) => (i < 4 ? 500 : 200));
    const id = await subscribe();
    await createRoom(0);
    for (let v = 1; v <= 4; v++) await setTemperature(v);
    await receiver.waitFor(5, { accepted: true });
    expect(temperatures()).toEqual([0, 1, 2, 3, 4]);
    // The failed attempts were all of the first notification: order is kept.
    expect(receiver.received.slice(0, 5).map((r) => r.body.data[0].temperature.value)).toEqual([0, 0, 0, 0, 0]);
    await b.broker.notifier.idle();
    const sub = (await b.request('GET', `${SUBS}/${id}`)).json;
    expect(sub.notification).toMatchObject({ status: 'ok', timesSent: 9 });
    expect(sub.notification.lastFailure).toBeDefined();
    expect(sub.notification.lastSuccess).toBeDefined();
    expect(b.broker.store.notifications.size()).toBe(0);
  });

  it('an unreachable endpoint is recorded as a failure; the broker goes on serving', async () => {
    const dead = await startReceiver();
    const uri = dead.url();
    await dead.close();
    const res = await b.request('POST', SUBS, {
      headers: LD,
      body: { type: 'Subscription', entities: [{ type: 'Room' }], notification: { endpoint: { uri, accept: 'application/json' } }, '@context': CORE },
    });
    const id = res.headers.get('location')!.split('/').pop()!;
    await createRoom();
    await expect.poll(async () => (await b.request('GET', `${SUBS}/${id}`)).json.notification.status, { timeout: 5_000 }).toBe('failed');
    const sub = (await b.request('GET', `${SUBS}/${id}`)).json;
    expect(sub.notification.lastFailure).toBeDefined();
    expect((await b.request('GET', `${E}/${ROOM}`)).status).toBe(200);
  });

  it('a receiver answering garbage (a 3xx, a non-JSON body) is a failure, not a crash', async () => {
    receiver.respondWith((i) => (i === 0 ? 302 : 200));
    await subscribe();
    await createRoom(3);
    await receiver.waitFor(1, { accepted: true });
    expect(receiver.received.map((r) => r.status)).toEqual([302, 200]);
  });

  it('a slow receiver does not hold the writes nor the other subscriptions', async () => {
    const slow = await startReceiver();
    // Never answers: the notifier waits for the endpoint's timeout.
    slow.respondWith(() => 200);
    const hang = await startHangingReceiver();
    await b.request('POST', SUBS, {
      headers: LD,
      body: { type: 'Subscription', entities: [{ type: 'Room' }], notification: { endpoint: { uri: hang.url, accept: 'application/json', timeout: 60_000 } }, '@context': CORE },
    });
    await subscribe();
    await createRoom(1);
    await setTemperature(2);
    await receiver.waitFor(2);
    expect(temperatures()).toEqual([1, 2]);
    await hang.close();
    await slow.close();
  });
});

/** A server that accepts connections and never answers. */
async function startHangingReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const { createServer } = await import('node:net');
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port; // NOTE: a TCP server's address is an object
  return {
    url: `http://127.0.0.1:${port}/hang`,
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

describe('a failed notification leaves a trace [behaviour §7]', () => {
  it('a closed port: lastFailureReason says connection refused, and a warn line names subscription, endpoint and cause', async () => {
    const lines: string[] = [];
    await b.close();
    b = await startTestBroker({
      config: { notifications: { retryBase: 5, retryMax: 20, maxAttempts: 2, timeout: 2_000 } },
      log: createLogger('warn', 'edgeld', (line) => lines.push(line)),
    });
    const dead = await startReceiver();
    const uri = dead.url();
    await dead.close();
    const id = 'urn:ngsi-ld:Subscription:closed-port';
    const res = await b.request('POST', SUBS, {
      headers: LD,
      body: { id, type: 'Subscription', entities: [{ type: 'Room' }], notification: { endpoint: { uri, accept: 'application/json' } }, '@context': CORE },
    });
    expect(res.status, res.text).toBe(201);
    await createRoom();
    await expect.poll(async () => (await b.request('GET', `${SUBS}/${id}`)).json.notification.lastFailureReason, { timeout: 5_000 })
      .toBe('connection refused');
    const line = lines.find((l) => l.includes('notification failed'));
    expect(line).toBeDefined();
    expect(line).toContain(id);
    expect(line).toContain(uri);
    expect(line).toContain('connection refused');
  });

  it('an HTTP 500 answer: lastFailureReason gives the status, kept after a later success, read-only on PATCH', async () => {
    receiver.respondWith((i) => (i === 0 ? 500 : 200));
    const id = await subscribe();
    await createRoom(1);
    await receiver.waitFor(1, { accepted: true });
    await b.broker.notifier.idle();
    const sub = (await b.request('GET', `${SUBS}/${id}`)).json;
    expect(sub.notification).toMatchObject({ status: 'ok', lastFailureReason: 'HTTP 500 Internal Server Error' });
    expect(sub.notification.lastFailure).toBeDefined();
    const patch = await b.request('PATCH', `${SUBS}/${id}`, {
      headers: LD, body: { notification: { lastFailureReason: 'nothing' }, '@context': CORE },
    });
    expect(patch.status).toBe(400);
  });
});
