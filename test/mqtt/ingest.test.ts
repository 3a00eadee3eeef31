// Measurements over MQTT (edge.md §2) with real mqtt clients on the embedded broker: payload mapping,
// observedAt, backfill, status, PUBACK only after the commit, bad payloads dropped and counted while
// good ones go through, subscriptions fired, and 10,000 QoS 1 messages from 10 clients all stored.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { startTestBroker, T0, type TestBroker } from '../helpers/broker.js';
import { connectClient, publishAcked } from '../helpers/mqtt.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const CORE = 'https://uri.etsi.org/ngsi-ld/default-context/';
const id = (device: string) => `urn:ngsi-ld:Device:${device}`;

let b: TestBroker;
let client: MqttClient;

const publish = (topic: string, payload: unknown, qos: 0 | 1 = 1) =>
  publishAcked(client, topic, typeof payload === 'string' ? payload : JSON.stringify(payload), { qos });
const entity = async (device: string, tenant?: string) => {
  const res = await b.request('GET', `/ngsi-ld/v1/entities/${encodeURIComponent(id(device))}`, tenant ? { headers: { 'NGSILD-Tenant': tenant } } : {});
  return res;
};
const history = (device: string, attr: string, tenant = '') =>
  b.broker.store.history.listForEntity({ tenant }, id(device), CORE + attr);

beforeAll(async () => {
  b = await startTestBroker({ config: { server: { port: 0, host: '127.0.0.1' } } });
  await b.broker.listen();
  client = await connectClient(`mqtt://127.0.0.1:${b.broker.mqttPort}`);
});

afterAll(async () => {
  await client.endAsync();
  await b.close();
});

describe('payload mapping', () => {
  it('creates the device entity on its first measurement; PUBACK comes after the commit', async () => {
    await publish('ngsi/default/s1/attrs', {
      observedAt: '2026-05-01T09:00:00Z',
      temperature: 21.4,
      humidity: { value: 40, unitCode: 'P1' },
      location: { type: 'Point', coordinates: [13.39, 52.55] },
      room: { object: 'urn:ngsi-ld:Room:1' },
      pressure: { value: 1013, observedAt: '2026-05-01T08:59:00Z' },
    });
    // No wait: the PUBACK resolved the publish, so the write is committed.
    const res = await entity('s1');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      id: id('s1'), type: 'Device',
      temperature: { type: 'Property', value: 21.4, observedAt: '2026-05-01T09:00:00Z' },
      humidity: { type: 'Property', value: 40, unitCode: 'P1' },
      location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [13.39, 52.55] } },
      room: { type: 'Relationship', object: 'urn:ngsi-ld:Room:1' },
      pressure: { type: 'Property', value: 1013, observedAt: '2026-05-01T08:59:00Z' },
    });
    expect(history('s1', 'temperature')).toHaveLength(1);
  });

  it('takes the receive time when no observedAt is given, and a single value on attrs/<attr>', async () => {
    b.clock.set(T0 + 60_000);
    await publish('ngsi/default/s2/attrs/temperature', 19.5);
    const res = await entity('s2');
    expect(res.json.temperature).toMatchObject({ type: 'Property', value: 19.5, observedAt: new Date(T0 + 60_000).toISOString() });
  });

  it('sets connectionStatus from the status topic', async () => {
    await publish('ngsi/default/s2/status', 'online');
    expect((await entity('s2')).json.connectionStatus).toMatchObject({ type: 'Property', value: 'online' });
    await publish('ngsi/default/s2/status', '"offline"');
    expect((await entity('s2')).json.connectionStatus).toMatchObject({ value: 'offline' });
  });

  it('writes into the tenant of the topic', async () => {
    await publish('ngsi/plant2/s3/attrs', { temperature: 1 });
    expect((await entity('s3', 'plant2')).status).toBe(200);
    expect((await entity('s3')).status).toBe(404);
  });

  it('backfills: every element is a history instance, the newest is the current state', async () => {
    await publish('ngsi/default/s4/attrs', [
      { observedAt: '2026-05-01T08:00:00Z', temperature: 10 },
      { observedAt: '2026-05-01T08:10:00Z', temperature: 12 },
      { observedAt: '2026-05-01T08:05:00Z', temperature: 11 },
    ]);
    expect(history('s4', 'temperature')).toHaveLength(3);
    expect((await entity('s4')).json.temperature.value).toBe(12);
    // A later backfill of older values leaves the current state alone.
    await publish('ngsi/default/s4/attrs', [{ observedAt: '2026-05-01T07:00:00Z', temperature: 5 }]);
    expect(history('s4', 'temperature')).toHaveLength(4);
    expect((await entity('s4')).json.temperature.value).toBe(12);
  });
});

describe('duplicates', () => {
  it('stores a message with the device\'s observedAt once when it arrives twice, and keeps receive-time instances apart', async () => {
    const message = { observedAt: '2026-05-01T09:30:00Z', temperature: 22 };
    await publish('ngsi/default/dup/attrs', message);
    await publish('ngsi/default/dup/attrs', message);
    expect(history('dup', 'temperature')).toHaveLength(1);
    // Same receive time (the test clock stands still): two measurements, two instances.
    await publish('ngsi/default/dup/attrs', { humidity: 40 });
    await publish('ngsi/default/dup/attrs', { humidity: 41 });
    expect(history('dup', 'humidity')).toHaveLength(2);
    expect((await entity('dup')).json.humidity.value).toBe(41);
  });
});

describe('bad payloads', () => {
  it('drops and counts each kind, while good messages on the same connection go through', async () => {
    const before = b.broker.mqttIngest.stats();
    const bad: Array<[string, string, string]> = [
      ['ngsi/default/bad/attrs', 'not json', 'not-json'],
      ['ngsi/default/bad/attrs', '42', 'shape'],
      ['ngsi/default/bad/attrs', '[]', 'shape'],
      ['ngsi/default/bad/attrs', JSON.stringify({ observedAt: 'yesterday', t: 1 }), 'observed-at'],
      ['ngsi/default/bad/attrs', JSON.stringify({ 'a<b': 1 }), 'invalid'],
      ['ngsi/default/bad/attrs', JSON.stringify({ t: 'x'.repeat(70_000) }), 'too-large'],
      ['ngsi/default/bad/status', 'maybe', 'shape'],
      ['ngsi/default/bad/attrs', JSON.stringify({ observedAt: '2026-05-01T09:00:00Z' }), 'shape'],
    ];
    for (const [topic, payload] of bad) {
      await publish(topic, payload);
      await publish('ngsi/default/good/attrs', { temperature: 1 });
    }
    const after = b.broker.mqttIngest.stats();
    for (const reason of new Set(bad.map(([, , r]) => r))) {
      const expected = bad.filter(([, , r]) => r === reason).length;
      expect(after.dropped[reason as keyof typeof after.dropped] - before.dropped[reason as keyof typeof before.dropped], reason).toBe(expected);
    }
    expect(after.stored - before.stored).toBe(bad.length);
    expect((await entity('bad')).status).toBe(404);
    expect(history('good', 'temperature')).toHaveLength(bad.length);
    expect(client.connected).toBe(true);
  });

  it('ignores messages on other topics, and drops those on malformed measurement topics (reason topic)', async () => {
    const before = b.broker.mqttIngest.stats();
    await publish('plant/room1/temp', '20');
    expect(b.broker.mqttIngest.stats().received).toBe(before.received);
    await publish('ngsi/default/has space/attrs', '{"t":1}');
    await publish('ngsi/default/dev/other', '{"t":1}');
    const after = b.broker.mqttIngest.stats();
    expect(after.received - before.received).toBe(2);
    expect(after.dropped.topic - before.dropped.topic).toBe(2);
    expect(after.stored).toBe(before.stored);
  });
});

describe('subscriptions', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  it('fire for measurements like for any other write', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/subscriptions', {
      body: {
        type: 'Subscription', entities: [{ type: 'Device' }], watchedAttributes: ['temperature'], q: 'temperature>30',
        notification: { endpoint: { uri: receiver.url('/hot'), accept: 'application/json' } },
      },
    });
    expect(res.status).toBe(201);
    await publish('ngsi/default/hot1/attrs', { temperature: 25 });
    await publish('ngsi/default/hot1/attrs', { temperature: 35 });
    const [n] = await receiver.waitFor(1, { ms: 5_000 });
    expect(n?.body.data[0]).toMatchObject({ id: id('hot1'), temperature: { value: 35 } });
  });
});

describe('throughput', () => {
  it('stores 10,000 QoS 1 messages from 10 clients: exactly 10,000 instances and the right state', async () => {
    const clients = await Promise.all(Array.from({ length: 10 }, () => connectClient(`mqtt://127.0.0.1:${b.broker.mqttPort}`)));
    try {
      await Promise.all(clients.map(async (c, i) => {
        const sends: Array<Promise<unknown>> = [];
        for (let n = 0; n < 1_000; n++) {
          const at = new Date(T0 + n * 1000).toISOString();
          sends.push(publishAcked(c, `ngsi/default/load${i}/attrs`, JSON.stringify({ observedAt: at, n }), { qos: 1 }));
        }
        await Promise.all(sends);
      }));
    } finally {
      await Promise.all(clients.map((c) => c.endAsync()));
    }
    let total = 0;
    for (let i = 0; i < 10; i++) {
      total += history(`load${i}`, 'n').length;
      expect((await entity(`load${i}`)).json.n.value).toBe(999);
    }
    expect(total).toBe(10_000);
  }, 60_000);
});

describe('TLS listener', () => {
  it('takes measurements over mqtts:// with the configured key and certificate', async () => {
    const { readFileSync } = await import('node:fs');
    const fixture = (name: string) => new URL(`../fixtures/tls/${name}`, import.meta.url).pathname;
    const t = await startTestBroker({
      config: { server: { port: 0, host: '127.0.0.1' }, mqtt: { port: 0, host: '127.0.0.1', tlsPort: 0, tlsKey: fixture('key.pem'), tlsCert: fixture('cert.pem') } },
    });
    try {
      await t.broker.listen();
      const secure = await connectClient(`mqtts://127.0.0.1:${t.broker.mqttTlsPort}`, { ca: readFileSync(fixture('cert.pem')) });
      await publishAcked(secure, 'ngsi/default/tls1/attrs', JSON.stringify({ temperature: 7 }), { qos: 1 });
      await secure.endAsync();
      const res = await t.request('GET', `/ngsi-ld/v1/entities/${encodeURIComponent(id('tls1'))}`);
      expect(res.json.temperature.value).toBe(7);
      // The certificate is checked: a client that does not trust it cannot connect.
      await expect(connectClient(`mqtts://127.0.0.1:${t.broker.mqttTlsPort}`, {}, 3_000)).rejects.toThrow();
    } finally {
      await t.close();
    }
  });

  it('a key file that cannot be read stops the start, naming the option', async () => {
    const t = await startTestBroker({
      config: { server: { port: 0, host: '127.0.0.1' }, mqtt: { port: 0, host: '127.0.0.1', tlsPort: 0, tlsKey: '/nonexistent/key.pem', tlsCert: '/nonexistent/cert.pem' } },
    });
    try {
      await expect(t.broker.listen()).rejects.toThrow(/mqtt\.tls-key: cannot read/);
    } finally {
      await t.close();
    }
  });
});

describe('registered devices', () => {
  it('map to their entity, rename keys, add unit codes and start with their static attributes', async () => {
    const reg = await b.request('POST', '/edgeld/v1/devices', {
      body: {
        deviceId: 'boiler-7', entityId: 'urn:ngsi-ld:Boiler:7', entityType: 'Boiler',
        renames: { t: 'temperature' }, unitCodes: { temperature: 'CEL' },
        staticAttributes: { model: { type: 'Property', value: 'B-200' } },
      },
    });
    expect(reg.status, reg.text).toBe(201);
    await publish('ngsi/default/boiler-7/attrs', { t: 65 });
    const res = await b.request('GET', `/ngsi-ld/v1/entities/${encodeURIComponent('urn:ngsi-ld:Boiler:7')}`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      type: 'Boiler', temperature: { type: 'Property', value: 65, unitCode: 'CEL' }, model: { type: 'Property', value: 'B-200' },
    });
    expect(res.json.t).toBeUndefined();
    expect((await entity('boiler-7')).status).toBe(404);
  });
});
