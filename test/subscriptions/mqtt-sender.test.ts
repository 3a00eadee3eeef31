// The MQTT notification sender: endpoint parsing, in-process publish to the embedded broker, pooled
// clients to an outside broker (a real mosquitto on 127.0.0.1), timeouts, reconnection and close.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { silentLogger } from '../../src/lib/index.js';
import { isEmbeddedBrokerUrl, startMqttBroker, type MqttBroker } from '../../src/mqtt/index.js';
import {
  createMqttSender, parseMqttEndpoint, MqttEndpointError, MqttSendError, type MqttSender, type MqttSenderDeps,
} from '../../src/subscriptions/mqtt-sender.js';
import { connectClient, endClient, freePort, startMosquitto, subscribe, type Mosquitto } from '../helpers/mqtt.js';
import { within } from '../helpers/process.js';

const message = {
  metadata: { 'Content-Type': 'application/json', Link: '<https://example.org/ctx.jsonld>; rel="x"' },
  body: { id: 'urn:ngsi-ld:Notification:1', type: 'Notification', subscriptionId: 'urn:ngsi-ld:Subscription:1', data: [{ id: 'urn:ngsi-ld:T:1', type: 'T', n: { type: 'Property', value: 1.5 } }] },
};

/** A TCP server that accepts connections and never answers: a broker that hangs before CONNACK. */
async function startSilentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port, // NOTE: a listening TCP server's address is an object
    close: () => new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    }),
  };
}

const senders: MqttSender[] = [];
function newSender(patch: Partial<MqttSenderDeps> = {}): MqttSender {
  const sender = createMqttSender({
    isLocal: () => false,
    publishLocal: () => Promise.reject(new Error('not local')),
    connectTimeoutMs: 2_000,
    reconnectPeriodMs: 100,
    log: silentLogger,
    ...patch,
  });
  senders.push(sender);
  return sender;
}
afterEach(async () => {
  await Promise.all(senders.splice(0).map((s) => s.close()));
});

describe('parseMqttEndpoint', () => {
  it('reads scheme, credentials, host, port and the percent-decoded topic', () => {
    expect(parseMqttEndpoint('mqtt://u%40x:p%3Aw@broker.lan:1884/ngsi/a%20b/c')).toMatchObject({
      scheme: 'mqtt', username: 'u@x', password: 'p:w', host: 'broker.lan', port: 1884, topic: 'ngsi/a b/c',
      display: 'mqtt://u%40x@broker.lan:1884/ngsi/a%20b/c',
    });
    expect(parseMqttEndpoint('mqtts://h/t')).toMatchObject({ scheme: 'mqtts', port: 8883, username: undefined, password: undefined });
    expect(parseMqttEndpoint('mqtt://[::1]/t')).toMatchObject({ host: '::1', port: 1883, topic: 't' });
  });

  it.each([
    ['not a uri', /not a URI/],
    ['http://h/t', /not an mqtt/],
    ['mqtt://h', /no topic/],
    ['mqtt://h/', /no topic/],
    ['mqtt://h/a/+/b', /wildcards/],
    ['mqtt://h/a/#', /wildcards/],
    ['mqtt://h/a/%23', /wildcards/],
    ['mqtt://h/a?b', /query/],
    ['mqtt://h/a%ZZ', /not a URI|percent-encoding/],
    ['mqtt://h/a%E0%A4', /percent-encoding/],
    ['mqtt://h/a%00', /U\+0000/],
  ])('rejects %s', (uri, why) => {
    expect(() => parseMqttEndpoint(uri)).toThrow(why);
    expect(() => parseMqttEndpoint(uri)).toThrow(MqttEndpointError);
  });
});

describe('isEmbeddedBrokerUrl', () => {
  const embedded = { port: 1883, host: '10.0.0.5' };
  it.each([
    ['mqtt://127.0.0.1/t', true], ['mqtt://localhost:1883/t', true], ['mqtt://[::1]/t', true], ['mqtt://0.0.0.0/t', true],
    ['mqtt://10.0.0.5/t', true], ['mqtt://127.0.0.1:1884/t', false], ['mqtts://127.0.0.1:1883/t', false], ['mqtt://10.0.0.6/t', false],
  ])('%s → %s', (uri, local) => {
    expect(isEmbeddedBrokerUrl(new URL(uri), embedded)).toBe(local);
  });
});

describe('send to the embedded broker', () => {
  let broker: MqttBroker;
  beforeAll(async () => {
    broker = await startMqttBroker({ port: 0, host: '127.0.0.1', log: silentLogger });
  });
  afterAll(() => broker.close());

  it('publishes in-process at QoS 0, 1 and 2, and a subscriber receives {metadata, body} exactly', async () => {
    const local: string[] = [];
    const sender = newSender({
      isLocal: (url) => isEmbeddedBrokerUrl(url, { port: broker.port, host: '127.0.0.1' }),
      publishLocal: (topic, payload, qos) => {
        local.push(`${topic}@${qos}`);
        return broker.publish(topic, payload, qos);
      },
    });
    const client = await connectClient(`mqtt://127.0.0.1:${broker.port}`);
    const next = await subscribe(client, 'dash/notify', 2);
    for (const qos of [0, 1, 2] as const) {
      // Credentials and version mean nothing in-process.
      await sender.send(`mqtt://x:y@localhost:${broker.port}/dash/notify`, message, { qos, version: 'mqtt5.0', timeoutMs: 2_000 });
      const m = await next();
      expect(JSON.parse(m.payload.toString())).toEqual(message);
      expect(m.qos).toBe(qos);
    }
    expect(local).toEqual(['dash/notify@0', 'dash/notify@1', 'dash/notify@2']);
    await endClient(client);
  });

  it('rejects when the in-process publish fails or outlasts the timeout', async () => {
    const failing = newSender({ isLocal: () => true, publishLocal: () => Promise.reject(new Error('broker stopped')) });
    await expect(failing.send('mqtt://127.0.0.1/t', message, { qos: 0, version: 'mqtt3.1.1', timeoutMs: 1_000 })).rejects.toThrow(/in-process publish to t failed: broker stopped/);
    const hanging = newSender({ isLocal: () => true, publishLocal: () => new Promise<void>(() => undefined) });
    await expect(hanging.send('mqtt://127.0.0.1/t', message, { qos: 1, version: 'mqtt3.1.1', timeoutMs: 50 })).rejects.toThrow(/timed out after 50 ms/);
  });
});

describe('send to an outside broker (mosquitto)', () => {
  let mosquitto: Mosquitto;
  beforeAll(async () => {
    mosquitto = await startMosquitto();
  });
  afterAll(() => mosquitto.remove());

  it.each(['mqtt3.1.1', 'mqtt5.0'] as const)('publishes at QoS 0, 1 and 2 with %s through one pooled connection', async (version) => {
    const sender = newSender();
    const client = await connectClient(mosquitto.url);
    const topic = `edge/${version}/notify`;
    const next = await subscribe(client, topic, 2);
    for (const qos of [0, 1, 2] as const) {
      await sender.send(`${mosquitto.url}/${topic}`, message, { qos, version, timeoutMs: 5_000 });
      const m = await next();
      expect(JSON.parse(m.payload.toString())).toEqual(message);
      expect(m.qos).toBe(qos);
    }
    await endClient(client);
  });

  it('sends concurrently through one connection without piling up listeners', async () => {
    const sender = newSender();
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    const client = await connectClient(mosquitto.url);
    const next = await subscribe(client, 'edge/many', 1);
    await Promise.all(Array.from({ length: 50 }, (_, i) =>
      sender.send(`${mosquitto.url}/edge/many`, { metadata: {}, body: i }, { qos: 1, version: 'mqtt3.1.1', timeoutMs: 5_000 })));
    const got = new Set<number>();
    for (let i = 0; i < 50; i++) got.add((JSON.parse((await next()).payload.toString()) as { body: number }).body);
    expect(got.size).toBe(50);
    process.off('warning', onWarning);
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    await endClient(client);
  });

  it('rejects a malformed URI without throwing synchronously', async () => {
    const sender = newSender();
    let pending: Promise<void> | undefined;
    expect(() => {
      pending = sender.send('mqtt://127.0.0.1:1/a/#', message, { qos: 0, version: 'mqtt3.1.1', timeoutMs: 1_000 });
    }).not.toThrow();
    await expect(pending).rejects.toThrow(MqttEndpointError);
    await expect(sender.send('mqtt://h/t', message, { qos: 3 as 0, version: 'mqtt3.1.1', timeoutMs: 1_000 })).rejects.toThrow(/MQTT-QoS/);
    await expect(sender.send('mqtt://h/t', { metadata: {}, body: 10n }, { qos: 0, version: 'mqtt3.1.1', timeoutMs: 1_000 })).rejects.toThrow(TypeError);
  });
});

describe('send with credentials', () => {
  let mosquitto: Mosquitto;
  beforeAll(async () => {
    mosquitto = await startMosquitto({ users: { alice: 's3cr@t:x' } });
  });
  afterAll(() => mosquitto.remove());

  it('connects with user:pass from the URI, and reports a refusal for a wrong password', async () => {
    const sender = newSender();
    const client = await connectClient(mosquitto.url, { username: 'alice', password: 's3cr@t:x' });
    const next = await subscribe(client, 'secure/t', 1);
    for (const version of ['mqtt3.1.1', 'mqtt5.0'] as const) {
      await sender.send(`mqtt://alice:s3cr%40t%3Ax@127.0.0.1:${mosquitto.port}/secure/t`, message, { qos: 1, version, timeoutMs: 5_000 });
      expect(JSON.parse((await next()).payload.toString())).toEqual(message);
    }
    const started = performance.now();
    const err = await sender.send(`mqtt://alice:wrong@127.0.0.1:${mosquitto.port}/secure/t`, message, { qos: 1, version: 'mqtt3.1.1', timeoutMs: 5_000 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MqttSendError);
    expect(String(err)).toMatch(/cannot connect to MQTT broker mqtt:\/\/alice@127\.0\.0\.1:\d+: .*(Not authorized|Bad username)/i);
    expect(String(err)).not.toContain('wrong');
    expect(performance.now() - started).toBeLessThan(5_000);
    await endClient(client);
  });
});

describe('an outside broker that is down', () => {
  it('rejects within the timeout, then delivers once the broker is up (reconnect)', async () => {
    const port = await freePort(); // nothing listens: connections are refused
    const sender = newSender();
    const uri = `mqtt://127.0.0.1:${port}/late/t`;
    const started = performance.now();
    const errors = await Promise.all([0, 1, 2].map((qos) =>
      sender.send(uri, message, { qos: qos as 0 | 1 | 2, version: 'mqtt3.1.1', timeoutMs: 1_500 }).then(() => undefined, (e: unknown) => e)));
    expect(performance.now() - started).toBeLessThan(3_000);
    for (const err of errors) {
      expect(err).toBeInstanceOf(MqttSendError);
      expect(String(err)).toMatch(/ECONNREFUSED|timed out after 1500 ms/);
    }
    const mosquitto = await startMosquitto({ port });
    try {
      const client = await connectClient(mosquitto.url);
      const next = await subscribe(client, 'late/t', 1);
      await sender.send(uri, message, { qos: 1, version: 'mqtt3.1.1', timeoutMs: 5_000 });
      expect(JSON.parse((await next()).payload.toString())).toEqual(message);
      await endClient(client);
    } finally {
      await mosquitto.remove();
    }
  });

  it('a send after the broker restarted connects again at once, not after the reconnect period', async () => {
    const mosquitto = await startMosquitto();
    const sender = newSender({ reconnectPeriodMs: 60_000 });
    const uri = `mqtt://127.0.0.1:${mosquitto.port}/again/t`;
    try {
      await sender.send(uri, message, { qos: 0, version: 'mqtt3.1.1', timeoutMs: 2_000 });
      await mosquitto.stop();
      await mosquitto.start();
      const client = await connectClient(mosquitto.url);
      const next = await subscribe(client, 'again/t', 1);
      await sender.send(uri, message, { qos: 1, version: 'mqtt3.1.1', timeoutMs: 2_000 });
      expect(JSON.parse((await next()).payload.toString())).toEqual(message);
      await endClient(client);
    } finally {
      await mosquitto.remove();
    }
  });

  it('times out a send when the broker accepts TCP but never answers CONNECT', async () => {
    const silent = await startSilentServer();
    const sender = newSender({ connectTimeoutMs: 10_000 });
    await expect(sender.send(`mqtt://127.0.0.1:${silent.port}/t`, message, { qos: 0, version: 'mqtt3.1.1', timeoutMs: 200 }))
      .rejects.toThrow(/timed out after 200 ms: no connection/);
    await sender.close();
    await silent.close();
  });
});

describe('idle pooled clients', () => {
  it('closes a pooled connection unused for idleTimeoutMs and opens a new one on the next send', async () => {
    const mosquitto = await startMosquitto();
    try {
      const lines: string[] = [];
      const log = { ...silentLogger, debug: (msg: string) => void lines.push(msg), child: () => log };
      const sender = newSender({ idleTimeoutMs: 100, log });
      await sender.send(`${mosquitto.url}/idle/t`, message, { qos: 1, version: 'mqtt3.1.1', timeoutMs: 5_000 });
      await within((async () => {
        while (!lines.includes('mqtt connection closed')) await new Promise((r) => setImmediate(r));
      })(), 5_000, 'the idle connection to close');
      expect(lines).toContain('closing idle mqtt connection');
      await sender.send(`${mosquitto.url}/idle/t`, message, { qos: 1, version: 'mqtt3.1.1', timeoutMs: 5_000 });
      expect(lines.filter((l) => l === 'mqtt connection up')).toHaveLength(2);
    } finally {
      await mosquitto.remove();
    }
  });
});

describe('close', () => {
  it('ends every pooled client, fails sends in progress and leaves no socket or timer behind', async () => {
    const mosquitto = await startMosquitto();
    try {
      const count = (kind: string): number => process.getActiveResourcesInfo().filter((r) => r === kind).length;
      const before = { sockets: count('TCPSocketWrap'), timers: count('Timeout') };
      const sender = newSender();
      await sender.send(`${mosquitto.url}/c/t`, message, { qos: 1, version: 'mqtt3.1.1', timeoutMs: 5_000 });
      await sender.send(`${mosquitto.url}/c/t`, message, { qos: 1, version: 'mqtt5.0', timeoutMs: 5_000 });
      const silent = await startSilentServer();
      const pending = sender.send(`mqtt://127.0.0.1:${silent.port}/c/t`, message, { qos: 1, version: 'mqtt3.1.1', timeoutMs: 60_000 })
        .then(() => undefined, (e: unknown) => e);
      await sender.close();
      expect(String(await pending)).toMatch(/the MQTT sender is closing/);
      await silent.close();
      await expect(sender.send(`${mosquitto.url}/c/t`, message, { qos: 0, version: 'mqtt3.1.1', timeoutMs: 1_000 })).rejects.toThrow(/closed/);
      await new Promise<void>((r) => setImmediate(r));
      expect(count('TCPSocketWrap')).toBeLessThanOrEqual(before.sockets);
      expect(count('Timeout')).toBeLessThanOrEqual(before.timers);
    } finally {
      await mosquitto.remove();
    }
  });
});
