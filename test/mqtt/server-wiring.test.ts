// The broker built by server.ts: listen() starts the embedded MQTT broker after HTTP, the notifier's
// handles (mqttPort, publishLocal, mqttSender) reach it in-process, and close() stops it.

import { afterEach, describe, expect, it } from 'vitest';
import { connect as connectTcp } from 'node:net';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { connectClient, endClient, subscribe } from '../helpers/mqtt.js';
import { within } from '../helpers/process.js';

let b: TestBroker | undefined;
afterEach(async () => {
  await b?.close();
  b = undefined;
});

const message = { metadata: { 'Content-Type': 'application/json' }, body: { type: 'Notification', data: [] } };

describe('Broker MQTT handles', () => {
  it('has no MQTT port and refuses publishLocal before listen()', async () => {
    b = await startTestBroker({ config: { server: { port: 0, host: '127.0.0.1' } } });
    expect(b.broker.mqttPort).toBeUndefined();
    await expect(b.broker.publishLocal('t', 'x', 0)).rejects.toThrow(/not running/);
  });

  it('after listen(), publishLocal and a local mqtt:// URI reach a client of the embedded broker', async () => {
    b = await startTestBroker({ config: { server: { port: 0, host: '127.0.0.1' } } });
    await b.broker.listen();
    const port = b.broker.mqttPort!;
    expect(port).toBeGreaterThan(0);
    expect(b.broker.mqttWsPort).toBeUndefined();
    const client = await connectClient(`mqtt://127.0.0.1:${port}`);
    const next = await subscribe(client, 'gw/notify', 1);
    await b.broker.publishLocal('gw/notify', 'direct', 1);
    expect((await next()).payload.toString()).toBe('direct');
    await b.broker.mqttSender.send(`mqtt://localhost:${port}/gw/notify`, message, { qos: 1, version: 'mqtt3.1.1', timeoutMs: 2_000 });
    expect(JSON.parse((await next()).payload.toString())).toEqual(message);
    await endClient(client);
  });

  it('close() stops the embedded broker: clients are disconnected and the port refuses', async () => {
    b = await startTestBroker({ config: { server: { port: 0, host: '127.0.0.1' } } });
    await b.broker.listen();
    const port = b.broker.mqttPort!;
    const client = await connectClient(`mqtt://127.0.0.1:${port}`);
    const gone = new Promise<void>((r) => client.once('close', () => r()));
    await b.close();
    b = undefined;
    await within(gone, 5_000, 'client disconnected');
    client.end(true);
    const code = await new Promise<string>((resolve) => {
      const s = connectTcp(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve('connected');
      });
      s.once('error', (err: Error & { code?: string }) => resolve(err.code ?? ''));
    });
    expect(code).toBe('ECONNREFUSED');
  });
});
