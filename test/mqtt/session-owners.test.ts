// With authentication on, a client id's session belongs to the principal that kept it: a device's id
// to the device, any other to the subject that connected with it. Another principal connecting with
// that client id gets CONNACK 5 (not authorized): no stored session, no queued message, and the
// connection holding the id now stays up. Each refusal is logged and counted.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/index.js';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../helpers/auth.js';
import { tempDir } from '../helpers/broker.js';
import { parseExposition } from '../helpers/metrics.js';
import { connectInbox, trySubscribe } from '../helpers/mqtt-inbox.js';
import { refusedWith } from '../helpers/mqtt.js';

type Line = Record<string, unknown>;

describe('MQTT sessions bound to their principal', () => {
  let b: AuthBroker;
  let url: string;
  let secret: string;
  const lines: Line[] = [];
  const takeovers = async (): Promise<number | undefined> =>
    parseExposition((await b.request('GET', '/metrics')).text).value('edgeld_mqtt_session_takeovers_refused_total');

  beforeAll(async () => {
    b = await startAuthBroker({ log: createLogger('info', 'edgeld', (l) => lines.push(JSON.parse(l) as Line)) });
    await b.broker.listen();
    url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    const reg = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId: 'dev1' }, claims: { roles: [ADMIN_ROLE] } });
    expect(reg.status, reg.text).toBe(201);
    secret = reg.json.secret;
  });
  afterAll(() => b.close());

  it('refuses a subject taking a device\'s client id (CONNACK 5): its queued command stays the device\'s, the online device is not kicked', async () => {
    const device = { clientId: 'default/dev1', username: 'default/dev1', password: secret, clean: false };
    const first = await connectInbox(url, device);
    expect(await trySubscribe(first.client, 'ngsi/default/dev1/cmd', 1)).toBe(true);
    await first.end();
    // A QoS 1 command queued while the device is offline.
    await b.broker.publishLocal('ngsi/default/dev1/cmd', '{"switch":"on"}', 1);
    const before = (await takeovers()) ?? 0;

    const bob = { clientId: 'default/dev1', username: 'bob', password: await b.token('bob'), clean: false };
    await expect(connectInbox(url, bob, 3_000)).rejects.toMatchObject({ code: refusedWith(5) });

    // The device finds its session and its command.
    const back = await connectInbox(url, device);
    expect(back.sessionPresent).toBe(true);
    expect(await back.waitFor('ngsi/default/dev1/cmd', '{"switch":"on"}')).toBeDefined();
    // While it is online, the same attempt leaves its connection up.
    await expect(connectInbox(url, bob, 3_000)).rejects.toMatchObject({ code: refusedWith(5) });
    await b.broker.publishLocal('ngsi/default/dev1/cmd', '{"switch":"off"}', 1);
    expect(await back.waitFor('ngsi/default/dev1/cmd', '{"switch":"off"}')).toBeDefined();
    expect(back.client.connected).toBe(true);
    await back.end();

    expect(((await takeovers()) ?? 0) - before).toBe(2);
    expect(lines.filter((l) => l['level'] === 'warn' && String(l['msg']).startsWith('mqtt client refused')).at(-1))
      .toMatchObject({ clientId: 'default/dev1', user: 'bob' });
  });

  it('refuses another subject taking a subject\'s client id (CONNACK 5): no sessionPresent, no queued notification', async () => {
    const alice = { clientId: 'alice-laptop', username: 'alice', password: await b.token('alice'), clean: false };
    const first = await connectInbox(url, alice);
    expect(await trySubscribe(first.client, 'edgeld/notify/alice/#', 1)).toBe(true);
    await first.end();
    await b.broker.publishLocal('edgeld/notify/alice/pin', '{"pin":1234}', 1);

    const bob = { clientId: 'alice-laptop', username: 'bob', password: await b.token('bob'), clean: false };
    await expect(connectInbox(url, bob, 3_000)).rejects.toMatchObject({ code: refusedWith(5) });
    // A clean session would discard hers: refused as well.
    await expect(connectInbox(url, { ...bob, clean: true }, 3_000)).rejects.toMatchObject({ code: refusedWith(5) });

    const back = await connectInbox(url, alice);
    expect(back.sessionPresent).toBe(true);
    expect(await back.waitFor('edgeld/notify/alice/pin', '{"pin":1234}')).toBeDefined();
    await back.end();
  });

  it('keeps the binding across a restart of the broker (stored with the session)', async () => {
    const dir = tempDir('edgeld-session-owner-');
    try {
      const dbPath = `${dir.path}/edgeld.db`;
      let c = await startAuthBroker({ dbPath });
      await c.broker.listen();
      const first = await connectInbox(`mqtt://127.0.0.1:${c.broker.mqttPort}`, { clientId: 'kiosk', username: 'alice', password: await c.token('alice'), clean: false });
      expect(await trySubscribe(first.client, 'plant/room1', 1)).toBe(true);
      await first.end();
      await c.close();
      c = await startAuthBroker({ dbPath });
      try {
        await c.broker.listen();
        const other = { clientId: 'kiosk', username: 'bob', password: await c.token('bob'), clean: false };
        await expect(connectInbox(`mqtt://127.0.0.1:${c.broker.mqttPort}`, other, 3_000)).rejects.toMatchObject({ code: refusedWith(5) });
      } finally {
        await c.close();
      }
    } finally {
      dir.remove();
    }
  });
});
