// Every measurement message dropped is counted under its reason in
// edgeld_mqtt_measurements_dropped_total, wherever it is dropped (the access hook for a topic that is
// no measurement topic, ingestion for the rest), and its log line names the client id and the user
// as authenticated (null when anonymous).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/index.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../helpers/auth.js';
import { parseExposition } from '../helpers/metrics.js';
import { connectClient, publishAcked } from '../helpers/mqtt.js';

type Line = Record<string, unknown>;

/** A logger keeping its JSON lines, and the lines of dropped measurements among them. */
function capture(): { log: ReturnType<typeof createLogger>; drops(): Line[] } {
  const lines: Line[] = [];
  const log = createLogger('debug', 'edgeld', (l) => lines.push(JSON.parse(l) as Line));
  return { log, drops: () => lines.filter((l) => l['msg'] === 'mqtt measurement dropped') };
}

const dropped = async (b: TestBroker, reason: string): Promise<number | undefined> =>
  parseExposition((await b.request('GET', '/metrics')).text).value('edgeld_mqtt_measurements_dropped_total', { reason });

describe('measurements dropped, authentication off', () => {
  let b: TestBroker;
  const logs = capture();
  beforeAll(async () => {
    b = await startTestBroker({ config: { server: { port: 0, host: '127.0.0.1' } }, log: logs.log });
    await b.broker.listen();
  });
  afterAll(() => b.close());

  it('counts a message on a topic that is no measurement topic under reason="topic", and logs its client id', async () => {
    expect(await dropped(b, 'topic')).toBe(0);
    const client = await connectClient(`mqtt://127.0.0.1:${b.broker.mqttPort}`, { clientId: 'th-01' });
    try {
      // QoS 1: PUBACK comes once the message is stored or dropped.
      await publishAcked(client, 'ngsi/default/th-01/temperature', '21', { qos: 1 });
    } finally {
      await client.endAsync();
    }
    expect(await dropped(b, 'topic')).toBe(1);
    const metrics = parseExposition((await b.request('GET', '/metrics')).text);
    expect(metrics.value('edgeld_mqtt_measurements_received_total')).toBe(1);
    expect(logs.drops()).toEqual([expect.objectContaining({ clientId: 'th-01', user: null, reason: 'topic', topic: 'ngsi/default/th-01/temperature' })]);
  });

  it('logs the client id and user of a message dropped by ingestion', async () => {
    const client = await connectClient(`mqtt://127.0.0.1:${b.broker.mqttPort}`, { clientId: 'th-02' });
    try {
      await publishAcked(client, 'ngsi/default/th-02/attrs', 'not json', { qos: 1 });
    } finally {
      await client.endAsync();
    }
    expect(await dropped(b, 'not-json')).toBe(1);
    expect(logs.drops().at(-1)).toMatchObject({ clientId: 'th-02', user: null, reason: 'not-json', deviceId: 'th-02' });
  });
});

describe('measurements dropped, authentication on', () => {
  let b: AuthBroker;
  const logs = capture();
  let secret: string;
  beforeAll(async () => {
    b = await startAuthBroker({ config: { server: { port: 0, host: '127.0.0.1' } }, log: logs.log });
    await b.broker.listen();
    const reg = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId: 'meter-1' }, claims: { roles: [ADMIN_ROLE] } });
    expect(reg.status, reg.text).toBe(201);
    secret = reg.json.secret;
  });
  afterAll(() => b.close());

  it('names the token\'s subject as the user of a message on a bad topic', async () => {
    const client = await connectClient(`mqtt://127.0.0.1:${b.broker.mqttPort}`, { clientId: 'dash-1', username: 'dashboard', password: await b.token('alice') });
    try {
      await publishAcked(client, 'ngsi/default/m1/oops', '{}', { qos: 1 });
    } finally {
      await client.endAsync();
    }
    expect(await dropped(b, 'topic')).toBe(1);
    expect(logs.drops().at(-1)).toMatchObject({ clientId: 'dash-1', user: 'alice', reason: 'topic' });
  });

  it('names the device as the user of a message it may not publish', async () => {
    const client = await connectClient(`mqtt://127.0.0.1:${b.broker.mqttPort}`, { clientId: 'meter-1', username: 'meter-1', password: secret });
    try {
      await publishAcked(client, 'ngsi/default/meter-2/attrs', '{"energy":1}', { qos: 1 });
    } finally {
      await client.endAsync();
    }
    expect(await dropped(b, 'forbidden')).toBe(1);
    expect(logs.drops().at(-1)).toMatchObject({ clientId: 'meter-1', user: 'default/meter-1', reason: 'forbidden' });
  });
});
