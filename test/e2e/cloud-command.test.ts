// From the cloud to a valve and back (edge spec §6 and §7): a cloud edgeld, mosquitto as the MQTT
// broker both reach, and an edge edgeld forwarding its valve upstream with federation.downlink on for
// the valve's command `open`. The device is an `mqtt` client on the edge's embedded broker. A PATCH
// of `open` in the cloud comes down, is dispatched to the device once, the device's answer makes the
// edge's `open_status` OK (with `open_info`), and that goes back up; the cloud's own `open` is not
// written again by the round trip. The steps of docs/mqtt-and-devices.md's worked example.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { connectClient, endClient, startMosquitto, type Mosquitto } from '../helpers/mqtt.js';
import { call, edgeldProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/fake-cloud.js';
import { within, type BrokerProcess } from '../helpers/process.js';

const nodes = edgeldProcesses('edgeld-e2e-cloud-command-');
let mosquitto: Mosquitto;

beforeAll(async () => {
  mosquitto = await startMosquitto();
});
afterAll(async () => {
  await mosquitto.remove();
});

const VALVE = 'urn:ngsi-ld:Valve:site-1:valve-1';
const path = `/ngsi-ld/v1/entities/${encodeURIComponent(VALVE)}`;
const CMD = 'ngsi/default/valve-1/cmd';
const CMDEXE = 'ngsi/default/valve-1/cmdexe';
const ECHO = 'ngsi/default/valve-1/attrs';

interface Command { id: string; name: string; value: unknown; issuedAt: string; expiresAt: string }

interface Device {
  client: MqttClient;
  commands: Command[];
  /** Publishes on the device's own measurement topic and resolves once it came back: what was due before has arrived. */
  roundTrip(): Promise<void>;
}

async function connectDevice(edge: BrokerProcess): Promise<Device> {
  const client = await connectClient(`mqtt://127.0.0.1:${edge.mqttPort}`, { clientId: 'valve-1' });
  const commands: Command[] = [];
  let echoed = 0;
  client.on('message', (topic, payload) => {
    if (topic === CMD) commands.push(JSON.parse(payload.toString()) as Command);
    if (topic === ECHO) echoed++;
  });
  await client.subscribeAsync([CMD, ECHO], { qos: 1 });
  return {
    client, commands,
    async roundTrip() {
      const before = echoed;
      await client.publishAsync(ECHO, JSON.stringify({ flow: 1 }), { qos: 1 });
      await waitUntil(() => echoed > before, 5_000, 'the device\'s own message back');
    },
  };
}

const edgeEnv = (cloud: BrokerProcess): Record<string, string> => ({
  FEDERATION_UPSTREAM_URL: cloud.base, FEDERATION_LINGER: '0', FEDERATION_RETRY_BASE: '20', FEDERATION_RETRY_MAX: '200',
  FEDERATION_DOWNLINK_TYPES: 'Valve', FEDERATION_DOWNLINK_ATTRIBUTES: 'open', FEDERATION_DOWNLINK_ID_PATTERN: '^urn:ngsi-ld:Valve:site-1:',
  FEDERATION_DOWNLINK_MQTT_URL: mosquitto.url,
});

async function entity(p: BrokerProcess, options = ''): Promise<any> { // eslint-disable-line -- test convenience
  return (await call(p.base, 'GET', `${path}${options}`)).json;
}

/** The instances of an attribute in the cloud's temporal API. */
async function instances(p: BrokerProcess, attr: string): Promise<unknown[]> {
  const res = await call(p.base, 'GET', `/ngsi-ld/v1/temporal/entities/${encodeURIComponent(VALVE)}?attrs=${attr}`);
  if (res.status !== 200) return [];
  const got = res.json[attr];
  return got === undefined ? [] : Array.isArray(got) ? got : [got];
}

const patchOpen = async (cloud: BrokerProcess, value: boolean): Promise<number> =>
  (await call(cloud.base, 'PATCH', `${path}/attrs`, { open: { type: 'Property', value } })).status;

/** Waits for the device's next command, checks its payload, and answers it. */
async function receiveAndAnswer(d: Device, seen: number, value: boolean, info: string): Promise<Command> {
  await waitUntil(() => d.commands.length > seen, 10_000, 'the command at the device');
  const cmd = d.commands[seen]!;
  expect(cmd).toEqual({ id: expect.any(String), name: 'open', value, issuedAt: expect.any(String), expiresAt: expect.any(String) });
  expect(Date.parse(cmd.expiresAt) - Date.parse(cmd.issuedAt)).toBe(60_000);
  await within(d.client.publishAsync(CMDEXE, JSON.stringify({ id: cmd.id, status: 'OK', info }), { qos: 1 }), 5_000, 'the answer\'s PUBACK');
  return cmd;
}

describe('a command from the cloud to a device behind an edge gateway', () => {
  it('reaches the device once, and the cloud sees open_status OK and open_info come back without an echo of open', async () => {
    const [cloud] = await nodes.start({});
    const [edge] = await nodes.start(edgeEnv(cloud!));
    // The valve carries `open`, so the cloud holds the attribute it writes. Created before the device
    // record declares the command: a write of `open` once the command is declared issues one.
    expect((await call(edge!.base, 'POST', '/ngsi-ld/v1/entities', { id: VALVE, type: 'Valve', open: { type: 'Property', value: false } })).status).toBe(201);
    await waitUntil(async () => (await call(cloud!.base, 'GET', path)).status === 200, 10_000, 'the valve in the cloud');
    const reg = await call(edge!.base, 'POST', '/edgeld/v1/devices', { deviceId: 'valve-1', entityId: VALVE, entityType: 'Valve', commands: [{ name: 'open', expires: 'PT1M' }] });
    expect(reg.status).toBe(201);
    const device = await connectDevice(edge!);
    const downlink = async (): Promise<any> => (await call(edge!.base, 'GET', '/ngsi-ld/v1/federation/status')).json.downlink; // eslint-disable-line -- test convenience
    await waitUntil(async () => (await downlink())?.connected === true && (await downlink()).subscription.subscribed === true, 10_000, 'the downlink up');

    // The cloud writes the command attribute; the device gets it and answers.
    expect(await patchOpen(cloud!, true)).toBe(204);
    const written = (await entity(cloud!, '?options=sysAttrs')).open;
    const openInstances = (await instances(cloud!, 'open')).length;
    const first = await receiveAndAnswer(device, 0, true, 'opened');

    await waitUntil(async () => (await entity(edge!)).open_status?.value === 'OK', 5_000, 'open_status OK at the edge');
    expect((await entity(edge!)).open_info?.value).toBe('opened');
    await waitUntil(async () => (await entity(cloud!)).open_status?.value === 'OK', 10_000, 'open_status OK in the cloud');
    await waitUntil(async () => (await entity(cloud!)).open_info?.value === 'opened', 10_000, 'open_info in the cloud');
    const states = (await instances(cloud!, 'open_status')).map((i) => (i as { value: string }).value);
    expect(states).toContain('PENDING');
    expect(states[states.length - 1]).toBe('OK');
    // No echo: the cloud's `open` is the one its PATCH wrote, with no further instance.
    await waitUntil(async () => (await call(edge!.base, 'GET', '/ngsi-ld/v1/federation/status')).json.outboxDepth === 0, 10_000, 'the outbox drained');
    expect((await entity(cloud!, '?options=sysAttrs')).open).toEqual(written);
    expect(await instances(cloud!, 'open')).toHaveLength(openInstances);

    // Delivered once, also after the answer.
    await device.roundTrip();
    expect(device.commands.map((c) => c.id)).toEqual([first.id]);

    // A second PATCH in the cloud issues a second command.
    expect(await patchOpen(cloud!, false)).toBe(204);
    const second = await receiveAndAnswer(device, 1, false, 'closed');
    expect(second.id).not.toBe(first.id);
    await waitUntil(async () => (await entity(cloud!)).open_info?.value === 'closed', 10_000, 'the second answer in the cloud');
    expect((await entity(cloud!)).open_status.value).toBe('OK');
    await device.roundTrip();
    expect(device.commands.map((c) => c.id)).toEqual([first.id, second.id]);
    expect((await entity(edge!)).open.value).toBe(false);
    await endClient(device.client);
  });
});
