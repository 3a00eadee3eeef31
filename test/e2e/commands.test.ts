// End-to-end: commands to a device of the real process across kill -9 (edge.md §6). A command
// recorded but not yet delivered survives the kill and reaches the device after the restart; one
// delivered survives unanswered and its answer after the next restart is applied; once answered, it
// is never sent again, whatever restarts follow.

import { describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { connectClient, endClient } from '../helpers/mqtt.js';
import { within, type BrokerProcess } from '../helpers/process.js';
import { call, edgeldProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/fake-cloud.js';

const procs = edgeldProcesses('edgeld-e2e-commands-');
const ENTITY = 'urn:ngsi-ld:Valve:v1';
const CMD = 'ngsi/default/v1/cmd';

interface Device {
  client: MqttClient;
  commands: Array<{ id: string; value: unknown }>;
}

/** The device: connects, subscribes to its cmd topic, keeps what arrives. */
async function connectDevice(p: BrokerProcess): Promise<Device> {
  const client = await connectClient(`mqtt://127.0.0.1:${p.mqttPort}`, { clientId: 'v1' });
  const commands: Device['commands'] = [];
  client.on('message', (topic, payload) => {
    if (topic === CMD) commands.push(JSON.parse(payload.toString()) as Device['commands'][number]);
  });
  await client.subscribeAsync(CMD, { qos: 1 });
  return { client, commands };
}

/** A round trip on the device's own measurement topic: what was due to it before has arrived. */
async function roundTrip(d: Device): Promise<void> {
  const echo = 'ngsi/default/v1/attrs';
  await d.client.subscribeAsync(echo, { qos: 1 });
  const seen = new Promise<void>((resolve) => d.client.on('message', (topic) => topic === echo && resolve()));
  await d.client.publishAsync(echo, JSON.stringify({ temperature: 20 }), { qos: 1 });
  await within(seen, 5_000, 'the echo');
}

const status = async (p: BrokerProcess): Promise<unknown> => (await call(p.base, 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}`)).json?.open_status?.value;

describe('commands across kill -9', () => {
  it('loses no pending command, applies the answer after a restart, and never sends a command again after its answer', async () => {
    const [p1] = await procs.start({});
    const env = { STORAGE_DIR: procs.dataDir(p1!) };
    const reg = await call(p1!.base, 'POST', '/edgeld/v1/devices', { deviceId: 'v1', entityId: ENTITY, entityType: 'Valve', commands: [{ name: 'open', expires: 'PT5M' }] });
    expect(reg.status).toBe(201);
    expect((await call(p1!.base, 'POST', '/ngsi-ld/v1/entities', { id: ENTITY, type: 'Valve' })).status).toBe(201);
    expect((await call(p1!.base, 'POST', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}/attrs`, { open: { type: 'Property', value: 42 } })).status).toBe(204);
    await waitUntil(async () => (await status(p1!)) === 'PENDING', 5_000, 'PENDING');
    // Recorded, never delivered (the device is offline): killed.
    await procs.kill(p1!);

    const [p2] = await procs.start(env);
    const d2 = await connectDevice(p2!);
    await waitUntil(() => d2.commands.length > 0, 5_000, 'the command after the restart');
    const [cmd] = d2.commands;
    expect(cmd!.value).toBe(42);
    await waitUntil(async () => (await status(p2!)) === 'DELIVERED', 5_000, 'DELIVERED');
    // Delivered, not answered: killed again.
    d2.client.end(true);
    await procs.kill(p2!);

    const [p3] = await procs.start(env);
    expect(await status(p3!)).toBe('DELIVERED');
    const d3 = await connectDevice(p3!);
    // The answer's PUBACK comes after its commit; then a kill loses nothing of it.
    await d3.client.publishAsync('ngsi/default/v1/cmdexe', JSON.stringify({ id: cmd!.id, status: 'OK', info: 'opened' }), { qos: 1 });
    expect(await status(p3!)).toBe('OK');
    d3.client.end(true);
    await procs.kill(p3!);

    const [p4] = await procs.start(env);
    const entity = (await call(p4!.base, 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}`)).json;
    expect(entity.open_status.value).toBe('OK');
    expect(entity.open_info.value).toBe('opened');
    const d4 = await connectDevice(p4!);
    await roundTrip(d4);
    // Sent once before its delivery's restart at most, never after its answer.
    expect(d4.commands).toEqual([]);
    const history = await call(p4!.base, 'GET', `/ngsi-ld/v1/temporal/entities/${encodeURIComponent(ENTITY)}?attrs=open_status&timeproperty=createdAt`);
    expect(history.status).toBe(200);
    const states = (history.json.open_status as Array<{ value: string }>).map((i) => i.value);
    expect(states).toEqual(['PENDING', 'DELIVERED', 'OK']);
    await endClient(d4.client);
    expect(await procs.stop(p4!)).toBe(0);
  });
});
