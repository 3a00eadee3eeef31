// End-to-end: the real process is killed with SIGKILL while a clean: false subscriber is offline with
// QoS 1 messages queued for it; after a restart on the same data dir it gets every one of them, and the
// will of a client connected at the kill is published. With MQTT 5 clients too: the sessions survive
// the kill, and a Session Expiry Interval still counts (for a client connected at the kill: from the
// restart).

import { afterAll, describe, expect, it, vi } from 'vitest';
import Database from 'better-sqlite3';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { tempDir } from '../helpers/broker.js';
import { connectClient, endClient, subscribe } from '../helpers/mqtt.js';
import { startBrokerProcess, within } from '../helpers/process.js';

const dir = tempDir('edgeld-e2e-mqtt-durable-');
afterAll(() => dir.remove());

/** Packets queued for a client, read from the running broker's database (WAL: committed rows only). */
function queuedFor(file: string, clientId: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM mqtt_outgoing WHERE client_id = ?').get(clientId)?.n ?? 0;
  } finally {
    db.close();
  }
}

/** The end of a client's stored MQTT 5 session: undefined without a row, null while counted as connected. */
function sessionEnd(file: string, clientId: string): number | null | undefined {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare<[string], { expires_at: number | null }>('SELECT expires_at FROM mqtt_session_expiry WHERE client_id = ?').get(clientId)?.expires_at;
  } finally {
    db.close();
  }
}

/** Connects with the message listener in place before CONNACK; resolves with what arrives, as it arrives. */
async function reconnect(url: string, clientId: string, opts: IClientOptions = {}): Promise<{ client: MqttClient; sessionPresent: boolean; got: string[]; until(n: number): Promise<void> }> {
  const client = connect(url, { clientId, clean: false, reconnectPeriod: 0, connectTimeout: 5_000, ...opts });
  const got: string[] = [];
  let wake: (() => void) | undefined;
  client.on('message', (_topic, payload) => {
    got.push(payload.toString());
    wake?.();
  });
  const sessionPresent = await within(new Promise<boolean>((resolve, reject) => {
    client.once('connect', (connack) => resolve(connack.sessionPresent));
    client.once('error', reject);
  }), 5_000, `reconnect ${clientId}`);
  const until = (n: number): Promise<void> => within((async () => {
    while (got.length < n) await new Promise<void>((resolve) => (wake = resolve));
  })(), 10_000, `${n} messages for ${clientId}`);
  return { client, sessionPresent, got, until };
}

describe('embedded MQTT broker across a kill -9', () => {
  it('delivers every queued QoS 1 message to a clean: false subscriber, and publishes the will left behind', async () => {
    const env = { STORAGE_DIR: `${dir.path}/data` };
    const first = await startBrokerProcess(env);
    const url1 = `mqtt://127.0.0.1:${first.mqttPort}`;
    const dash = await connectClient(url1, { clientId: 'e2e-dash', clean: false });
    await dash.subscribeAsync('meas/#', { qos: 1 });
    await endClient(dash);

    const sensor = await connectClient(url1, {
      clientId: 'e2e-sensor', keepalive: 0, will: { topic: 'status/e2e-sensor', payload: Buffer.from('offline'), qos: 1, retain: true },
    });
    const pub = await connectClient(url1);
    const sent = Array.from({ length: 40 }, (_, i) => `m${i}`);
    for (const body of sent) await pub.publishAsync('meas/hall', body, { qos: 1 });
    // NOTE: Aedes writes PUBACK before it queues the message (see docs/mqtt-and-devices.md), so the kill waits until
    // every message is committed to the queue.
    await vi.waitFor(() => expect(queuedFor(`${env.STORAGE_DIR}/edgeld.db`, 'e2e-dash')).toBe(sent.length), { timeout: 5_000 });

    first.child.kill('SIGKILL');
    expect(await within(first.exited, 10_000, 'SIGKILL exit')).toBe('SIGKILL');
    pub.end(true);
    sensor.end(true);

    const second = await startBrokerProcess(env);
    const url2 = `mqtt://127.0.0.1:${second.mqttPort}`;
    const back = await reconnect(url2, 'e2e-dash');
    expect(back.sessionPresent).toBe(true);
    await back.until(sent.length);
    expect(back.got).toEqual(sent);

    // The sensor's connection ended with the kill and no DISCONNECT: its retained will is out.
    const watcher = await connectClient(url2);
    const status = await subscribe(watcher, 'status/e2e-sensor', 1);
    expect((await status()).payload.toString()).toBe('offline');

    await Promise.all([endClient(back.client), endClient(watcher)]);
    second.child.kill('SIGTERM');
    expect(await within(second.exited, 10_000, 'SIGTERM exit')).toBe(0);
  });

  it('keeps MQTT 5 sessions and their queued QoS 1 messages across the kill, and their expiry still counts', async () => {
    const env = { STORAGE_DIR: `${dir.path}/data5` };
    const file = `${env.STORAGE_DIR}/edgeld.db`;
    const v5 = (interval: number): IClientOptions => ({ protocolVersion: 5, properties: { sessionExpiryInterval: interval } });
    const first = await startBrokerProcess(env);
    const url1 = `mqtt://127.0.0.1:${first.mqttPort}`;
    const dash = await connectClient(url1, { clientId: 'e2e-dash5', clean: false, ...v5(3_600) });
    await dash.subscribeAsync('meas/#', { qos: 1 });
    await endClient(dash);
    // Connected at the kill, with a short session: it must end 2 s after the restart.
    const short = await connectClient(url1, { clientId: 'e2e-short5', clean: false, keepalive: 0, ...v5(2) });
    await short.subscribeAsync('other/#', { qos: 1 });
    const pub = await connectClient(url1, { protocolVersion: 5 });
    const sent = Array.from({ length: 30 }, (_, i) => `v5-${i}`);
    for (const body of sent) await pub.publishAsync('meas/hall', body, { qos: 1 });
    await vi.waitFor(() => expect(queuedFor(file, 'e2e-dash5')).toBe(sent.length), { timeout: 5_000 });
    expect(sessionEnd(file, 'e2e-short5')).toBeNull();
    expect(sessionEnd(file, 'e2e-dash5')).toBeGreaterThan(Date.now());

    first.child.kill('SIGKILL');
    expect(await within(first.exited, 10_000, 'SIGKILL exit')).toBe('SIGKILL');
    pub.end(true);
    short.end(true);

    const startedAt = Date.now();
    const second = await startBrokerProcess(env);
    const url2 = `mqtt://127.0.0.1:${second.mqttPort}`;
    const back = await reconnect(url2, 'e2e-dash5', v5(3_600));
    expect(back.sessionPresent).toBe(true);
    await back.until(sent.length);
    expect(back.got).toEqual(sent);

    // The short session counts from the restart, and is gone once its 2 s have passed.
    expect(sessionEnd(file, 'e2e-short5')).toBeGreaterThanOrEqual(startedAt + 2_000);
    await vi.waitFor(() => expect(sessionEnd(file, 'e2e-short5')).toBeUndefined(), { timeout: 10_000, interval: 100 });
    const late = await reconnect(url2, 'e2e-short5', v5(2));
    expect(late.sessionPresent).toBe(false);

    await Promise.all([endClient(back.client), endClient(late.client)]);
    second.child.kill('SIGTERM');
    expect(await within(second.exited, 10_000, 'SIGTERM exit')).toBe(0);
  });
});
