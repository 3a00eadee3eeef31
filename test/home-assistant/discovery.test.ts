// Home Assistant MQTT discovery on the embedded broker, with an mqtt.js client as Home Assistant:
// the retained configs of a registered device (checked against Home Assistant's own schemas), its
// state kept current after an HTTP write and an MQTT measurement, Home Assistant's button, number
// and switch becoming commands of the dispatcher, the configs removed with the device, and nothing
// published when the integration is off (the default).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { startTestBroker, type ConfigPatch, type TestBroker } from '../helpers/broker.js';
import { connectClient } from '../helpers/mqtt.js';
import { waitUntil } from '../helpers/fake-cloud.js';
import { COMPONENT_SCHEMAS, DISCOVERY_TOPIC } from './ha-schema.js';

const ENTITY = 'urn:ngsi-ld:Boiler:b1';
const STATE = 'edgeld/ha/default/b1/state';
const ON: ConfigPatch = { integrations: { homeAssistant: { enabled: true, discoveryPrefix: 'homeassistant', nodeId: 'edgeld' } } };

let b: TestBroker | undefined;
const clients: MqttClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.end(true);
  await b?.close();
  b = undefined;
});

/** A client that keeps the last message of every topic it receives (an empty payload: removed). */
interface Listener {
  client: MqttClient;
  last: Map<string, string>;
  json(topic: string): Record<string, unknown> | undefined;
}

async function listen(broker: TestBroker, filters: string[]): Promise<Listener> {
  const client = await connectClient(`mqtt://127.0.0.1:${broker.broker.mqttPort}`);
  clients.push(client);
  const last = new Map<string, string>();
  client.on('message', (topic, payload) => last.set(topic, payload.toString()));
  await client.subscribeAsync(filters, { qos: 1 });
  return {
    client, last,
    json: (topic) => {
      const text = last.get(topic);
      return text === undefined || text === '' ? undefined : JSON.parse(text) as Record<string, unknown>;
    },
  };
}

/** A boiler: the entity first (a write of a command attribute once declared is a command), then its device record. */
async function registerBoiler(broker: TestBroker): Promise<void> {
  expect((await broker.request('POST', '/ngsi-ld/v1/entities', {
    body: {
      id: ENTITY, type: 'Boiler',
      temperature: { type: 'Property', value: 61.5, unitCode: 'CEL' },
      humidity: { type: 'Property', value: 40, unitCode: 'P1' },
      mode: { type: 'Property', value: 'eco' },
      burning: { type: 'Property', value: true },
      power: { type: 'Property', value: false },
      setpoint: { type: 'Property', value: 60 },
      location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [13.4, 52.5] } },
    },
  })).status).toBe(201);
  expect((await broker.request('POST', '/edgeld/v1/devices', {
    body: {
      deviceId: 'b1', entityId: ENTITY, entityType: 'Boiler', renames: { t: 'temperature' }, unitCodes: { temperature: 'CEL' },
      commands: [{ name: 'power' }, { name: 'setpoint' }, { name: 'reboot' }],
    },
  })).status).toBe(201);
}

const configTopic = (component: string, attr: string): string => `homeassistant/${component}/edgeld/default_b1_${attr}/config`;

const EXPECTED = [
  configTopic('sensor', 'temperature'), configTopic('sensor', 'humidity'), configTopic('sensor', 'mode'),
  configTopic('binary_sensor', 'burning'), configTopic('switch', 'power'), configTopic('number', 'setpoint'), configTopic('button', 'reboot'),
];

async function startWithBoiler(): Promise<{ broker: TestBroker; ha: Listener }> {
  const broker = (b = await startTestBroker({ config: ON }));
  await broker.broker.listen();
  const ha = await listen(broker, ['homeassistant/#', 'edgeld/ha/#']);
  await registerBoiler(broker);
  await waitUntil(() => EXPECTED.every((t) => ha.last.has(t)) && ha.last.has(STATE), 5_000, 'the configs and the state of the boiler');
  return { broker, ha };
}

const recentCommands = async (broker: TestBroker): Promise<Array<{ name: string; value: unknown; state: string }>> =>
  (await broker.request('GET', `/edgeld/v1/commands?entity=${encodeURIComponent(ENTITY)}`)).json.recent;

describe('Home Assistant discovery configs', () => {
  it('publishes a retained config per attribute and command that Home Assistant\'s schema accepts', async () => {
    const { ha } = await startWithBoiler();
    const configs = [...ha.last].filter(([topic, payload]) => topic.startsWith('homeassistant/') && payload !== '');
    expect(configs.map(([t]) => t).sort()).toEqual([...EXPECTED, 'homeassistant/binary_sensor/edgeld/gateway/config'].sort());
    const state = ha.json(STATE)!;
    for (const [topic, payload] of configs) {
      const m = DISCOVERY_TOPIC.exec(topic);
      expect(m?.groups?.prefix).toBe('homeassistant');
      const schema = COMPONENT_SCHEMAS[m!.groups!.component!]!;
      const parsed = schema.safeParse(JSON.parse(payload));
      expect(parsed.success, `${topic}: ${parsed.error?.message}`).toBe(true);
      // The state topic's template reads a member the state holds.
      const config = JSON.parse(payload) as { value_template?: string; state_topic?: string };
      const key = /value_json\["([^"]+)"\]/.exec(config.value_template ?? '')?.[1];
      if (config.state_topic !== undefined && config.state_topic !== 'edgeld/ha/status') expect(Object.keys(state)).toContain(key);
    }
    // GeoProperty: no component.
    expect([...ha.last.keys()].some((t) => t.includes('location'))).toBe(false);
  });

  it('tells units, device classes, the device, its gateway and its availability', async () => {
    const { ha } = await startWithBoiler();
    expect(ha.json(configTopic('sensor', 'temperature'))).toEqual({
      name: 'temperature', unique_id: 'edgeld_default_b1_temperature',
      state_topic: STATE, value_template: '{{ value_json["temperature"] }}',
      unit_of_measurement: '°C', device_class: 'temperature', state_class: 'measurement',
      availability: [
        { topic: 'ngsi/default/b1/status', payload_available: 'online', payload_not_available: 'offline' },
        { topic: 'edgeld/ha/status', payload_available: 'online', payload_not_available: 'offline' },
      ],
      availability_mode: 'all',
      device: { identifiers: ['edgeld_default_b1'], name: 'b1', manufacturer: 'edgeld', model: 'Boiler', via_device: 'edgeld' },
      origin: { name: 'edgeld' },
    });
    expect(ha.json(configTopic('sensor', 'humidity'))).toMatchObject({ unit_of_measurement: '%', device_class: 'humidity' });
    expect(ha.json(configTopic('sensor', 'mode'))).not.toHaveProperty('state_class');
    expect(ha.json(configTopic('switch', 'power'))).toMatchObject({ command_topic: 'edgeld/ha/default/b1/power/set', value_template: `{{ 'ON' if value_json["power"] else 'OFF' }}` });
    expect(ha.json(configTopic('button', 'reboot'))).toMatchObject({ command_topic: 'edgeld/ha/default/b1/reboot/set', payload_press: 'PRESS' });
    expect(ha.json('homeassistant/binary_sensor/edgeld/gateway/config')).toMatchObject({ device: { identifiers: ['edgeld'] }, state_topic: 'edgeld/ha/status' });
    expect(ha.last.get('edgeld/ha/status')).toBe('online');
    expect(ha.json(STATE)).toEqual({ power: false, setpoint: 60, temperature: 61.5, humidity: 40, mode: 'eco', burning: true });
  });

  it('keeps them retained: a client subscribing later gets them', async () => {
    const { broker } = await startWithBoiler();
    const late = await listen(broker, ['homeassistant/#']);
    await waitUntil(() => EXPECTED.every((t) => late.last.has(t)), 5_000, 'the retained configs');
  });
});

describe('Home Assistant states', () => {
  it('follows an HTTP write and an MQTT measurement', async () => {
    const { broker, ha } = await startWithBoiler();
    expect((await broker.request('PATCH', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}/attrs`, {
      body: { mode: { type: 'Property', value: 'comfort' } },
    })).status).toBe(204);
    await waitUntil(() => ha.json(STATE)?.mode === 'comfort', 5_000, 'the state after the PATCH');
    const device = await connectClient(`mqtt://127.0.0.1:${broker.broker.mqttPort}`);
    clients.push(device);
    await device.publishAsync('ngsi/default/b1/attrs', JSON.stringify({ t: 64.25 }), { qos: 1 });
    await waitUntil(() => ha.json(STATE)?.temperature === 64.25, 5_000, 'the state after the measurement');
  });

  it('re-publishes the configs when the entity gains an attribute, and removes those of an attribute deleted', async () => {
    const { broker, ha } = await startWithBoiler();
    const path = `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}/attrs`;
    expect((await broker.request('POST', path, { body: { pressure: { type: 'Property', value: 1.2, unitCode: 'BAR' } } })).status).toBe(204);
    await waitUntil(() => ha.json(configTopic('sensor', 'pressure')) !== undefined, 5_000, 'the config of the new attribute');
    expect(ha.json(configTopic('sensor', 'pressure'))).toMatchObject({ unit_of_measurement: 'bar', device_class: 'pressure' });
    expect((await broker.request('DELETE', `${path}/mode`)).status).toBe(204);
    await waitUntil(() => ha.last.get(configTopic('sensor', 'mode')) === '', 5_000, 'the config of the deleted attribute removed');
  });
});

describe('a device record changed', () => {
  it('re-publishes the configs: a command no longer declared is removed, a new type shows in every config', async () => {
    const { broker, ha } = await startWithBoiler();
    expect((await broker.request('PATCH', '/edgeld/v1/devices/b1', {
      body: { entityType: 'Furnace', commands: [{ name: 'power' }, { name: 'setpoint' }] },
    })).status).toBe(204);
    await waitUntil(() => ha.last.get(configTopic('button', 'reboot')) === '', 5_000, 'the button removed');
    await waitUntil(() => (ha.json(configTopic('sensor', 'temperature'))?.device as { model?: string } | undefined)?.model === 'Furnace', 5_000, 'the new model');
    expect((ha.json(configTopic('switch', 'power'))?.device as { model?: string }).model).toBe('Furnace');
  });

  it('publishes no config again when only values change', async () => {
    const { broker, ha } = await startWithBoiler();
    const configsSeen: string[] = [];
    ha.client.on('message', (topic) => {
      if (topic.startsWith('homeassistant/')) configsSeen.push(topic);
    });
    expect((await broker.request('PATCH', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}/attrs`, {
      body: { temperature: { type: 'Property', value: 70, unitCode: 'CEL' }, mode: { type: 'Property', value: 'boost' } },
    })).status).toBe(204);
    await waitUntil(() => ha.json(STATE)?.temperature === 70, 5_000, 'the new state');
    await broker.broker.homeAssistant!.idle();
    expect(configsSeen).toEqual([]);
  });
});

describe('Home Assistant commands', () => {
  it('turns a press, a number and a switch into commands of the dispatcher (their _status PENDING), sent to the device', async () => {
    const { broker, ha } = await startWithBoiler();
    const device = await connectClient(`mqtt://127.0.0.1:${broker.broker.mqttPort}`, { clientId: 'b1' });
    clients.push(device);
    const sent: unknown[] = [];
    device.on('message', (_t, payload) => sent.push(JSON.parse(payload.toString())));
    await device.subscribeAsync('ngsi/default/b1/cmd', { qos: 1 });
    await ha.client.publishAsync('edgeld/ha/default/b1/reboot/set', 'PRESS', { qos: 1 });
    await ha.client.publishAsync('edgeld/ha/default/b1/setpoint/set', '65.5', { qos: 1 });
    await ha.client.publishAsync('edgeld/ha/default/b1/power/set', 'ON', { qos: 1 });
    await waitUntil(async () => (await recentCommands(broker)).length === 3, 5_000, 'three commands');
    const recent = await recentCommands(broker);
    expect(recent.map(({ name, value }) => ({ name, value })).sort((x, y) => x.name.localeCompare(y.name))).toEqual([
      { name: 'power', value: true }, { name: 'reboot', value: 'PRESS' }, { name: 'setpoint', value: 65.5 },
    ]);
    const entity = (await broker.request('GET', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}?options=keyValues`)).json;
    for (const name of ['power', 'setpoint', 'reboot']) expect(['PENDING', 'DELIVERED']).toContain(entity[`${name}_status`]);
    await waitUntil(() => sent.length === 3, 5_000, 'the three commands at the device');
    expect(sent).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'power', value: true })]));
    // The switch and the number show the values written; the command topics are not relayed.
    await waitUntil(() => ha.json(STATE)?.power === true && ha.json(STATE)?.setpoint === 65.5, 5_000, 'the state after the commands');
    expect(ha.last.has('edgeld/ha/default/b1/power/set')).toBe(false);
  });

  it('drops a payload that is no value of the component', async () => {
    const { broker, ha } = await startWithBoiler();
    await ha.client.publishAsync('edgeld/ha/default/b1/setpoint/set', 'warm', { qos: 1 });
    await ha.client.publishAsync('edgeld/ha/default/b1/power/set', 'maybe', { qos: 1 });
    await ha.client.publishAsync('edgeld/ha/default/b1/reboot/set', 'PRESS', { qos: 1 });
    await waitUntil(async () => (await recentCommands(broker)).length === 1, 5_000, 'the press');
    expect((await recentCommands(broker)).map((c) => c.name)).toEqual(['reboot']);
    expect(broker.broker.homeAssistant!.stats()).toEqual({ commands: 1, dropped: { unknown: 0, payload: 2, refused: 0 } });
    await ha.client.publishAsync('edgeld/ha/default/b1/mode/set', 'x', { qos: 1 });
    const metrics = (await broker.request('GET', '/metrics')).text;
    expect(metrics).toContain('edgeld_home_assistant_commands_dropped_total{reason="unknown"} 1');
    expect(metrics).toContain('edgeld_home_assistant_commands_total 1');
  });
});

describe('a device deleted', () => {
  it('has its configs and state removed (empty retained payloads)', async () => {
    const { broker, ha } = await startWithBoiler();
    expect((await broker.request('DELETE', '/edgeld/v1/devices/b1')).status).toBe(204);
    await waitUntil(() => EXPECTED.every((t) => ha.last.get(t) === '') && ha.last.get(STATE) === '', 5_000, 'the configs removed');
    const late = await listen(broker, ['homeassistant/#', 'edgeld/ha/#']);
    // The gateway's own config is still retained: once it arrived, so did every retained message before it.
    await waitUntil(() => late.last.has('homeassistant/binary_sensor/edgeld/gateway/config'), 5_000, 'the gateway config');
    await late.client.publishAsync('homeassistant/marker', 'end', { qos: 1 });
    await waitUntil(() => late.last.has('homeassistant/marker'), 5_000, 'the marker');
    expect([...late.last.keys()].filter((t) => t.includes('b1'))).toEqual([]);
  });
});

describe('a restart', () => {
  it('says offline at shutdown, then publishes the configs and state again at start (retained copies replaced, not doubled)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgeld-ha-'));
    const dbPath = join(dir, 'edgeld.db');
    try {
      const first = (b = await startTestBroker({ config: ON, dbPath }));
      await first.broker.listen();
      const ha = await listen(first, ['homeassistant/#', 'edgeld/ha/#']);
      await registerBoiler(first);
      await waitUntil(() => EXPECTED.every((t) => ha.last.has(t)), 5_000, 'the configs');
      await first.close();
      b = undefined;
      expect(ha.last.get('edgeld/ha/status')).toBe('offline');
      const second = (b = await startTestBroker({ config: ON, dbPath }));
      await second.broker.listen();
      const seen: string[] = [];
      const again = await listen(second, ['homeassistant/#', 'edgeld/ha/#']);
      again.client.on('message', (topic) => seen.push(topic));
      await waitUntil(() => again.last.get('edgeld/ha/status') === 'online' && EXPECTED.every((t) => again.last.has(t)), 5_000, 'online again');
      expect(again.json(STATE)).toMatchObject({ temperature: 61.5, power: false });
      await second.broker.homeAssistant!.idle();
      await again.client.publishAsync('homeassistant/marker', 'end', { qos: 1 });
      await waitUntil(() => again.last.has('homeassistant/marker'), 5_000, 'the marker');
      // Each config at most twice: its retained copy at subscription, and its publication at start if that came after.
      for (const topic of EXPECTED) expect(seen.filter((t) => t === topic).length, topic).toBeLessThanOrEqual(2);
    } finally {
      await b?.close();
      b = undefined;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('retained messages of an earlier run', () => {
  /** A first run with the integration on and the boiler registered, in a database file. */
  async function firstRun(dbPath: string): Promise<void> {
    const first = (b = await startTestBroker({ config: ON, dbPath }));
    await first.broker.listen();
    const ha = await listen(first, ['homeassistant/#']);
    await registerBoiler(first);
    await waitUntil(() => EXPECTED.every((t) => ha.last.has(t)), 5_000, 'the configs');
    await first.close();
    b = undefined;
  }

  /** What a client subscribing now gets, up to a marker of its own. */
  async function retainedNow(broker: TestBroker): Promise<string[]> {
    const late = await listen(broker, ['homeassistant/#', 'edgeld/ha/#']);
    await late.client.publishAsync('homeassistant/marker', 'end', { qos: 1 });
    await waitUntil(() => late.last.has('homeassistant/marker'), 5_000, 'the marker');
    return [...late.last.keys()].filter((t) => t !== 'homeassistant/marker').sort();
  }

  it('of a device deleted while the gateway was down are removed at start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgeld-ha-'));
    try {
      await firstRun(join(dir, 'edgeld.db'));
      const second = (b = await startTestBroker({ config: ON, dbPath: join(dir, 'edgeld.db') }));
      expect(second.broker.store.devices.delete('', 'b1')).toBe(true);
      await second.broker.listen();
      await second.broker.homeAssistant!.idle();
      expect(await retainedNow(second)).toEqual(['edgeld/ha/status', 'homeassistant/binary_sensor/edgeld/gateway/config']);
    } finally {
      await b?.close();
      b = undefined;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are all removed when the integration is turned off', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgeld-ha-'));
    try {
      await firstRun(join(dir, 'edgeld.db'));
      const off = (b = await startTestBroker({ dbPath: join(dir, 'edgeld.db') }));
      await off.broker.listen();
      expect(await retainedNow(off)).toEqual([]);
      expect(off.broker.store.journal.cursor('home-assistant')).toBeUndefined();
    } finally {
      await b?.close();
      b = undefined;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the integration off (the default)', () => {
  it('publishes no homeassistant/ or edgeld/ha/ topic and keeps no journal reader', async () => {
    const broker = (b = await startTestBroker());
    await broker.broker.listen();
    expect(broker.broker.homeAssistant).toBeUndefined();
    await registerBoiler(broker);
    await broker.broker.commands.idle();
    const ha = await listen(broker, ['homeassistant/#', 'edgeld/ha/#']);
    await ha.client.publishAsync('homeassistant/marker', 'end', { qos: 1 });
    await waitUntil(() => ha.last.has('homeassistant/marker'), 5_000, 'the marker');
    expect([...ha.last.keys()]).toEqual(['homeassistant/marker']);
    expect(broker.broker.store.journal.cursor('home-assistant')).toBeUndefined();
  });
});
