// The embedded broker: accepts MQTT clients over TCP and WebSocket, delivers in-process publishes at
// every QoS, survives malformed packets, and stops with no socket left open.

import { afterEach, describe, expect, it } from 'vitest';
import { connect as connectTcp, createServer, type AddressInfo } from 'node:net';
import { silentLogger } from '../../src/lib/index.js';
import { MqttListenError, startMqttBroker, type MqttBroker } from '../../src/mqtt/index.js';
import { connectClient, endClient, subscribe } from '../helpers/mqtt.js';
import { within } from '../helpers/process.js';

let broker: MqttBroker | undefined;
afterEach(async () => {
  await broker?.close();
  broker = undefined;
});

async function start(wsPort?: number): Promise<MqttBroker> {
  broker = await startMqttBroker({ port: 0, host: '127.0.0.1', wsPort, log: silentLogger });
  return broker;
}

describe('embedded MQTT broker', () => {
  it('accepts an mqtt client over TCP and answers CONNACK [MQTT-3.2.0-1]', async () => {
    const b = await start();
    expect(b.port).toBeGreaterThan(0);
    expect(b.wsPort).toBeUndefined();
    const client = await connectClient(`mqtt://127.0.0.1:${b.port}`);
    expect(client.connected).toBe(true);
    await endClient(client);
  });

  it('delivers an in-process publish to a subscribed client, at QoS 0, 1 and 2', async () => {
    const b = await start();
    const client = await connectClient(`mqtt://127.0.0.1:${b.port}`);
    for (const qos of [0, 1, 2] as const) {
      const next = await subscribe(client, `dash/q${qos}`, 2);
      await b.publish(`dash/q${qos}`, JSON.stringify({ qos }), qos);
      const m = await next();
      expect(JSON.parse(m.payload.toString())).toEqual({ qos });
      // delivered at the lower of the publish QoS and the granted QoS (2 here)
      expect(m.qos).toBe(qos);
    }
    await endClient(client);
  });

  it('relays client publishes between clients at QoS 0, 1 and 2', async () => {
    const b = await start();
    const sub = await connectClient(`mqtt://127.0.0.1:${b.port}`);
    const pub = await connectClient(`mqtt://127.0.0.1:${b.port}`);
    for (const qos of [0, 1, 2] as const) {
      const next = await subscribe(sub, `relay/${qos}`, qos);
      await pub.publishAsync(`relay/${qos}`, Buffer.from([qos]), { qos });
      const m = await next();
      expect(m.payload).toEqual(Buffer.from([qos]));
      expect(m.qos).toBe(qos);
    }
    await Promise.all([endClient(sub), endClient(pub)]);
  });

  it('rejects an in-process publish to a wildcard or empty topic', async () => {
    const b = await start();
    await expect(b.publish('a/+/b', 'x', 0)).rejects.toThrow(/not a topic name/);
    await expect(b.publish('a/#', 'x', 0)).rejects.toThrow(/not a topic name/);
    await expect(b.publish('', 'x', 0)).rejects.toThrow(/not a topic name/);
  });

  it('drops a connection sending garbage and keeps serving others', async () => {
    const b = await start();
    const socket = connectTcp(b.port, '127.0.0.1');
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.write(Buffer.from([0x10, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x00]));
    await within(closed, 5_000, 'the broker to drop the garbage connection');
    const client = await connectClient(`mqtt://127.0.0.1:${b.port}`);
    await endClient(client);
  });

  it('accepts an mqtt client over WebSocket when a ws port is set', async () => {
    const b = await start(0);
    expect(b.wsPort).toBeGreaterThan(0);
    const client = await connectClient(`ws://127.0.0.1:${b.wsPort}`);
    const next = await subscribe(client, 'ws/t', 1);
    await b.publish('ws/t', 'hello', 1);
    expect((await next()).payload.toString()).toBe('hello');
    await endClient(client);
  });

  it('close() disconnects clients, closes the listeners and refuses later publishes', async () => {
    const b = await start(0);
    const client = await connectClient(`mqtt://127.0.0.1:${b.port}`);
    const wsClient = await connectClient(`ws://127.0.0.1:${b.wsPort}`);
    const idle = connectTcp(b.port, '127.0.0.1'); // connected, never sends CONNECT
    idle.on('error', () => undefined);
    await within(new Promise((r) => idle.once('connect', r)), 5_000, 'idle connect');
    const gone = Promise.all([client, wsClient].map((c) => new Promise<void>((r) => c.once('close', () => r()))));
    const idleGone = new Promise((r) => idle.once('close', r));
    await within(b.close(), 5_000, 'broker close');
    await within(Promise.all([gone, idleGone]), 5_000, 'every connection closed');
    client.end(true);
    wsClient.end(true);
    await expect(b.publish('t', 'x', 0)).rejects.toThrow(/stopped/);
    const refused = connectTcp(b.port, '127.0.0.1');
    await expect(new Promise((_, reject) => refused.once('error', reject))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await b.close(); // idempotent
  });

  it('reports a busy port as MqttListenError naming mqtt.port', async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as AddressInfo).port; // NOTE: a TCP server's address is an object
    try {
      const err = await startMqttBroker({ port, host: '127.0.0.1', log: silentLogger }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MqttListenError);
      expect(err).toMatchObject({ option: 'mqtt.port', port, code: 'EADDRINUSE' });
    } finally {
      busy.close();
    }
  });
});
