// Commands to devices over the embedded broker (edge.md §6), with an mqtt client as the device: a
// write of a command attribute reaches the device on its cmd topic, its PUBACK makes the command
// DELIVERED, its answer OK or ERROR with <name>_info; the states are history instances. An offline
// device gets its pending commands when it subscribes; an expired command is never delivered; a later
// command supersedes a pending one; bad answers are dropped and counted.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { connectClient, subscribe, type Received } from '../helpers/mqtt.js';
import { waitUntil } from '../helpers/fake-cloud.js';

const CORE = 'https://uri.etsi.org/ngsi-ld/default-context/';
const ENTITY = 'urn:ngsi-ld:Valve:v1';
const CMD = 'ngsi/default/v1/cmd';
const CMDEXE = 'ngsi/default/v1/cmdexe';

let b: TestBroker;
const clients: MqttClient[] = [];

const url = (): string => `mqtt://127.0.0.1:${b.broker.mqttPort}`;
const device = async (opts: Parameters<typeof connectClient>[1] = {}): Promise<MqttClient> => {
  const c = await connectClient(url(), opts);
  clients.push(c);
  return c;
};
const issue = (value: unknown) =>
  b.request('POST', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}/attrs`, { body: { open: { type: 'Property', value } } });
const entity = async () => (await b.request('GET', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}`)).json;
const statusNow = async (): Promise<unknown> => (await entity()).open_status?.value;
const statusHistory = (): unknown[] => b.broker.store.history.listForEntity({ tenant: '' }, ENTITY, `${CORE}open_status`).map((i) => {
  const a = i.attribute;
  return a?.kind === 'Property' ? a.value : undefined;
});
const command = (m: Received): { id: string; name: string; value: unknown; issuedAt: string; expiresAt: string } => JSON.parse(m.payload.toString());

beforeEach(async () => {
  b = await startTestBroker();
  await b.broker.listen();
  const reg = await b.request('POST', '/edgeld/v1/devices', {
    body: { deviceId: 'v1', entityId: ENTITY, entityType: 'Valve', commands: [{ name: 'open', expires: 'PT5M' }, { name: 'reboot' }] },
  });
  expect(reg.status).toBe(201);
  expect((await b.request('POST', '/ngsi-ld/v1/entities', { body: { id: ENTITY, type: 'Valve', temperature: { type: 'Property', value: 20 } } })).status).toBe(201);
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.end(true);
  await b.close();
});

describe('device records declare commands', () => {
  it('shows the commands with their expiry (PT1M when none is given)', async () => {
    const res = await b.request('GET', '/edgeld/v1/devices/v1');
    expect(res.json.commands).toEqual([{ name: 'open', expires: 'PT5M' }, { name: 'reboot', expires: 'PT1M' }]);
  });

  it.each([
    [[{ name: 'open' }, { name: 'open' }], 'declared twice'],
    [[{ name: 'open', expires: 'P8D' }], 'longer than P7D'],
    [[{ name: 'open', expires: 'P1M' }], 'not an ISO 8601 duration'],
    [[{ name: 'open_status' }], '_status'],
    [[{ name: 'id' }], 'entity member'],
    [[{ name: 'open', expires: 5 }], 'expected string'],
  ])('refuses %j with 400 BadRequestData', async (commands, detail) => {
    const res = await b.request('PATCH', '/edgeld/v1/devices/v1', { body: { commands } });
    expect(res.status).toBe(400);
    expect(res.json.detail).toContain(detail);
  });
});

describe('a command to a connected device', () => {
  it('records DELIVERED before OK when the answer overtakes the PUBACK (mqtt.js acknowledges after its handler)', async () => {
    const dev = await device();
    dev.on('message', (topic, payload) => {
      if (topic !== CMD) return;
      const { id } = JSON.parse(payload.toString()) as { id: string };
      dev.publish(CMDEXE, JSON.stringify({ id, status: 'OK', info: 'done' }), { qos: 1 });
    });
    await dev.subscribeAsync(CMD, { qos: 1 });
    expect((await issue(true)).status).toBe(204);
    await waitUntil(async () => (await statusNow()) === 'OK', 5_000, 'OK');
    expect(statusHistory()).toEqual(['PENDING', 'DELIVERED', 'OK']);
    expect(b.broker.commands.stats()).toMatchObject({ issued: 1, delivered: 1, answered: 1, open: 0 });
  });

  it('reaches the device; its PUBACK and answer take _status from PENDING through DELIVERED to OK, with _info', async () => {
    const dev = await device();
    const next = await subscribe(dev, CMD, 1);
    expect((await issue(true)).status).toBe(204);
    const m = await next();
    expect(m.qos).toBe(1);
    const cmd = command(m);
    expect(cmd).toMatchObject({ name: 'open', value: true });
    expect(Date.parse(cmd.expiresAt) - Date.parse(cmd.issuedAt)).toBe(300_000);
    await waitUntil(async () => (await statusNow()) === 'DELIVERED', 5_000, 'DELIVERED');
    await dev.publishAsync(CMDEXE, JSON.stringify({ id: cmd.id, status: 'OK', info: { opened: 1 } }), { qos: 1 });
    // The PUBACK of the answer comes after its commit.
    const e = await entity();
    expect(e.open_status.value).toBe('OK');
    expect(e.open_info).toMatchObject({ type: 'JsonProperty', json: { opened: 1 } });
    expect(statusHistory()).toEqual(['PENDING', 'DELIVERED', 'OK']);
    expect(b.broker.commands.stats()).toMatchObject({ issued: 1, delivered: 1, answered: 1, open: 0 });
    // A second answer with the same id is applied never.
    await dev.publishAsync(CMDEXE, JSON.stringify({ id: cmd.id, status: 'ERROR' }), { qos: 1 });
    expect(await statusNow()).toBe('OK');
    expect(b.broker.commands.stats().dropped.unknown).toBe(1);
  });

  it('records ERROR and a text info', async () => {
    const dev = await device();
    const next = await subscribe(dev, CMD, 1);
    await issue({ speed: 3 });
    const cmd = command(await next());
    expect(cmd.value).toEqual({ speed: 3 });
    await dev.publishAsync(CMDEXE, JSON.stringify({ id: cmd.id, status: 'ERROR', info: 'jammed' }), { qos: 1 });
    const e = await entity();
    expect(e.open_status.value).toBe('ERROR');
    expect(e.open_info).toMatchObject({ type: 'Property', value: 'jammed' });
  });

  it('never dispatches the device\'s own measurement of a command attribute', async () => {
    const dev = await device();
    await subscribe(dev, CMD, 1);
    await dev.publishAsync('ngsi/default/v1/attrs', JSON.stringify({ open: false }), { qos: 1 });
    await b.broker.commands.idle();
    expect((await entity()).open.value).toBe(false);
    expect((await entity()).open_status).toBeUndefined();
    expect(b.broker.commands.stats().issued).toBe(0);
  });
});

describe('several devices', () => {
  it('sends the commands of one write to several devices each to its own, none superseding another\'s', async () => {
    const other = 'urn:ngsi-ld:Valve:v2';
    expect((await b.request('POST', '/edgeld/v1/devices', { body: { deviceId: 'v2', entityId: other, commands: [{ name: 'open' }] } })).status).toBe(201);
    const dev1 = await device();
    const dev2 = await device();
    const next1 = await subscribe(dev1, CMD, 1);
    const next2 = await subscribe(dev2, 'ngsi/default/v2/cmd', 1);
    // One batch: one transaction, so the dispatcher finds both commands in one batch of changes.
    const res = await b.request('POST', '/ngsi-ld/v1/entityOperations/upsert', {
      body: [{ id: ENTITY, type: 'Valve', open: { type: 'Property', value: 'a' } }, { id: other, type: 'Valve', open: { type: 'Property', value: 'b' } }],
    });
    expect([201, 204]).toContain(res.status);
    expect(command(await next1()).value).toBe('a');
    expect(command(await next2()).value).toBe('b');
    expect(b.broker.commands.stats()).toMatchObject({ issued: 2, expired: 0 });
  });
});

describe('offline, expired, superseded', () => {
  it('a device offline gets its pending command when it subscribes', async () => {
    await issue('now');
    await b.broker.commands.idle();
    expect(await statusNow()).toBe('PENDING');
    const dev = await device();
    const next = await subscribe(dev, CMD, 1);
    const cmd = command(await next());
    expect(cmd.value).toBe('now');
    await waitUntil(async () => (await statusNow()) === 'DELIVERED', 5_000, 'DELIVERED');
  });

  it('a device with a persistent session gets a command issued while it was away when it reconnects, without subscribing again', async () => {
    const first = await device({ clientId: 'v1-persistent', clean: false });
    await first.subscribeAsync(CMD, { qos: 1 });
    await first.endAsync();
    await issue('queued');
    await b.broker.commands.idle();
    const back = await connectClient(url(), { clientId: 'v1-persistent', clean: false }, 5_000);
    clients.push(back);
    const got: Received[] = [];
    back.on('message', (topic, payload, packet) => got.push({ topic, payload, qos: packet.qos }));
    await waitUntil(() => got.length > 0, 5_000, 'the command from the session');
    expect(command(got[0]!).value).toBe('queued');
    await waitUntil(async () => (await statusNow()) === 'DELIVERED', 5_000, 'DELIVERED');
  });

  it('an expired command becomes EXPIRED and is never delivered', async () => {
    await issue('late');
    await b.broker.commands.idle();
    b.clock.advance(300_001);
    await waitUntil(async () => (await statusNow()) === 'EXPIRED', 5_000, 'EXPIRED');
    const dev = await device();
    const seen: Received[] = [];
    dev.on('message', (topic, payload, packet) => seen.push({ topic, payload, qos: packet.qos }));
    await dev.subscribeAsync(CMD, { qos: 1 });
    // A round trip on the device's own topic after the subscription: anything due was delivered before it.
    const probe = await subscribe(dev, 'ngsi/default/v1/attrs', 0);
    await dev.publishAsync('ngsi/default/v1/attrs', JSON.stringify({ temperature: 1 }), { qos: 1 });
    await probe();
    expect(seen.filter((m) => m.topic === CMD)).toEqual([]);
    expect(statusHistory()).toEqual(['PENDING', 'EXPIRED']);
  });

  it('an expired command queued in a persistent session is not delivered from it either', async () => {
    const first = await device({ clientId: 'v1-away', clean: false });
    await first.subscribeAsync(CMD, { qos: 1 });
    await first.endAsync();
    await issue('stale');
    await b.broker.commands.idle();
    b.clock.advance(300_001);
    await waitUntil(async () => (await statusNow()) === 'EXPIRED', 5_000, 'EXPIRED');
    const back = await connectClient(url(), { clientId: 'v1-away', clean: false }, 5_000);
    clients.push(back);
    const seen: string[] = [];
    back.on('message', (topic) => seen.push(topic));
    const probe = await subscribe(back, 'ngsi/default/v1/attrs', 0);
    await back.publishAsync('ngsi/default/v1/attrs', JSON.stringify({ temperature: 2 }), { qos: 1 });
    await probe();
    expect(seen.filter((t) => t === CMD)).toEqual([]);
  });

  it('a later command of the same name supersedes a pending one: the earlier is EXPIRED and never sent', async () => {
    await issue(1);
    await b.broker.commands.idle();
    await issue(2);
    await b.broker.commands.idle();
    expect(b.broker.commands.stats()).toMatchObject({ issued: 2, expired: 1, open: 1 });
    const dev = await device();
    const next = await subscribe(dev, CMD, 1);
    expect(command(await next()).value).toBe(2);
    await waitUntil(async () => (await statusNow()) === 'DELIVERED', 5_000, 'DELIVERED');
    expect(statusHistory()).toEqual(['PENDING', 'EXPIRED', 'PENDING', 'DELIVERED']);
  });
});

describe('bad answers', () => {
  it('drops and counts answers that are not JSON, of a wrong shape, unknown or another device\'s', async () => {
    const dev = await device();
    const next = await subscribe(dev, CMD, 1);
    await issue(true);
    const cmd = command(await next());
    await dev.publishAsync(CMDEXE, 'not json', { qos: 1 });
    await dev.publishAsync(CMDEXE, JSON.stringify({ id: cmd.id, status: 'DONE' }), { qos: 1 });
    await dev.publishAsync(CMDEXE, JSON.stringify({ id: 'nope', status: 'OK' }), { qos: 1 });
    await dev.publishAsync('ngsi/default/other/cmdexe', JSON.stringify({ id: cmd.id, status: 'OK' }), { qos: 1 });
    expect(b.broker.commands.stats().dropped).toMatchObject({ invalid: 2, unknown: 1, foreign: 1 });
    expect(await statusNow()).not.toBe('OK');
    const metrics = await b.request('GET', '/metrics');
    expect(metrics.text).toContain('edgeld_command_answers_dropped_total{reason="invalid"} 2');
  });
});
