// With authentication on, a CONNECT whose will names a topic its client may not publish on is
// refused with CONNACK 5 (not authorized), as mosquitto 2 does, logged and counted, and not counted
// as a failed login; a will the client may publish is accepted and published when it goes.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/index.js';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../helpers/auth.js';
import { parseExposition } from '../helpers/metrics.js';
import { connectClient, refusedWith } from '../helpers/mqtt.js';
import { connectInbox, trySubscribe } from '../helpers/mqtt-inbox.js';

describe('wills checked at CONNECT', () => {
  let b: AuthBroker;
  let url: string;
  const secrets = new Map<string, string>();
  const lines: Array<Record<string, unknown>> = [];
  const metric = async (name: string, labels?: Record<string, string>): Promise<number | undefined> =>
    parseExposition((await b.request('GET', '/metrics')).text).value(name, labels);
  const dev1 = () => ({ clientId: 'dev1', username: 'dev1', password: secrets.get('dev1') ?? '' });
  const will = (topic: string) => ({ topic, payload: Buffer.from('offline'), qos: 1 as const, retain: true });

  beforeAll(async () => {
    b = await startAuthBroker({ log: createLogger('info', 'edgeld', (l) => lines.push(JSON.parse(l) as Record<string, unknown>)) }); // NOTE: one JSON object per line
    await b.broker.listen();
    url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    for (const deviceId of ['dev1', 'dev2']) {
      const reg = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId }, claims: { roles: [ADMIN_ROLE] } });
      expect(reg.status, reg.text).toBe(201);
      secrets.set(deviceId, reg.json.secret);
    }
  });
  afterAll(() => b.close());

  it('refuses a device whose retained will names another device\'s topic with CONNACK 5, logs and counts it', async () => {
    const failures = await metric('edgeld_login_failures_total', { channel: 'mqtt' });
    await expect(connectClient(url, { ...dev1(), will: will('ngsi/default/dev2/status') }, 3_000))
      .rejects.toMatchObject({ code: refusedWith(5) });
    await expect(connectClient(url, { ...dev1(), will: will('ngsi/default/dev2/attrs') }, 3_000))
      .rejects.toMatchObject({ code: refusedWith(5) });
    expect(await metric('edgeld_mqtt_wills_refused_total')).toBe(2);
    // Its credentials were right: not a failed login.
    expect(await metric('edgeld_login_failures_total', { channel: 'mqtt' })).toBe(failures);
    expect(lines.find((l) => l['msg'] === 'mqtt client refused: its will names a topic it may not publish on'))
      .toMatchObject({ level: 'warn', clientId: 'dev1', topic: 'ngsi/default/dev2/status' });
    // Nothing was retained on dev2's topic.
    const admin = await connectInbox(url, { username: 'root', password: await b.token('root', { roles: [ADMIN_ROLE] }) });
    expect(await trySubscribe(admin.client, 'ngsi/default/dev2/status')).toBe(true);
    await b.broker.publishLocal('ngsi/default/dev2/status', 'marker-1', 0);
    expect(await admin.before('ngsi/default/dev2/status', 'marker-1')).toEqual([]);
    await admin.end();
  });

  it('refuses a will on a topic only the broker publishes on, from a device or a subject', async () => {
    const before = await metric('edgeld_mqtt_wills_refused_total') ?? 0;
    await expect(connectClient(url, { ...dev1(), will: will('ngsi/default/dev1/cmd') }, 3_000))
      .rejects.toMatchObject({ code: refusedWith(5) });
    const bob = { username: 'bob', password: await b.token('bob') };
    await expect(connectClient(url, { ...bob, will: will('edgeld/notify/urn%3Angsi-ld%3AUser%3Aalice/x') }, 3_000)).rejects.toMatchObject({ code: refusedWith(5) });
    await expect(connectClient(url, { ...bob, will: will('$SYS/broker/x') }, 3_000)).rejects.toMatchObject({ code: refusedWith(5) });
    expect(await metric('edgeld_mqtt_wills_refused_total')).toBe(before + 3);
  });

  it('accepts a device\'s will on its own status topic, and publishes it when the device goes', async () => {
    const admin = await connectInbox(url, { username: 'root', password: await b.token('root', { roles: [ADMIN_ROLE] }) });
    expect(await trySubscribe(admin.client, 'ngsi/default/dev1/status')).toBe(true);
    const device = await connectClient(url, { ...dev1(), will: { ...will('ngsi/default/dev1/status'), retain: false } });
    // The connection ends without DISCONNECT: the will is due [MQTT-3.1.2-8].
    device.stream.destroy();
    expect(await admin.waitFor('ngsi/default/dev1/status', 'offline')).toEqual({ topic: 'ngsi/default/dev1/status', payload: 'offline' });
    device.end(true);
    await admin.end();
  });
});
