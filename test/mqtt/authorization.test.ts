// With authentication on, what reaches a client over MQTT is decided per message at delivery, not
// only at SUBSCRIBE: another subject's notifications never arrive under a wildcard granted earlier;
// $SYS is for administrators; a subscription's MQTT endpoint on the embedded broker names only its
// subscriber's own notification topics; and a refused publish (a will included) is neither relayed
// nor retained.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { publishAcked } from '../helpers/mqtt.js';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../helpers/auth.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { connectInbox, trySubscribe, type Inbox } from '../helpers/mqtt-inbox.js';

const BAD_REQUEST_DATA = 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData';

describe('MQTT authorization with authentication on', () => {
  let b: AuthBroker;
  let url: string;
  let devSecret: string;
  const open: Inbox[] = [];
  const as = async (username: string, opts: { roles?: string[]; clientId?: string } = {}): Promise<Inbox> => {
    const inbox = await connectInbox(url, {
      username, password: await b.token(username, opts.roles ? { roles: opts.roles } : {}), ...(opts.clientId ? { clientId: opts.clientId } : {}),
    });
    open.push(inbox);
    return inbox;
  };
  const subscription = (sub: string, topic: string, type = 'Safe') => b.as(sub, 'POST', '/ngsi-ld/v1/subscriptions', {
    body: { type: 'Subscription', entities: [{ type }], notification: { endpoint: { uri: `mqtt://127.0.0.1:${b.broker.mqttPort}/${topic}` } } },
  });

  /** Registers a device and stores its first measurement: its entity exists, created by the device. */
  const deviceWithEntity = async (deviceId: string): Promise<void> => {
    const reg = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId }, claims: { roles: [ADMIN_ROLE] } });
    expect(reg.status, reg.text).toBe(201);
    const device = await connectInbox(url, { clientId: deviceId, username: deviceId, password: reg.json.secret });
    await publishAcked(device.client, `ngsi/default/${deviceId}/attrs`, '{"temperature":20}', { qos: 1 });
    await device.end();
    const entity = await b.as('root', 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent(`urn:ngsi-ld:Device:${deviceId}`)}`, { claims: { roles: [ADMIN_ROLE] } });
    expect(entity.status, entity.text).toBe(200);
  };

  beforeAll(async () => {
    b = await startAuthBroker();
    await b.broker.listen();
    url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    const reg = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId: 'dev1' }, claims: { roles: [ADMIN_ROLE] } });
    expect(reg.status, reg.text).toBe(201);
    devSecret = reg.json.secret;
  });
  afterAll(async () => {
    for (const inbox of open) inbox.client.end(true);
    await b.close();
  });

  it('does not deliver another subject\'s notification under a prefix granted before it existed', async () => {
    const bob = await as('bob');
    // Granted: no subscription notifies there yet.
    expect(await trySubscribe(bob.client, 'edgeld/dashboard/#')).toBe(true);
    expect(await trySubscribe(bob.client, 'marker/bob')).toBe(true);
    const created = await subscription('alice', 'edgeld/dashboard/alice-view');
    expect(created.status, created.text).toBe(201);
    const alice = await as('alice');
    expect(await trySubscribe(alice.client, 'edgeld/dashboard/alice-view')).toBe(true);
    const entity = await b.as('alice', 'POST', '/ngsi-ld/v1/entities', { body: { id: 'urn:ngsi-ld:Safe:1', type: 'Safe', pin: { type: 'Property', value: 4711 } } });
    expect(entity.status, entity.text).toBe(201);
    // Alice gets her notification; bob gets nothing of it before a later message.
    const notified = await waitForTopic(alice, 'edgeld/dashboard/alice-view');
    expect(notified.payload).toContain('4711');
    await b.broker.publishLocal('marker/bob', 'after', 0);
    const seen = await bob.before('marker/bob', 'after');
    expect(seen.filter((m) => m.topic.startsWith('edgeld/dashboard/'))).toEqual([]);
    // HTTP refuses him the same entity.
    expect((await b.as('bob', 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent('urn:ngsi-ld:Safe:1')}`)).status).toBe(403);
  });

  it('refuses other subjects\' notification prefixes at SUBSCRIBE', async () => {
    const bob = await as('bob');
    for (const filter of ['edgeld/notify/alice/#', 'edgeld/notify/+/#', 'edgeld/#']) expect(await trySubscribe(bob.client, filter), filter).toBe(false);
    expect(await trySubscribe(bob.client, 'edgeld/notify/bob/#')).toBe(true);
  });

  it('keeps $SYS/# for administrators', async () => {
    const bob = await as('bob');
    expect(await trySubscribe(bob.client, '$SYS/#')).toBe(false);
    const device = await connectInbox(url, { clientId: 'default/dev1', username: 'default/dev1', password: devSecret });
    open.push(device);
    expect(await trySubscribe(device.client, '$SYS/#')).toBe(false);
    const admin = await as('root', { roles: [ADMIN_ROLE] });
    expect(await trySubscribe(admin.client, '$SYS/#')).toBe(true);
    // What $SYS tells (every client id) reaches the administrator.
    await as('carol', { clientId: 'carol-sys-probe' });
    expect(await waitForPayload(admin, 'carol-sys-probe')).toBeDefined();
  });

  it('refuses a subscription whose MQTT endpoint names a device\'s topic or another subject\'s (400 BadRequestData), at creation and patch', async () => {
    const mine = await subscription('alice', 'edgeld/notify/alice/alerts');
    expect(mine.status, mine.text).toBe(201);
    for (const topic of ['ngsi/default/dev1/attrs', 'edgeld/notify/alice/alerts', 'edgeld/dashboard/alice-view', 'plant/room1', '$SYS/x']) {
      const res = await subscription('bob', topic);
      expect(res.status, `${topic}: ${res.text}`).toBe(400);
      expect(res.json.type).toBe(BAD_REQUEST_DATA);
    }
    const own = await subscription('bob', 'edgeld/notify/bob/alerts');
    expect(own.status, own.text).toBe(201);
    const id = own.headers.get('Location')!.split('/').pop()!;
    const patched = await b.as('bob', 'PATCH', `/ngsi-ld/v1/subscriptions/${id}`, {
      body: { notification: { endpoint: { uri: `mqtt://127.0.0.1:${b.broker.mqttPort}/ngsi/default/dev1/cmd` } } },
    });
    expect(patched.status, patched.text).toBe(400);
    // Another endpoint (not the embedded broker) is not this rule's business.
    const elsewhere = await b.as('bob', 'POST', '/ngsi-ld/v1/subscriptions', {
      body: { type: 'Subscription', entities: [{ type: 'Safe' }], notification: { endpoint: { uri: 'mqtt://192.0.2.1:1883/anything' } } },
    });
    expect(elsewhere.status, elsewhere.text).toBe(201);
  });

  it('neither creates a device\'s entity for another subject, nor relays nor retains what it publishes there', async () => {
    const admin = await as('root', { roles: [ADMIN_ROLE] });
    expect(await trySubscribe(admin.client, 'ngsi/default/dev1/attrs')).toBe(true);
    const bob = await as('bob');
    const before = b.broker.mqttIngest.stats();
    await publishAcked(bob.client, 'ngsi/default/dev1/attrs', '{"temperature":665}', { qos: 1, retain: true });
    expect(b.broker.mqttIngest.stats().dropped['unknown-device'] - before.dropped['unknown-device']).toBe(1);
    const entity = await b.as('root', 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent('urn:ngsi-ld:Device:dev1')}`, { claims: { roles: [ADMIN_ROLE] } });
    expect(entity.status).toBe(404);
    // A later subscriber gets no retained message from it.
    const later = await as('root', { roles: [ADMIN_ROLE] });
    expect(await trySubscribe(later.client, 'ngsi/default/dev1/attrs')).toBe(true);
    await b.broker.publishLocal('ngsi/default/dev1/attrs', 'marker-0', 0);
    expect(await later.before('ngsi/default/dev1/attrs', 'marker-0')).toEqual([]);
    expect((await admin.before('ngsi/default/dev1/attrs', 'marker-0')).map((m) => m.payload)).not.toContain('{"temperature":665}');
  });

  it('neither relays nor retains a measurement another subject may not write', async () => {
    await deviceWithEntity('dev2');
    const admin = await as('root', { roles: [ADMIN_ROLE] });
    expect(await trySubscribe(admin.client, 'ngsi/default/dev2/attrs')).toBe(true);
    const bob = await as('bob');
    const forbidden = b.broker.mqttIngest.stats().dropped.forbidden;
    await publishAcked(bob.client, 'ngsi/default/dev2/attrs', '{"temperature":666}', { qos: 1 });
    expect(b.broker.mqttIngest.stats().dropped.forbidden - forbidden).toBe(1);
    await b.broker.publishLocal('ngsi/default/dev2/attrs', 'marker-1', 0);
    expect((await admin.before('ngsi/default/dev2/attrs', 'marker-1')).map((m) => m.payload)).not.toContain('{"temperature":666}');
    // Retained: a later subscriber gets the device's own retained value at most, never bob's.
    await publishAcked(bob.client, 'ngsi/default/dev2/attrs', '{"temperature":667}', { qos: 1, retain: true });
    const later = await as('root', { roles: [ADMIN_ROLE] });
    expect(await trySubscribe(later.client, 'ngsi/default/dev2/attrs')).toBe(true);
    await b.broker.publishLocal('ngsi/default/dev2/attrs', 'marker-2', 0);
    expect(await later.before('ngsi/default/dev2/attrs', 'marker-2')).toEqual([]);
  });

  it('neither relays nor retains a will its client may not publish', async () => {
    await deviceWithEntity('dev3');
    const bob = await connectInbox(url, {
      username: 'bob', password: await b.token('bob'),
      will: { topic: 'ngsi/default/dev3/status', payload: Buffer.from('offline'), qos: 1, retain: true },
    });
    // The connection ends without DISCONNECT: the will is due [MQTT-3.1.2-8].
    const forbidden = b.broker.mqttIngest.stats().dropped.forbidden;
    bob.client.stream.destroy();
    await vi.waitFor(() => expect(b.broker.mqttIngest.stats().dropped.forbidden).toBeGreaterThan(forbidden), { timeout: 5_000 });
    const later = await as('root', { roles: [ADMIN_ROLE] });
    expect(await trySubscribe(later.client, 'ngsi/default/dev3/status')).toBe(true);
    await b.broker.publishLocal('ngsi/default/dev3/status', 'marker-4', 0);
    expect(await later.before('ngsi/default/dev3/status', 'marker-4')).toEqual([]);
  });
});

describe('subscription MQTT endpoints with authentication off', () => {
  let b: TestBroker;
  beforeAll(async () => {
    b = await startTestBroker();
    await b.broker.listen();
  });
  afterAll(() => b.close());

  it('accepts any topic of the embedded broker, as before', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/subscriptions', {
      body: { type: 'Subscription', entities: [{ type: 'Safe' }], notification: { endpoint: { uri: `mqtt://127.0.0.1:${b.broker.mqttPort}/ngsi/default/dev1/attrs` } } },
    });
    expect(res.status, res.text).toBe(201);
  });
});

/** The first message on `topic` (bounded). */
async function waitForTopic(inbox: Inbox, topic: string): Promise<{ topic: string; payload: string }> {
  return vi.waitFor(() => {
    const found = inbox.messages.find((m) => m.topic === topic);
    expect(found, `a message on ${topic}`).toBeDefined();
    return found!;
  }, { timeout: 5_000 });
}

async function waitForPayload(inbox: Inbox, payload: string): Promise<{ topic: string; payload: string }> {
  return vi.waitFor(() => {
    const found = inbox.messages.find((m) => m.payload === payload);
    expect(found, `a message ${payload}`).toBeDefined();
    return found!;
  }, { timeout: 5_000 });
}
