// MQTT 5 properties of what the gateway publishes on its embedded broker: a notification carries its
// Message Expiry Interval and is not delivered from an offline session's queue once it has passed; a
// command carries its expiry as one, the device's cmdexe topic as Response Topic and the command id as
// Correlation Data, and an answer with that Correlation Data is matched by it.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { connect, type IPublishPacket, type MqttClient } from 'mqtt';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { connectClient } from '../helpers/mqtt.js';
import { connectInbox, type Inbox } from '../helpers/mqtt-inbox.js';
import { within } from '../helpers/process.js';
import { waitUntil } from '../helpers/fake-cloud.js';

const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
const ENTITY = 'urn:ngsi-ld:Valve:v1';

let b: TestBroker;
const open: Array<MqttClient | Inbox> = [];
afterEach(async () => {
  for (const c of open.splice(0)) ('client' in c ? c.client : c).end(true);
  await b.close();
});

async function start(notificationExpiry?: number): Promise<string> {
  b = await startTestBroker({ config: { server: { port: 0, host: '127.0.0.1' }, ...(notificationExpiry === undefined ? {} : { mqtt: { notificationExpiry } }) } });
  await b.broker.listen();
  return `mqtt://127.0.0.1:${b.broker.mqttPort}`;
}

/** The next publish packet on `topic` (bounded). */
function nextPacket(client: MqttClient, topic: string): Promise<IPublishPacket> {
  return within(new Promise<IPublishPacket>((resolve) => {
    const on = (t: string, _p: Buffer, packet: IPublishPacket): void => {
      if (t !== topic) return;
      client.off('message', on);
      resolve(packet);
    };
    client.on('message', on);
  }), 5_000, `a message on ${topic}`);
}

async function subscribeRoomsTo(topic: string): Promise<void> {
  const res = await b.request('POST', '/ngsi-ld/v1/subscriptions', {
    headers: { 'Content-Type': 'application/ld+json' },
    body: {
      type: 'Subscription', entities: [{ type: 'Room' }],
      notification: { attributes: ['temperature'], endpoint: { uri: `mqtt://127.0.0.1:${b.broker.mqttPort}/${topic}`, accept: 'application/json', notifierInfo: [{ key: 'MQTT-QoS', value: '1' }] } },
      '@context': CORE,
    },
  });
  expect(res.status, res.text).toBe(201);
}

const createRoom = async (n: number): Promise<void> => {
  expect((await b.request('POST', '/ngsi-ld/v1/entities', { body: { id: `urn:ngsi-ld:Room:r${n}`, type: 'Room', temperature: { type: 'Property', value: n } } })).status).toBe(201);
};

describe('notifications on the embedded broker, MQTT 5', () => {
  it('carry their Message Expiry Interval (mqtt.notification-expiry) to a v5 subscriber, none to a 3.1.1 one', async () => {
    const url = await start();
    const v5 = await connectClient(url, { protocolVersion: 5 });
    const v4 = await connectClient(url, { protocolVersion: 4 });
    open.push(v5, v4);
    await v5.subscribeAsync('rooms/n', { qos: 1 });
    await v4.subscribeAsync('rooms/n', { qos: 1 });
    await subscribeRoomsTo('rooms/n');
    const [got5, got4] = [nextPacket(v5, 'rooms/n'), nextPacket(v4, 'rooms/n')];
    await createRoom(1);
    expect((await got5).properties?.messageExpiryInterval).toBe(86_400);
    expect((await got4).properties).toBeUndefined();
  });

  it('are not delivered from an offline session\'s queue once their expiry has passed', async () => {
    const url = await start(1);
    const first = await connectInbox(url, { clientId: 'n-5', clean: false, protocolVersion: 5, properties: { sessionExpiryInterval: 600 } });
    await first.client.subscribeAsync('rooms/q', { qos: 1 });
    await first.end();
    await subscribeRoomsTo('rooms/q');
    await createRoom(1);
    await vi.waitFor(() => expect(b.broker.store.mqttSessions.lastQueued('n-5')).toBeGreaterThan(0), { timeout: 5_000 });
    const queuedAt = Date.now();
    // Its second of life passes while the session is offline.
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(queuedAt + 1_100), { timeout: 5_000, interval: 50 });
    const back = await connectInbox(url, { clientId: 'n-5', clean: false, protocolVersion: 5, properties: { sessionExpiryInterval: 600 } });
    open.push(back);
    expect(back.sessionPresent).toBe(true);
    await b.broker.publishLocal('rooms/q', 'marker', 1);
    expect(await back.before('rooms/q', 'marker')).toEqual([]);
    await vi.waitFor(() => expect(b.broker.store.mqttSessions.lastQueued('n-5')).toBe(0), { timeout: 5_000 });
  });
});

describe('notifications queued for an offline MQTT 5 session', () => {
  it('are delivered with what is left of their Message Expiry Interval', async () => {
    const url = await start(600);
    const opts = { clientId: 'n-6', clean: false, protocolVersion: 5 as const, properties: { sessionExpiryInterval: 600 } };
    const first = await connectInbox(url, opts);
    await first.client.subscribeAsync('rooms/r', { qos: 1 });
    await first.end();
    await subscribeRoomsTo('rooms/r');
    await createRoom(2);
    await vi.waitFor(() => expect(b.broker.store.mqttSessions.lastQueued('n-6')).toBeGreaterThan(0), { timeout: 5_000 });
    const client = connect(url, { ...opts, reconnectPeriod: 0 });
    open.push(client);
    const packet = await nextPacket(client, 'rooms/r');
    expect(packet.properties?.messageExpiryInterval).toBeGreaterThan(590);
    expect(packet.properties?.messageExpiryInterval).toBeLessThanOrEqual(600);
  });
});

describe('commands to an MQTT 5 device', () => {
  it('carry the command\'s expiry, the cmdexe Response Topic and the command id as Correlation Data; an answer with that Correlation Data is matched', async () => {
    const url = await start();
    const reg = await b.request('POST', '/edgeld/v1/devices', {
      body: { deviceId: 'v1', entityId: ENTITY, entityType: 'Valve', commands: [{ name: 'open', expires: 'PT5M' }] },
    });
    expect(reg.status, reg.text).toBe(201);
    expect((await b.request('POST', '/ngsi-ld/v1/entities', { body: { id: ENTITY, type: 'Valve', temperature: { type: 'Property', value: 20 } } })).status).toBe(201);
    const dev = await connectClient(url, { protocolVersion: 5, clientId: 'v1' });
    open.push(dev);
    await dev.subscribeAsync('ngsi/default/v1/cmd', { qos: 1 });
    const arriving = nextPacket(dev, 'ngsi/default/v1/cmd');
    expect((await b.request('POST', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}/attrs`, { body: { open: { type: 'Property', value: true } } })).status).toBe(204);
    const cmd = await arriving;
    const { id } = JSON.parse(cmd.payload.toString()) as { id: string };
    const props = cmd.properties ?? {};
    expect(props.responseTopic).toBe('ngsi/default/v1/cmdexe');
    expect(props.correlationData?.toString()).toBe(id);
    expect(props.messageExpiryInterval).toBeGreaterThan(290);
    expect(props.messageExpiryInterval).toBeLessThanOrEqual(300);
    // The answer names its command by the Correlation Data alone.
    await dev.publishAsync(props.responseTopic!, JSON.stringify({ status: 'OK', info: 'opened' }), { qos: 1, properties: { correlationData: props.correlationData! } });
    await waitUntil(async () => (await b.request('GET', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}`)).json.open_status?.value === 'OK', 5_000, 'open_status OK');
  });
});
