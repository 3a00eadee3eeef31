// Notifications over MQTT (behaviour §7, edge §3): a subscription whose endpoint names the
// gateway's own broker is published in-process on the embedded Aedes; any other broker (a real
// mosquitto here) through the pooled mqtt client. Message body {metadata, body}; MQTT-QoS honoured.

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { connectClient, endClient, startMosquitto, subscribe, type Mosquitto } from '../../helpers/mqtt.js';

const SUBS = '/ngsi-ld/v1/subscriptions';
const E = '/ngsi-ld/v1/entities';
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
const LD = { 'Content-Type': 'application/ld+json' };

let b: TestBroker;
let clients: MqttClient[] = [];
let mosquitto: Mosquitto;

beforeAll(async () => {
  mosquitto = await startMosquitto({ users: { gw: 's3cret' } });
});
afterAll(() => mosquitto.remove());

beforeEach(async () => {
  b = await startTestBroker({ config: { server: { port: 0, host: '127.0.0.1' }, notifications: { retryBase: 5, retryMax: 20 } } });
  await b.broker.listen();
});

afterEach(async () => {
  for (const c of clients) await endClient(c);
  clients = [];
  await b.close();
});

async function client(url: string, opts = {}): Promise<MqttClient> {
  const c = await connectClient(url, opts);
  clients.push(c);
  return c;
}

async function subscribeTo(uri: string, notifierInfo?: Array<{ key: string; value: string }>): Promise<string> {
  const res = await b.request('POST', SUBS, {
    headers: LD,
    body: {
      type: 'Subscription', entities: [{ type: 'Room' }],
      notification: { attributes: ['temperature'], endpoint: { uri, accept: 'application/json', ...(notifierInfo ? { notifierInfo } : {}) } },
      '@context': CORE,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.headers.get('location')!.split('/').pop()!;
}

async function createRoom(n: number, temperature: number): Promise<void> {
  const res = await b.request('POST', E, { body: { id: `urn:ngsi-ld:Room:m${n}`, type: 'Room', temperature: { type: 'Property', value: temperature } } });
  expect(res.status).toBe(201);
}

describe('notifications on the embedded broker', () => {
  it('publishes {metadata, body} in-process to a client of the gateway, with the requested QoS', async () => {
    const port = b.broker.mqttPort!;
    const sub = await client(`mqtt://127.0.0.1:${port}`);
    const next = await subscribe(sub, 'plant/rooms', 1);
    const id = await subscribeTo(`mqtt://127.0.0.1:${port}/plant/rooms`, [{ key: 'MQTT-QoS', value: '1' }]);
    await createRoom(1, 21);
    const m = await next();
    expect(m.qos).toBe(1);
    const message = JSON.parse(m.payload.toString('utf8'));
    expect(message.metadata).toMatchObject({ 'Content-Type': 'application/json' });
    expect(message.metadata.Link).toContain(CORE);
    expect(message.body).toMatchObject({ type: 'Notification', subscriptionId: id });
    expect(message.body.data).toEqual([{ id: 'urn:ngsi-ld:Room:m1', type: 'Room', temperature: expect.objectContaining({ value: 21 }) }]);
    await expect.poll(async () => (await b.request('GET', `${SUBS}/${id}`)).json.notification.status).toBe('ok');
  });
});

describe('notifications to an outside broker', () => {
  it('publishes through mosquitto with the credentials of the URI, MQTT 5 when asked', async () => {
    const sub = await client(mosquitto.url, { username: 'gw', password: 's3cret' });
    const next = await subscribe(sub, 'edge/out', 0);
    await subscribeTo(`mqtt://gw:s3cret@127.0.0.1:${mosquitto.port}/edge/out`, [{ key: 'MQTT-Version', value: 'mqtt5.0' }]);
    await createRoom(2, 22);
    await createRoom(3, 23);
    const first = JSON.parse((await next()).payload.toString('utf8'));
    const second = JSON.parse((await next()).payload.toString('utf8'));
    expect([first.body.data[0].temperature.value, second.body.data[0].temperature.value]).toEqual([22, 23]);
  });

  it('wrong credentials are a recorded failure, never a crash', async () => {
    const id = await subscribeTo(`mqtt://gw:wrong@127.0.0.1:${mosquitto.port}/edge/out`);
    await createRoom(4, 24);
    await expect.poll(async () => (await b.request('GET', `${SUBS}/${id}`)).json.notification.status, { timeout: 10_000 }).toBe('failed');
    expect((await b.request('GET', `${E}/urn:ngsi-ld:Room:m4`)).status).toBe(200);
  });
});
