// MQTT 5 Session Expiry on the embedded broker with its SQLite session store: a client's session
// (subscriptions, queued QoS 1 messages) is there when it comes back within its interval, and gone
// after it, also across a restart; the clients connected when the broker stopped count from its start.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import type { MqttClient } from 'mqtt';
import { startTestBroker, tempDir, T0, type TestBroker } from '../helpers/broker.js';
import { connectClient, endClient } from '../helpers/mqtt.js';
import { connectInbox, type Inbox } from '../helpers/mqtt-inbox.js';

const LOOPBACK = { mqtt: { port: 0, host: '127.0.0.1' }, server: { port: 0, host: '127.0.0.1' } };

let dir: ReturnType<typeof tempDir>;
let running: TestBroker | undefined;
const open: Array<MqttClient | Inbox> = [];

beforeEach(() => {
  dir = tempDir('edgeld-mqtt-expiry-');
});
afterEach(async () => {
  for (const c of open.splice(0)) ('client' in c ? c.client : c).end(true);
  await running?.close();
  running = undefined;
  dir.remove();
});

/** A broker on the test's database, its clock at `now` when its MQTT listener starts. */
async function start(now = T0): Promise<{ b: TestBroker; url: string }> {
  const b = await startTestBroker({ dbPath: join(dir.path, 'edgeld.db'), config: LOOPBACK });
  running = b;
  b.clock.set(now);
  await b.broker.listen();
  return { b, url: `mqtt://127.0.0.1:${b.broker.mqttPort}` };
}

async function stop(b: TestBroker): Promise<void> {
  await b.close();
  running = undefined;
}

/** A v5 client with a stored session of `interval` seconds. */
async function v5(url: string, clientId: string, interval: number): Promise<Inbox> {
  const inbox = await connectInbox(url, { clientId, clean: false, protocolVersion: 5, properties: { sessionExpiryInterval: interval } });
  open.push(inbox);
  return inbox;
}

async function publish(url: string, topic: string, payload: string): Promise<void> {
  const pub = await connectClient(url, { protocolVersion: 5 });
  await pub.publishAsync(topic, payload, { qos: 1 });
  await endClient(pub);
}

describe('embedded MQTT broker: MQTT 5 session expiry in the session store', () => {
  it('gives a session back within its interval, across a restart, with its queued QoS 1 messages', async () => {
    let { b, url } = await start();
    const first = await v5(url, 'exp-1', 60);
    expect(first.sessionPresent).toBe(false);
    await first.client.subscribeAsync('plant/#', { qos: 1 });
    await first.end();
    await publish(url, 'plant/p1', 'while away');
    expect(b.broker.store.mqttSessions.nextSessionExpiry()).toBe(T0 + 60_000);

    await stop(b);
    ({ b, url } = await start(T0 + 59_000));
    const back = await v5(url, 'exp-1', 60);
    expect(back.sessionPresent).toBe(true);
    await back.waitFor('plant/p1', 'while away');
    // Connected: no end is pending for it.
    expect(b.broker.store.mqttSessions.nextSessionExpiry()).toBeUndefined();
    await back.end();
  });

  it('loses a session past its interval across a restart: nothing queued is delivered, its subscriptions are gone', async () => {
    let { b, url } = await start();
    const first = await v5(url, 'exp-2', 30);
    await first.client.subscribeAsync('plant/#', { qos: 1 });
    await first.end();
    await publish(url, 'plant/p1', 'stale');
    expect(b.broker.store.mqttSessions.lastQueued('exp-2')).toBeGreaterThan(0);

    await stop(b);
    ({ b, url } = await start(T0 + 30_001));
    const store = b.broker.store.mqttSessions;
    expect(store.lastQueued('exp-2')).toBe(0);
    expect(store.subscriptionsPage(undefined, 10).filter((s) => s.clientId === 'exp-2')).toEqual([]);
    const back = await v5(url, 'exp-2', 30);
    expect(back.sessionPresent).toBe(false);
    // Its old subscription no longer matches: the marker on a topic it subscribes to now comes alone.
    await back.client.subscribeAsync('mark', { qos: 1 });
    await publish(url, 'plant/p2', 'not for it');
    await publish(url, 'mark', 'end');
    expect(await back.before('mark', 'end')).toEqual([]);
  });

  it('counts a stop as the disconnection of the clients connected then, and a kill from the next start', async () => {
    let { b, url } = await start();
    const c = await v5(url, 'exp-3', 10);
    await c.client.subscribeAsync('plant/#', { qos: 1 });
    await stop(b);
    ({ b, url } = await start(T0 + 9_000));
    const back = await v5(url, 'exp-3', 10);
    expect(back.sessionPresent).toBe(true);
    await back.client.subscribeAsync('plant/#', { qos: 1 });
    await stop(b);

    // A kill leaves the row of a connected client (no end yet): its 10 s count from the next start.
    const killed = await startTestBroker({ dbPath: join(dir.path, 'edgeld.db'), config: LOOPBACK });
    running = killed;
    killed.broker.store.mqttSessions.putSessionExpiry('exp-3', 10, undefined);
    killed.clock.set(T0 + 100_000);
    await killed.broker.listen();
    expect(killed.broker.store.mqttSessions.nextSessionExpiry()).toBe(T0 + 110_000);
    const again = await v5(`mqtt://127.0.0.1:${killed.broker.mqttPort}`, 'exp-3', 10);
    expect(again.sessionPresent).toBe(true);
  });

  it('ends a session in the running broker once its interval has passed', async () => {
    const { b, url } = await start();
    const first = await v5(url, 'exp-4', 1);
    await first.client.subscribeAsync('plant/#', { qos: 1 });
    await first.end();
    await publish(url, 'plant/p1', 'too late');
    const store = b.broker.store.mqttSessions;
    await vi.waitFor(() => expect(store.subscriptionsPage(undefined, 10).filter((s) => s.clientId === 'exp-4')).toEqual([]), { timeout: 5_000, interval: 100 });
    await vi.waitFor(() => expect(store.lastQueued('exp-4')).toBe(0), { timeout: 5_000, interval: 100 });
    const back = await v5(url, 'exp-4', 1);
    expect(back.sessionPresent).toBe(false);
  });

  it('keeps no expiry for MQTT 3.1.1 sessions nor for MQTT 5 ones of interval 0xFFFFFFFF', async () => {
    const { b, url } = await start();
    const v4 = await connectInbox(url, { clientId: 'keep-4', clean: false });
    open.push(v4);
    await v4.client.subscribeAsync('plant/#', { qos: 1 });
    await v4.end();
    const never = await v5(url, 'keep-5', 0xFFFF_FFFF);
    await never.client.subscribeAsync('plant/#', { qos: 1 });
    await never.end();
    expect(b.broker.store.mqttSessions.nextSessionExpiry()).toBeUndefined();
    expect(b.broker.store.mqttSessions.subscriptionsPage(undefined, 10).map((s) => s.clientId).sort()).toEqual(['keep-4', 'keep-5']);
  });
});
