// The embedded MQTT broker with authentication on: a client's password must be a token the HTTP API
// accepts; anonymous clients and bad tokens are refused at CONNECT (CONNACK 4).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from 'jose';
import { ADMIN_ROLE, mint, startAuthBroker, type AuthBroker } from '../helpers/auth.js';
import { connectClient, mqttVersion, publishAcked, refusedWith } from '../helpers/mqtt.js';
import { within } from '../helpers/process.js';
import { createLogger } from '../../src/lib/index.js';

describe('embedded MQTT broker with authentication', () => {
  let b: AuthBroker;
  let url: string;
  beforeAll(async () => {
    b = await startAuthBroker({ config: { server: { port: 0, host: '127.0.0.1' } } });
    await b.broker.listen();
    url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
  });
  afterAll(() => b.close());

  it('accepts a client whose password is a valid token', async () => {
    const client = await connectClient(url, { username: 'dashboard', password: await b.token('alice') });
    expect(client.connected).toBe(true);
    await client.endAsync();
  });

  it('writes measurements with the permissions of the token\'s subject', async () => {
    const alice = await connectClient(url, { username: 'alice', password: await b.token('alice') });
    const bob = await connectClient(url, { username: 'bob', password: await b.token('bob') });
    const admin = await connectClient(url, { username: 'root', password: await b.token('root', { roles: [ADMIN_ROLE] }) });
    try {
      // Authentication on: no autoprovisioning by default, so an administrator creates the entity.
      const created = await b.as('alice', 'POST', '/ngsi-ld/v1/entities', { body: { id: 'urn:ngsi-ld:Device:m1', type: 'Device' } });
      expect(created.status).toBe(201);
      const before = b.broker.mqttIngest.stats();
      await publishAcked(alice, 'ngsi/default/m1/attrs', JSON.stringify({ temperature: 1 }), { qos: 1 });
      await publishAcked(bob, 'ngsi/default/m1/attrs', JSON.stringify({ temperature: 666 }), { qos: 1 });
      const after = b.broker.mqttIngest.stats();
      expect(after.stored - before.stored).toBe(1);
      expect(after.dropped.forbidden - before.dropped.forbidden).toBe(1);
      const res = await b.as('alice', 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent('urn:ngsi-ld:Device:m1')}`);
      expect(res.json.temperature.value).toBe(1);
      // An unknown device is not created when autoprovisioning is off (authentication on).
      await publishAcked(admin, 'ngsi/default/unknown9/attrs', JSON.stringify({ temperature: 2 }), { qos: 1 });
      expect(b.broker.mqttIngest.stats().dropped['unknown-device'] - after.dropped['unknown-device']).toBe(1);
    } finally {
      await Promise.all([alice, bob, admin].map((c) => c.endAsync()));
    }
  });

  it('keeps measurement topics from non-administrators', async () => {
    const bob = await connectClient(url, { username: 'bob', password: await b.token('bob') });
    const admin = await connectClient(url, { username: 'root', password: await b.token('root', { roles: [ADMIN_ROLE] }) });
    try {
      // SUBACK 0x80: mqtt.js rejects the subscription.
      await expect(bob.subscribeAsync('ngsi/#', { qos: 0 })).rejects.toThrow(/Subscribe error/);
      await expect(bob.subscribeAsync('#', { qos: 0 })).rejects.toThrow(/Subscribe error/);
      const other = await bob.subscribeAsync('plant/room1', { qos: 1 });
      expect(other[0]?.qos).toBe(1);
      const granted = await admin.subscribeAsync('ngsi/#', { qos: 1 });
      expect(granted[0]?.qos).toBe(1);
    } finally {
      await Promise.all([bob, admin].map((c) => c.endAsync()));
    }
  });

  it('lets only its owner subscribe to the topic a subscription notifies on', async () => {
    const created = await b.as('alice', 'POST', '/ngsi-ld/v1/subscriptions', {
      body: { type: 'Subscription', entities: [{ type: 'Device' }], notification: { endpoint: { uri: `mqtt://127.0.0.1:${b.broker.mqttPort}/edgeld/notify/alice/alerts` } } },
    });
    expect(created.status, created.text).toBe(201);
    const alice = await connectClient(url, { username: 'alice', password: await b.token('alice') });
    const bob = await connectClient(url, { username: 'bob', password: await b.token('bob') });
    try {
      await expect(bob.subscribeAsync('edgeld/notify/alice/alerts', { qos: 0 })).rejects.toThrow(/Subscribe error/);
      await expect(bob.subscribeAsync('edgeld/notify/+/alerts', { qos: 0 })).rejects.toThrow(/Subscribe error/);
      expect((await bob.subscribeAsync('edgeld/notify/bob/alerts', { qos: 0 }))[0]?.qos).toBe(0);
      expect((await alice.subscribeAsync('edgeld/notify/alice/alerts', { qos: 0 }))[0]?.qos).toBe(0);
      // Nobody but the broker publishes there: a forged notification ends the connection (at MQTT 5:
      // PUBACK 0x87, the connection kept).
      if (mqttVersion() === 5) {
        expect(await publishAcked(bob, 'edgeld/notify/alice/alerts', '{"forged":true}', { qos: 1 })).toBe(0x87);
      } else {
        const closed = new Promise<void>((resolve) => bob.once('close', () => resolve()));
        bob.publish('edgeld/notify/alice/alerts', '{"forged":true}', { qos: 1 });
        await within(closed, 5_000, 'forging client disconnected');
        expect(bob.connected).toBe(false);
      }
      // Other topics stay open to publish on.
      await publishAcked(alice, 'plant/room1', 'ok', { qos: 1 });
    } finally {
      bob.end(true);
      await alice.endAsync();
    }
  });

  it('refuses anonymous clients and bad tokens with CONNACK 4', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const foreign = await mint(privateKey, b.clock.now(), 'alice');
    for (const opts of [{}, { username: 'dashboard' }, { username: 'dashboard', password: 'secret' }, { username: 'dashboard', password: foreign }]) {
      await expect(connectClient(url, opts, 3_000)).rejects.toMatchObject({ code: refusedWith(4) });
    }
  });
});

describe('devices with their secret', () => {
  let b: AuthBroker;
  let url: string;
  let secret: string;
  beforeAll(async () => {
    b = await startAuthBroker({ config: { server: { port: 0, host: '127.0.0.1' } } });
    await b.broker.listen();
    url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    const reg = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId: 'meter-1' }, claims: { roles: [ADMIN_ROLE] } });
    expect(reg.status, reg.text).toBe(201);
    secret = reg.json.secret;
    const other = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId: 'meter-2' }, claims: { roles: [ADMIN_ROLE] } });
    expect(other.status).toBe(201);
  });
  afterAll(() => b.close());

  it('connects with user name and client id <tenant>/<deviceId>, and writes its own entity', async () => {
    const device = await connectClient(url, { clientId: 'default/meter-1', username: 'default/meter-1', password: secret });
    try {
      await publishAcked(device, 'ngsi/default/meter-1/attrs', JSON.stringify({ energy: 5 }), { qos: 1 });
      const res = await b.as('root', 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent('urn:ngsi-ld:Device:meter-1')}`, { claims: { roles: [ADMIN_ROLE] } });
      expect(res.json.energy.value).toBe(5);
      // Its writes are audited as the device.
      const audit = await b.as('root', 'GET',
        `/ngsi-ld/v1/temporal/entities/${encodeURIComponent('urn:ngsi-ld:Device:meter-1')}?options=audit&timeproperty=createdAt&timerel=after&timeAt=2000-01-01T00:00:00Z`,
        { claims: { roles: [ADMIN_ROLE] } });
      expect(audit.json.energy[0].sub.value).toBe('urn:ngsi-ld:Device:default:meter-1');
      // Another device's topic: dropped as forbidden, nothing written.
      const before = b.broker.mqttIngest.stats().dropped.forbidden;
      await publishAcked(device, 'ngsi/default/meter-2/attrs', JSON.stringify({ energy: 99 }), { qos: 1 });
      expect(b.broker.mqttIngest.stats().dropped.forbidden - before).toBe(1);
      const other = await b.as('root', 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent('urn:ngsi-ld:Device:meter-2')}`, { claims: { roles: [ADMIN_ROLE] } });
      expect(other.status).toBe(404);
      // Measurement topics of other devices cannot be subscribed to; its own can.
      await expect(device.subscribeAsync('ngsi/default/meter-2/#', { qos: 0 })).rejects.toThrow(/Subscribe error/);
      expect((await device.subscribeAsync('ngsi/default/meter-1/#', { qos: 0 }))[0]?.qos).toBe(0);
    } finally {
      await device.endAsync();
    }
  });

  it('refuses a wrong secret (CONNACK 4) and a client id other than the user name (CONNACK 2)', async () => {
    await expect(connectClient(url, { clientId: 'default/meter-1', username: 'default/meter-1', password: 'wrong' }, 3_000)).rejects.toMatchObject({ code: refusedWith(4) });
    await expect(connectClient(url, { clientId: 'someone', username: 'default/meter-1', password: secret }, 3_000)).rejects.toMatchObject({ code: refusedWith(2) });
  });
});

describe('devices named by their bare id in the default tenant', () => {
  let b: AuthBroker;
  let url: string;
  let secret: string;
  let foreignSecret: string;
  const lines: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    b = await startAuthBroker({
      config: { server: { port: 0, host: '127.0.0.1' } },
      log: createLogger('info', 'edgeld', (l) => lines.push(JSON.parse(l) as Record<string, unknown>)),
    });
    await b.broker.listen();
    url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    const reg = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId: 'th-01' }, claims: { roles: [ADMIN_ROLE] } });
    expect(reg.status, reg.text).toBe(201);
    secret = reg.json.secret;
    const foreign = await b.as('root', 'POST', '/edgeld/v1/devices', {
      body: { deviceId: 'th-02' }, headers: { 'NGSILD-Tenant': 'acme' }, claims: { roles: [ADMIN_ROLE] },
    });
    expect(foreign.status, foreign.text).toBe(201);
    foreignSecret = foreign.json.secret;
  });
  afterAll(() => b.close());

  it('connects with client id and user name th-01 as default/th-01, and its measurement is stored', async () => {
    for (const username of ['th-01', 'default/th-01']) {
      const device = await connectClient(url, { clientId: 'th-01', username, password: secret });
      try {
        await publishAcked(device, 'ngsi/default/th-01/attrs', JSON.stringify({ temperature: username.length }), { qos: 1 });
      } finally {
        await device.endAsync();
      }
      const res = await b.as('root', 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent('urn:ngsi-ld:Device:th-01')}`, { claims: { roles: [ADMIN_ROLE] } });
      expect(res.status, res.text).toBe(200);
      expect(res.json.temperature.value).toBe(username.length);
    }
  });

  it('refuses the bare id with a wrong secret (CONNACK 4)', async () => {
    await expect(connectClient(url, { clientId: 'th-01', username: 'th-01', password: 'wrong' }, 3_000)).rejects.toMatchObject({ code: refusedWith(4) });
  });

  it('refuses a bare id naming a device of another tenant, even with that device\'s secret (CONNACK 4)', async () => {
    await expect(connectClient(url, { clientId: 'th-02', username: 'th-02', password: foreignSecret }, 3_000)).rejects.toMatchObject({ code: refusedWith(4) });
    // Its own name connects it.
    const device = await connectClient(url, { clientId: 'acme/th-02', username: 'acme/th-02', password: foreignSecret });
    await device.endAsync();
  });

  it('keeps a registered device\'s client id, bare or not, from clients with a token (CONNACK 5)', async () => {
    const token = await b.token('alice');
    for (const clientId of ['th-01', 'default/th-01', 'acme/th-02']) {
      await expect(connectClient(url, { clientId, username: 'alice', password: token }, 3_000)).rejects.toMatchObject({ code: refusedWith(5) });
    }
    const refusals = lines.filter((l) => l['msg'] === 'mqtt client refused: its client id is that of a registered device');
    expect(refusals.at(-1)).toMatchObject({ clientId: 'acme/th-02', user: 'alice', expected: expect.stringContaining('registered device') });
    // A name no device has is free to use.
    const dashboard = await connectClient(url, { clientId: 'th-99', username: 'alice', password: token });
    await dashboard.endAsync();
  });

  it('refuses a client id naming another device (CONNACK 2) and says which form is expected', async () => {
    await expect(connectClient(url, { clientId: 'th-02', username: 'th-01', password: secret }, 3_000)).rejects.toMatchObject({ code: refusedWith(2) });
    await expect(connectClient(url, { clientId: 'acme/th-01', username: 'th-01', password: secret }, 3_000)).rejects.toMatchObject({ code: refusedWith(2) });
    const refusals = lines.filter((l) => l['msg'] === 'mqtt device refused: its client id names another device, or none');
    expect(refusals).toHaveLength(2);
    expect(refusals[0]).toMatchObject({ clientId: 'th-02', user: 'default/th-01', expected: expect.stringContaining('<tenant>/<deviceId>') });
  });
});
