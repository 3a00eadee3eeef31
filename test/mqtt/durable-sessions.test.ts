// Durable MQTT state of the embedded broker: retained messages and persistent (clean: false) QoS 1
// sessions survive a restart on the same database; clean sessions leave nothing; wills are published.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { startTestBroker, tempDir, type TestBroker } from '../helpers/broker.js';
import { connectClient, endClient, subscribe, type Received } from '../helpers/mqtt.js';
import { within } from '../helpers/process.js';

const LOOPBACK = { mqtt: { port: 0, host: '127.0.0.1' }, server: { port: 0, host: '127.0.0.1' } };

let dir: ReturnType<typeof tempDir>;
let running: TestBroker | undefined;
const clients: MqttClient[] = [];

beforeEach(() => {
  dir = tempDir('edgeld-mqtt-sessions-');
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.end(true);
  await running?.close();
  running = undefined;
  dir.remove();
});

/** Starts a broker on the test's database file and its MQTT listener; resolves with its URL. */
async function start(): Promise<{ b: TestBroker; url: string }> {
  const b = await startTestBroker({ dbPath: join(dir.path, 'edgeld.db'), config: LOOPBACK });
  running = b;
  await b.broker.listen();
  return { b, url: `mqtt://127.0.0.1:${b.broker.mqttPort}` };
}

async function restart(b: TestBroker): Promise<{ b: TestBroker; url: string }> {
  await b.close();
  running = undefined;
  return start();
}

interface Inbox {
  client: MqttClient;
  sessionPresent: boolean;
  /** Resolves once `n` messages have arrived (bounded); every message so far, in arrival order. */
  take(n: number, timeoutMs?: number): Promise<Received[]>;
}

/** Connects with a message listener in place before CONNACK, so a queue flushed at once is not missed. */
async function connectInbox(url: string, opts: IClientOptions): Promise<Inbox> {
  const client = connect(url, { reconnectPeriod: 0, connectTimeout: 5_000, ...opts });
  clients.push(client);
  const got: Received[] = [];
  const wakers: Array<() => void> = [];
  client.on('message', (topic, payload, packet) => {
    got.push({ topic, payload, qos: packet.qos });
    for (const w of wakers.splice(0)) w();
  });
  const sessionPresent = await within(new Promise<boolean>((resolve, reject) => {
    client.once('connect', (connack) => resolve(connack.sessionPresent));
    client.once('error', reject);
  }), 5_000, `connect ${String(opts.clientId)}`);
  client.on('error', () => undefined);
  return {
    client,
    sessionPresent,
    take: (n, timeoutMs = 5_000) => within((async () => {
      while (got.length < n) await new Promise<void>((resolve) => wakers.push(resolve));
      return got;
    })(), timeoutMs, `${n} messages for ${String(opts.clientId)}`),
  };
}

describe('embedded MQTT broker: durable sessions and retained messages', () => {
  it('keeps a retained message across a restart and sends it to a new subscriber [MQTT-3.3.1-6]', async () => {
    let { b, url } = await start();
    const pub = await connectClient(url);
    await pub.publishAsync('plant/r1/state', 'running', { qos: 1, retain: true });
    await pub.publishAsync('plant/r2/state', 'stopped', { qos: 1, retain: true });
    // [MQTT-3.3.1-10] an empty retained payload removes the topic's retained message
    await pub.publishAsync('plant/r2/state', '', { qos: 1, retain: true });
    await endClient(pub);

    ({ b, url } = await restart(b));
    const sub = await connectClient(url);
    const next = await subscribe(sub, 'plant/r1/state', 1);
    const m = await next();
    expect(m.payload.toString()).toBe('running');
    expect(b.broker.store.mqttSessions.retainedPage('', 10).map((r) => r.topic)).toEqual(['plant/r1/state']);
    await endClient(sub);
  });

  it('delivers every QoS 1 message published while a clean: false subscriber was offline, in order, after a restart [MQTT-3.1.2-4]', async () => {
    let { b, url } = await start();
    const first = await connectInbox(url, { clientId: 'dash-1', clean: false });
    expect(first.sessionPresent).toBe(false);
    await first.client.subscribeAsync('meas/#', { qos: 1 });
    await endClient(first.client);

    const pub = await connectClient(url);
    const sent = Array.from({ length: 25 }, (_, i) => `{"seq":${i}}`);
    for (const [i, body] of sent.entries()) await pub.publishAsync(`meas/room${i % 3}`, body, { qos: 1 });
    await endClient(pub);
    expect(b.broker.store.mqttSessions.queuedPage('dash-1', 0, Number.MAX_SAFE_INTEGER, 100)).toHaveLength(sent.length);

    ({ b, url } = await restart(b));
    const back = await connectInbox(url, { clientId: 'dash-1', clean: false });
    expect(back.sessionPresent).toBe(true);
    const got = await back.take(sent.length);
    expect(got.map((m) => m.payload.toString())).toEqual(sent);
    expect(got.every((m) => m.qos === 1)).toBe(true);
    // Each PUBACK removes its packet from the queue [MQTT-4.3.2-1].
    await vi.waitFor(() => expect(b.broker.store.mqttSessions.lastQueued('dash-1')).toBe(0), { timeout: 5_000 });

    // The restored subscription still matches new publishes.
    const pub2 = await connectClient(url);
    await pub2.publishAsync('meas/room9', 'live', { qos: 1 });
    expect((await back.take(sent.length + 1)).at(-1)?.payload.toString()).toBe('live');
    await Promise.all([endClient(pub2), endClient(back.client)]);
  });

  it('keeps nothing of a clean session, and a clean connect drops the stored session [MQTT-3.1.2-6]', async () => {
    let { b, url } = await start();
    const sessions = (): ReturnType<typeof sessionState> => sessionState(b);
    const clean = await connectInbox(url, { clientId: 'tmp-1', clean: true, will: { topic: 'wills/tmp-1', payload: Buffer.from('gone'), qos: 1, retain: false } });
    await clean.client.subscribeAsync('meas/#', { qos: 1 });
    await clean.client.publishAsync('meas/a', 'q2', { qos: 2 });
    await clean.take(1);
    await endClient(clean.client);
    await vi.waitFor(() => expect(sessions()).toEqual({ subscriptions: 0, queued: 0, wills: 0 }), { timeout: 5_000 });

    const persistent = await connectInbox(url, { clientId: 'dash-2', clean: false });
    await persistent.client.subscribeAsync('meas/#', { qos: 1 });
    await endClient(persistent.client);
    const pub = await connectClient(url);
    await pub.publishAsync('meas/b', 'queued', { qos: 1 });
    await endClient(pub);
    expect(sessions()).toEqual({ subscriptions: 1, queued: 1, wills: 0 });

    ({ b, url } = await restart(b));
    const fresh = await connectInbox(url, { clientId: 'dash-2', clean: true });
    expect(fresh.sessionPresent).toBe(false);
    await vi.waitFor(() => expect(sessionState(b)).toEqual({ subscriptions: 0, queued: 0, wills: 0 }), { timeout: 5_000 });
    await endClient(fresh.client);
  });

  it('publishes the will of a client whose connection ends without DISCONNECT [MQTT-3.1.2-8]', async () => {
    const { b, url } = await start();
    const watcher = await connectClient(url);
    const next = await subscribe(watcher, 'status/sensor-7', 1);
    const sensor = await connectClient(url, { clientId: 'sensor-7', will: { topic: 'status/sensor-7', payload: Buffer.from('offline'), qos: 1, retain: false } });
    expect(b.broker.store.mqttSessions.will('sensor-7')).toBeDefined();
    sensor.stream.destroy();
    const m = await next();
    expect(m.payload.toString()).toBe('offline');
    await vi.waitFor(() => expect(b.broker.store.mqttSessions.will('sensor-7')).toBeUndefined(), { timeout: 5_000 });
    sensor.end(true);
    await endClient(watcher);
  });

  it('does not publish the will of a client that disconnects cleanly, and forgets it [MQTT-3.14.4-3]', async () => {
    const { b, url } = await start();
    const sensor = await connectClient(url, { clientId: 'sensor-8', will: { topic: 'status/sensor-8', payload: Buffer.from('offline'), qos: 1, retain: true } });
    await endClient(sensor);
    await vi.waitFor(() => expect(b.broker.store.mqttSessions.will('sensor-8')).toBeUndefined(), { timeout: 5_000 });
    expect(b.broker.store.mqttSessions.retainedPage('', 10)).toEqual([]);
  });
});

function sessionState(b: TestBroker): { subscriptions: number; queued: number; wills: number } {
  const s = b.broker.store.mqttSessions;
  const clientIds = new Set(s.subscriptionsPage(undefined, 1000).map((x) => x.clientId));
  for (const id of ['tmp-1', 'dash-2']) clientIds.add(id);
  return {
    subscriptions: s.subscriptionsPage(undefined, 1000).length,
    queued: [...clientIds].reduce((n, id) => n + s.queuedPage(id, 0, Number.MAX_SAFE_INTEGER, 1000).length, 0),
    wills: s.willsPage('', 1000).length,
  };
}
