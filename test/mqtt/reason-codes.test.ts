// MQTT 5 reason codes on refusals: a device learns why (CONNACK, PUBACK with its Reason String, SUBACK)
// and keeps its connection after a refused PUBLISH; MQTT 3.1.1 clients keep their behaviour (their
// own tests).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { IPubackPacket } from 'mqtt-packet';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../helpers/auth.js';
import { startTestBroker, tempDir } from '../helpers/broker.js';
import { connectClient, endClient } from '../helpers/mqtt.js';
import { within } from '../helpers/process.js';
import { createLogger } from '../../src/lib/index.js';

interface Ack {
  code: number;
  reasonString: string | undefined;
}

/** Publishes at QoS 1 and resolves with the PUBACK's reason code and Reason String. */
function publishAck(client: MqttClient, topic: string, payload: string, opts: { qos?: 1 | 2; userProperties?: Record<string, string> } = {}): Promise<Ack> {
  return within(new Promise<Ack>((resolve) => {
    const properties = opts.userProperties ? { properties: { userProperties: opts.userProperties } } : {};
    client.publish(topic, payload, { qos: opts.qos ?? 1, ...properties }, (err, packet) => {
      const ack = packet as IPubackPacket | undefined;
      const code = err && 'code' in err && typeof err.code === 'number' ? err.code : ack?.reasonCode ?? 0;
      resolve({ code, reasonString: ack?.properties?.reasonString });
    });
  }), 5_000, `PUBACK on ${topic}`);
}

describe('MQTT 5 reason codes with authentication on', () => {
  let b: AuthBroker;
  let url: string;
  let secret: string;
  const open: MqttClient[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const device = async (): Promise<MqttClient> => {
    const c = await connectClient(url, { protocolVersion: 5, clientId: 'default/rc1', username: 'default/rc1', password: secret });
    open.push(c);
    return c;
  };

  beforeAll(async () => {
    b = await startAuthBroker({ log: createLogger('debug', 'edgeld', (l) => lines.push(JSON.parse(l) as Record<string, unknown>)) }); // NOTE: one JSON object per line
    await b.broker.listen();
    url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    for (const deviceId of ['rc1', 'rc2']) {
      const reg = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId }, claims: { roles: [ADMIN_ROLE] } });
      expect(reg.status, reg.text).toBe(201);
      if (deviceId === 'rc1') secret = reg.json.secret;
    }
  });
  afterAll(async () => {
    for (const c of open) c.end(true);
    await b.close();
  });

  it('refuses bad credentials with CONNACK 0x86 and a client id naming another device with 0x85', async () => {
    const wrong = connectClient(url, { protocolVersion: 5, clientId: 'default/rc1', username: 'default/rc1', password: 'not-the-secret' });
    await expect(wrong).rejects.toMatchObject({ code: 0x86 });
    const other = connectClient(url, { protocolVersion: 5, clientId: 'default/rc2', username: 'default/rc1', password: secret });
    await expect(other).rejects.toMatchObject({ code: 0x85 });
  });

  it('acknowledges a stored measurement with 0x00, and refuses with the reason: payload 0x99, topic 0x90, another device 0x87; the connection stays', async () => {
    const c = await device();
    expect((await publishAck(c, 'ngsi/default/rc1/attrs', '{"temperature":21}')).code).toBe(0);
    const notJson = await publishAck(c, 'ngsi/default/rc1/attrs', 'twenty-one');
    expect(notJson.code).toBe(0x99);
    expect(notJson.reasonString).toBeTruthy();
    const badTopic = await publishAck(c, 'ngsi/default/rc1/nothing-here', '{}');
    expect(badTopic.code).toBe(0x90);
    const other = await publishAck(c, 'ngsi/default/rc2/attrs', '{"temperature":5}');
    expect(other.code).toBe(0x87);
    expect(other.reasonString).toContain('device');
    // A QoS 2 refusal comes on the PUBREC.
    expect((await publishAck(c, 'ngsi/default/rc1/attrs', '[1,2]', { qos: 2 })).code).toBe(0x99);
    // Still connected, still storing.
    expect(c.connected).toBe(true);
    expect((await publishAck(c, 'ngsi/default/rc1/attrs', '{"temperature":22}')).code).toBe(0);
    const entity = await b.as('root', 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent('urn:ngsi-ld:Device:rc1')}`, { claims: { roles: [ADMIN_ROLE] } });
    expect(entity.json.temperature.value).toBe(22);
    expect(b.broker.mqttIngest.stats().dropped['not-json']).toBeGreaterThanOrEqual(1);
  });

  it('writes the User Properties of a device\'s publish into the log line of its measurement, stored or dropped', async () => {
    const c = await device();
    expect((await publishAck(c, 'ngsi/default/rc1/attrs', '{"temperature":23}', { userProperties: { batch: 'b-17' } })).code).toBe(0);
    expect((await publishAck(c, 'ngsi/default/rc1/attrs', 'nope', { userProperties: { batch: 'b-18' } })).code).toBe(0x99);
    expect(lines.find((l) => l['msg'] === 'mqtt measurement stored')).toMatchObject({ level: 'debug', deviceId: 'rc1', userProperties: { batch: 'b-17' } });
    expect(lines.find((l) => l['msg'] === 'mqtt measurement dropped' && l['reason'] === 'not-json' && l['userProperties'] !== undefined))
      .toMatchObject({ userProperties: { batch: 'b-18' } });
  });

  it('refuses a publish on a topic only the broker publishes on with 0x87 and keeps the connection', async () => {
    const c = await device();
    const forged = await publishAck(c, 'ngsi/default/rc1/cmd', '{"id":"x"}');
    expect(forged.code).toBe(0x87);
    expect(c.connected).toBe(true);
  });

  it('refuses a subscription to another device\'s topics with SUBACK 0x87', async () => {
    const c = await device();
    // NOTE: mqtt.js rejects a SUBACK with a failure code, the SUBACK attached.
    const refused: unknown = await c.subscribeAsync({ 'ngsi/default/rc2/cmd': { qos: 1 }, 'ngsi/default/rc1/cmd': { qos: 1 } }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ packet: { granted: [0x87, 1] } });
  });
});

describe('MQTT 5 reason codes with the disk budget reached', () => {
  const dir = tempDir('edgeld-rc-disk-');
  afterAll(() => dir.remove());

  it('refuses a QoS 1 measurement with PUBACK 0x97 (quota exceeded) at once and keeps the connection', async () => {
    const b = await startTestBroker({ dbPath: `${dir.path}/edgeld.db`, config: { storage: { minFreeBytes: Number.MAX_SAFE_INTEGER } } });
    try {
      await b.broker.listen();
      const c = await connectClient(`mqtt://127.0.0.1:${b.broker.mqttPort}`, { protocolVersion: 5 });
      const ack = await publishAck(c, 'ngsi/default/meter1/attrs', JSON.stringify({ energy: 6 }));
      expect(ack.code).toBe(0x97);
      expect(c.connected).toBe(true);
      expect(b.broker.mqttIngest.stats().dropped['disk-full']).toBe(1);
      await endClient(c);
    } finally {
      await b.close();
    }
  });
});
