// End-to-end: the real process runs the embedded MQTT broker on an ephemeral port, serves MQTT
// clients over TCP and WebSocket, survives garbage, and on SIGTERM exits 0 with the listener closed.

import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { connect as connectTcp, createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/broker.js';
import { connectClient, endClient, subscribe } from '../helpers/mqtt.js';
import { startBrokerProcess, within } from '../helpers/process.js';

const dir = tempDir('edgeld-e2e-mqtt-');
afterAll(() => dir.remove());

function refused(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connectTcp(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: Error & { code?: string }) => resolve(err.code ?? err.message));
  });
}

describe('embedded MQTT broker in the process', () => {
  it('serves MQTT clients over TCP and WebSocket, and SIGTERM exits 0 with the listeners closed', async () => {
    const p = await startBrokerProcess({ STORAGE_DIR: `${dir.path}/mqtt`, MQTT_PORT: '0', MQTT_WS_PORT: '0', LOG_LEVEL: 'debug' });
    expect(p.mqttPort).toBeGreaterThan(0);
    const ws = /"mqttWs":"[^"]*:(\d+)"/.exec(p.stderr());
    expect(ws).not.toBeNull();
    const wsPort = Number(ws![1]);

    const sub = await connectClient(`mqtt://127.0.0.1:${p.mqttPort}`);
    const pub = await connectClient(`ws://127.0.0.1:${wsPort}`);
    const next = await subscribe(sub, 'plant/room1', 1);
    await pub.publishAsync('plant/room1', '{"t":21.5}', { qos: 1 });
    expect((await next()).payload.toString()).toBe('{"t":21.5}');

    // Garbage on a fresh connection ends that connection only.
    const junk = connectTcp(p.mqttPort, '127.0.0.1');
    junk.on('error', () => undefined);
    junk.write(Buffer.from([0xf0, 0x00, 0xde, 0xad]));
    await within(new Promise((r) => junk.once('close', r)), 5_000, 'garbage connection closed');
    await pub.publishAsync('plant/room1', 'still here', { qos: 0 });
    expect((await next()).payload.toString()).toBe('still here');
    expect(p.stderr()).toContain('"msg":"mqtt client connected"');

    const closed = Promise.all([sub, pub].map((c) => new Promise<void>((r) => c.once('close', () => r()))));
    p.child.kill('SIGTERM');
    expect(await within(p.exited, 10_000, 'SIGTERM exit')).toBe(0);
    await within(closed, 5_000, 'clients disconnected');
    sub.end(true);
    pub.end(true);
    expect(p.stderr()).toContain('"msg":"stopped"');
    expect(await refused(p.mqttPort)).toBe('ECONNREFUSED');
    expect(await refused(wsPort)).toBe('ECONNREFUSED');
  });

  it('a busy MQTT port is one clear line and exit 5, with nothing left listening', async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as AddressInfo).port; // NOTE: a TCP server's address is an object
    const main = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
    const res = spawnSync(process.execPath, [main], {
      env: { PATH: process.env['PATH'] ?? '', SERVER_HOST: '127.0.0.1', SERVER_PORT: '0', MQTT_HOST: '127.0.0.1', MQTT_PORT: String(port), STORAGE_DIR: `${dir.path}/busy` },
      encoding: 'utf8', timeout: 10_000,
    });
    busy.close();
    expect(res.status).toBe(5);
    expect(res.stderr).toContain('cannot start: the MQTT port cannot be opened');
    expect(res.stderr).toContain(`port ${port} on 127.0.0.1 is already in use (mqtt.port)`);
    expect(res.stderr).not.toContain('    at ');
  });

  it('a client connected when SIGTERM arrives does not hold the process open', async () => {
    const p = await startBrokerProcess({ STORAGE_DIR: `${dir.path}/idle` });
    const client = await connectClient(`mqtt://127.0.0.1:${p.mqttPort}`, { keepalive: 0 });
    const idle = connectTcp(p.mqttPort, '127.0.0.1'); // never sends CONNECT
    idle.on('error', () => undefined);
    await within(new Promise((r) => idle.once('connect', r)), 5_000, 'idle connect');
    p.child.kill('SIGTERM');
    expect(await within(p.exited, 10_000, 'SIGTERM exit')).toBe(0);
    client.end(true);
    idle.destroy();
  });
});
