// The embedded broker bounds a connection before it authenticates: a packet announcing more than
// the limit closes it before the body is read, CONNECT must come first and within the deadline, and
// connections are capped per address and in total; over TCP, WebSocket and TLS alike.

import { readFileSync } from 'node:fs';
import { connect as connectTcp, createConnection, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { MqttClient } from 'mqtt';
import WebSocket from 'ws';
import { ConfigError, defaultConfig, loadConfig } from '../../src/config/index.js';
import { createFixedClock, createLogger, silentLogger } from '../../src/lib/index.js';
import { DEFAULT_CONNECTION_LIMITS, startMqttBroker, type ConnectionLimits, type MqttBroker } from '../../src/mqtt/index.js';
import { startTestBroker } from '../helpers/broker.js';
import { parseExposition } from '../helpers/metrics.js';
import { connectClient, endClient, subscribe } from '../helpers/mqtt.js';
import { within } from '../helpers/process.js';

let broker: MqttBroker | undefined;
const opened: Array<{ destroy(): void }> = [];
afterEach(async () => {
  for (const s of opened.splice(0)) s.destroy();
  await broker?.close();
  broker = undefined;
});

async function start(limits: Partial<ConnectionLimits> = {}, extra: { wsPort?: number; tls?: boolean } = {}): Promise<MqttBroker> {
  const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));
  broker = await startMqttBroker({
    port: 0, host: '127.0.0.1', log: silentLogger, limits, wsPort: extra.wsPort,
    ...(extra.tls ? { tls: { port: 0, key: fixture('key.pem'), cert: fixture('cert.pem') } } : {}),
  });
  return broker;
}

const MB = 1_048_576;

/** A fixed header: the packet type's first byte and the remaining length as a variable byte integer [MQTT-2.2.3]. */
function fixedHeader(firstByte: number, remainingLength: number): Buffer {
  const bytes = [firstByte];
  let n = remainingLength;
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    bytes.push(b);
  } while (n > 0);
  return Buffer.from(bytes);
}
const PUBLISH = 0x30;
const CONNECT = 0x10;
/** A whole MQTT 3.1.1 CONNECT: clean session, keep-alive 60 s, client id `x`. */
const CONNECT_PACKET = Buffer.from([0x10, 0x0d, 0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x3c, 0x00, 0x01, 0x78]);
const CONNACK_ACCEPTED = Buffer.from([0x20, 0x02, 0x00, 0x00]);

function closed(s: { once(ev: 'close', fn: () => void): unknown }): Promise<void> {
  return new Promise((resolve) => s.once('close', () => resolve()));
}

/** A raw TCP connection, from `localAddress` when given; resolves once connected. */
async function rawSocket(port: number, localAddress?: string): Promise<Socket> {
  const socket = createConnection({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
  opened.push(socket);
  socket.on('error', () => undefined);
  await within(new Promise((r) => socket.once('connect', r)), 5_000, 'raw connect');
  return socket;
}

/** Writes `header`, then zeros in 1 MiB chunks up to `total` bytes or until the peer closes; the bytes written. */
async function pour(socket: Socket, header: Buffer, total: number): Promise<number> {
  const chunk = Buffer.alloc(MB);
  let isClosed = socket.destroyed;
  socket.once('close', () => {
    isClosed = true;
  });
  socket.write(header);
  let written = 0;
  while (!isClosed && written < total) {
    const fits = socket.write(chunk);
    written += chunk.length;
    if (!fits) {
      await new Promise<void>((resolve) => {
        const go = (): void => {
          socket.off('drain', go);
          socket.off('close', go);
          resolve();
        };
        socket.once('drain', go);
        socket.once('close', go);
      });
    }
  }
  return written;
}

/** The next bytes the socket receives (at least `n`), bounded. */
function received(socket: { once(ev: 'data', fn: (b: Buffer) => void): unknown }, what: string): Promise<Buffer> {
  return within(new Promise<Buffer>((resolve) => socket.once('data', resolve)), 5_000, what);
}

/** An mqtt client over TCP from `localAddress` (mqtt.js' own TCP connector has no local address). */
function clientFrom(port: number, localAddress: string): Promise<MqttClient> {
  const client = new MqttClient(() => createConnection({ port, host: '127.0.0.1', localAddress }), { reconnectPeriod: 0, connectTimeout: 5_000 });
  opened.push({ destroy: () => client.end(true) });
  return within(new Promise<MqttClient>((resolve, reject) => {
    client.once('connect', () => resolve(client));
    client.once('error', reject);
    client.once('close', () => reject(new Error('closed before CONNACK')));
  }), 5_000, `mqtt connect from ${localAddress}`);
}

/** Resolves once a WebSocket connection to `url` is closed without ever carrying MQTT. */
async function wsRefused(url: string): Promise<void> {
  const ws = new WebSocket(url, 'mqtt');
  opened.push({ destroy: () => ws.terminate() });
  ws.on('error', () => undefined);
  await within(closed(ws), 5_000, 'the websocket connection to be refused');
}

/** Waits until the broker counts at most `n` open connections (closed ones released). */
async function openAtMost(b: MqttBroker, n: number): Promise<void> {
  await within((async () => {
    while (b.connectionStats().open > n) await new Promise((r) => setImmediate(r));
  })(), 5_000, `at most ${n} open connections`);
}

async function roundTrip(url: string): Promise<void> {
  const client = await connectClient(url);
  const next = await subscribe(client, 'still/served', 1);
  await client.publishAsync('still/served', 'yes', { qos: 1 });
  expect((await next()).payload.toString()).toBe('yes');
  await endClient(client);
}

describe('packet size, checked from the fixed header', () => {
  it('closes a connection whose first packet, a PUBLISH without CONNECT, announces 200 MB, reading almost none of it [MQTT-3.1.0-1]', async () => {
    const b = await start();
    const socket = await rawSocket(b.port);
    const gone = closed(socket);
    const rssBefore = process.memoryUsage().rss;
    const written = await within(pour(socket, fixedHeader(PUBLISH, 200 * MB), 200 * MB), 20_000, 'pouring 200 MB');
    await within(gone, 5_000, 'the broker to close the connection');
    const grown = process.memoryUsage().rss - rssBefore;
    // NOTE: what was written before the close was seen sits in the loopback socket buffers (a few MB).
    expect(written).toBeLessThan(32 * MB);
    expect(grown).toBeLessThan(16 * MB);
    expect(b.connectionStats().refused.not_connect).toBe(1);
    await roundTrip(`mqtt://127.0.0.1:${b.port}`);
  });

  it('closes a connection whose CONNECT announces 200 MB before reading its body', async () => {
    const b = await start();
    const socket = await rawSocket(b.port);
    const gone = closed(socket);
    const rssBefore = process.memoryUsage().rss;
    const written = await within(pour(socket, fixedHeader(CONNECT, 200 * MB), 200 * MB), 20_000, 'pouring 200 MB');
    await within(gone, 5_000, 'the broker to close the connection');
    expect(written).toBeLessThan(32 * MB);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(16 * MB);
    expect(b.connectionStats().refused.packet_too_large).toBe(1);
    await roundTrip(`mqtt://127.0.0.1:${b.port}`);
  });

  it('disconnects a connected client that publishes a packet over the limit, and relays one under it', async () => {
    const b = await start({ maxPacketBytes: 4_096 });
    const url = `mqtt://127.0.0.1:${b.port}`;
    const watcher = await connectClient(url);
    const next = await subscribe(watcher, 'size/t', 1);
    const client = await connectClient(url);
    await client.publishAsync('size/t', Buffer.alloc(3_000), { qos: 1 });
    expect((await next()).payload.length).toBe(3_000);
    const gone = closed(client);
    client.publish('size/t', Buffer.alloc(8_192), { qos: 0 });
    await within(gone, 5_000, 'the broker to close the client sending 8 KiB');
    client.end(true);
    expect(b.connectionStats().refused.packet_too_large).toBe(1);
    await endClient(watcher);
  });

  it('closes a connection whose remaining length takes more than four bytes [MQTT-2.2.3]', async () => {
    const b = await start();
    const socket = await rawSocket(b.port);
    const gone = closed(socket);
    socket.write(Buffer.from([CONNECT, 0x80, 0x80, 0x80, 0x80, 0x01]));
    await within(gone, 5_000, 'the broker to close the connection');
    expect(b.connectionStats().refused.malformed_packet).toBe(1);
  });
});

describe('CONNECT deadline', () => {
  it('closes a connection that sends nothing once the deadline passes, and keeps a connected client', async () => {
    const b = await start({ connectTimeout: 300 });
    const client = await connectClient(`mqtt://127.0.0.1:${b.port}`);
    const socket = await rawSocket(b.port);
    const startedAt = Date.now();
    await within(closed(socket), 5_000, 'the broker to close the silent connection');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(250);
    expect(b.connectionStats().refused.connect_timeout).toBe(1);
    // The client connected before the silent socket: its deadline passed too, and it is still served.
    expect(client.connected).toBe(true);
    const next = await subscribe(client, 'deadline/t', 1);
    await client.publishAsync('deadline/t', 'ok', { qos: 1 });
    expect((await next()).payload.toString()).toBe('ok');
    await endClient(client);
  });

  it('closes a connection that sends only part of its CONNECT', async () => {
    const b = await start({ connectTimeout: 300 });
    const socket = await rawSocket(b.port);
    socket.write(CONNECT_PACKET.subarray(0, 8));
    await within(closed(socket), 5_000, 'the broker to close the connection');
    expect(b.connectionStats().refused.connect_timeout).toBe(1);
  });
});

describe('connection caps', () => {
  it('refuses the (N+1)th connection from one address while another address still connects, and frees a slot on close', async () => {
    const b = await start({ maxConnectionsPerAddress: 2 });
    const url = `mqtt://127.0.0.1:${b.port}`;
    const first = await connectClient(url);
    const second = await connectClient(url);
    const refused = await rawSocket(b.port);
    await within(closed(refused), 5_000, 'the third connection from 127.0.0.1 to be closed');
    expect(b.connectionStats().refused.address_limit).toBe(1);
    const other = await clientFrom(b.port, '127.0.0.2');
    expect(other.connected).toBe(true);
    // A connection pending CONNECT counts too.
    const raw = await rawSocket(b.port, '127.0.0.3');
    const raw2 = await rawSocket(b.port, '127.0.0.3');
    const third = await rawSocket(b.port, '127.0.0.3');
    await within(closed(third), 5_000, 'the third connection from 127.0.0.3 to be closed');
    raw.write(CONNECT_PACKET);
    expect(await received(raw, 'CONNACK')).toEqual(CONNACK_ACCEPTED);
    raw2.destroy();
    await endClient(first);
    await openAtMost(b, 3);
    const again = await connectClient(url);
    await Promise.all([endClient(second), endClient(again), endClient(other)]);
  });

  it('logs a flood of refusals as one line per reason and interval, with the count since the last line', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const clock = createFixedClock(0);
    broker = await startMqttBroker({
      port: 0, host: '127.0.0.1', limits: { maxConnectionsPerAddress: 1 }, clock,
      log: createLogger('info', 'edgeld', (l) => lines.push(JSON.parse(l) as Record<string, unknown>)), // NOTE: one JSON object per line
    });
    const b = broker;
    await rawSocket(b.port);
    const refusedOnce = async (): Promise<void> => {
      const s = await rawSocket(b.port);
      await within(closed(s), 5_000, 'a refused connection to be closed');
    };
    for (let i = 0; i < 5; i++) await refusedOnce();
    const refusals = (): Array<Record<string, unknown>> => lines.filter((l) => l['msg'] === 'mqtt connection refused');
    expect(refusals()).toHaveLength(1);
    expect(refusals()[0]).toMatchObject({ level: 'warn', reason: 'address_limit', address: '127.0.0.1' });
    clock.advance(10_000);
    await refusedOnce();
    expect(refusals()).toHaveLength(2);
    expect(refusals()[1]).toMatchObject({ reason: 'address_limit', alsoRefusedSinceLastLine: 4 });
    expect(b.connectionStats().refused.address_limit).toBe(6);
  });

  it('refuses a connection over the total cap from any address', async () => {
    const b = await start({ maxConnections: 2 });
    await rawSocket(b.port, '127.0.0.1');
    await rawSocket(b.port, '127.0.0.2');
    const third = await rawSocket(b.port, '127.0.0.3');
    await within(closed(third), 5_000, 'the third connection to be closed');
    expect(b.connectionStats().refused.connection_limit).toBe(1);
    expect(b.connectionStats().open).toBe(2);
  });
});

describe('the same limits over WebSocket and TLS', () => {
  it('caps WebSocket connections per address and closes an oversized packet before CONNECT', async () => {
    const b = await start({ maxConnectionsPerAddress: 2 }, { wsPort: 0 });
    const url = `ws://127.0.0.1:${b.wsPort}`;
    const first = await connectClient(url);
    const second = await connectClient(url);
    await wsRefused(url);
    expect(b.connectionStats().refused.address_limit).toBe(1);
    await endClient(first);
    await openAtMost(b, 1);
    const ws = new WebSocket(url, 'mqtt');
    opened.push({ destroy: () => ws.terminate() });
    ws.on('error', () => undefined);
    await within(new Promise((r) => ws.once('open', r)), 5_000, 'websocket open');
    const gone = closed(ws);
    ws.send(Buffer.concat([fixedHeader(CONNECT, 200 * MB), Buffer.alloc(1_024)]));
    await within(gone, 5_000, 'the broker to close the websocket');
    expect(b.connectionStats().refused.packet_too_large).toBe(1);
    await endClient(second);
  });

  it('disconnects a WebSocket client that publishes over the limit', async () => {
    const b = await start({ maxPacketBytes: 4_096 }, { wsPort: 0 });
    const client = await connectClient(`ws://127.0.0.1:${b.wsPort}`);
    const gone = closed(client);
    client.publish('size/ws', Buffer.alloc(8_192), { qos: 0 });
    await within(gone, 5_000, 'the broker to close the websocket client');
    client.end(true);
    expect(b.connectionStats().refused.packet_too_large).toBe(1);
  });

  it('counts TLS connections from the TCP accept and checks the packets inside the TLS stream', async () => {
    const b = await start({ maxConnectionsPerAddress: 1 }, { tls: true });
    const tlsPort = b.tlsPort!; // NOTE: started with TLS above
    const secure = connectTls({ port: tlsPort, host: '127.0.0.1', rejectUnauthorized: false });
    opened.push(secure);
    secure.on('error', () => undefined);
    await within(new Promise((r) => secure.once('secureConnect', r)), 5_000, 'tls handshake');
    // The address is at its cap: a second connection is closed before its handshake.
    const second = connectTcp(tlsPort, '127.0.0.1');
    opened.push(second);
    second.on('error', () => undefined);
    await within(closed(second), 5_000, 'the second TLS connection to be closed');
    expect(b.connectionStats().refused.address_limit).toBe(1);
    const gone = closed(secure);
    secure.write(fixedHeader(PUBLISH, 200 * MB));
    await within(gone, 5_000, 'the broker to close the TLS connection');
    expect(b.connectionStats().refused.not_connect).toBe(1);
    await openAtMost(b, 0); // released once the TCP connection under TLS closed
  });
});

describe('the options, wired', () => {
  it('cap the HTTP port\'s /mqtt too, and the refusals show in /metrics', async () => {
    const t = await startTestBroker({ config: { mqtt: { maxConnectionsPerAddress: 1 } } });
    opened.push({ destroy: () => void t.close() });
    const httpPort = await t.broker.listen();
    await rawSocket(t.broker.mqttPort!); // NOTE: listening above
    await wsRefused(`ws://127.0.0.1:${httpPort}/mqtt`);
    const res = await t.request('GET', '/metrics');
    const m = parseExposition(res.text);
    expect(m.value('edgeld_mqtt_connections_refused_total', { reason: 'address_limit' })).toBe(1);
    expect(m.value('edgeld_mqtt_connections_refused_total', { reason: 'packet_too_large' })).toBe(0);
    expect(m.value('edgeld_mqtt_connections')).toBe(1);
    await t.close();
  });
});

describe('defaults', () => {
  it('a broker started without limits has the defaults of the mqtt.* options', () => {
    const { mqtt } = defaultConfig();
    expect(DEFAULT_CONNECTION_LIMITS).toEqual({
      maxPacketBytes: mqtt.maxPacketBytes, connectTimeout: mqtt.clientConnectTimeout,
      maxConnectionsPerAddress: mqtt.maxConnectionsPerAddress, maxConnections: mqtt.maxConnections,
    });
    expect(mqtt.maxPacketBytes).toBeGreaterThanOrEqual(mqtt.maxPayload + 1_024);
  });

  it('refuses a packet limit that would close the connection of a measurement mqtt.max-payload accepts', () => {
    const load = (): unknown => loadConfig({ argv: [], env: { MQTT_MAX_PAYLOAD: '300000' } });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/mqtt\.max-packet-bytes/);
    expect(loadConfig({ argv: [], env: { MQTT_MAX_PAYLOAD: '300000', MQTT_MAX_PACKET_BYTES: '301024' } }).mqtt.maxPacketBytes).toBe(301_024);
  });
});
