// Commands with authentication on (edge.md §6): issuing a command is a write of the entity and needs
// write permission on it; a device subscribes only to its own cmd topic and answers only on its own
// cmdexe topic; an anonymous client cannot connect at all. JWTs minted with jose, devices with secrets.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../helpers/auth.js';
import { connectInbox, trySubscribe, type Inbox } from '../helpers/mqtt-inbox.js';
import { mqttVersion, publishAcked, refusedWith } from '../helpers/mqtt.js';
import { waitUntil } from '../helpers/fake-cloud.js';

const ENTITY = 'urn:ngsi-ld:Valve:alice-1';
const admin = { claims: { roles: [ADMIN_ROLE] } };

let b: AuthBroker;
let url: string;
const secrets: Record<string, string> = {};
const inboxes: Inbox[] = [];

const connectDevice = async (deviceId: string): Promise<Inbox> => {
  const inbox = await connectInbox(url, { clientId: `default/${deviceId}`, username: `default/${deviceId}`, password: secrets[deviceId]! });
  inboxes.push(inbox);
  return inbox;
};
const issue = (sub: string, value: unknown) =>
  b.as(sub, 'POST', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}/attrs`, { body: { open: { type: 'Property', value } } });
const status = async (): Promise<unknown> => (await b.as('root', 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}`, admin)).json.open_status?.value;

beforeAll(async () => {
  b = await startAuthBroker({ config: { application: { lockout: { ...defaultConfig().application.lockout, enabled: false } } } });
  await b.broker.listen();
  url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
  // alice creates (and so owns) the valve's entity; an administrator registers the device writing it.
  expect((await b.as('alice', 'POST', '/ngsi-ld/v1/entities', { body: { id: ENTITY, type: 'Valve' } })).status).toBe(201);
  for (const [deviceId, body] of [['v1', { entityId: ENTITY, commands: [{ name: 'open' }] }], ['v2', {}]] as const) {
    const reg = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId, ...body }, ...admin });
    expect(reg.status, reg.text).toBe(201);
    secrets[deviceId] = reg.json.secret;
  }
});

afterAll(async () => {
  for (const i of inboxes) i.client.end(true);
  await b.close();
});

describe('commands with authentication', () => {
  it('refuses the command of a subject without write permission on the entity, and dispatches nothing', async () => {
    const res = await issue('bob', 'bob');
    expect([403, 404]).toContain(res.status);
    await b.broker.commands.idle();
    expect(b.broker.commands.stats().issued).toBe(0);
  });

  it('lets a device subscribe to its own cmd topic only', async () => {
    const v1 = await connectDevice('v1');
    expect(await trySubscribe(v1.client, 'ngsi/default/v1/cmd', 1)).toBe(true);
    expect(await trySubscribe(v1.client, 'ngsi/default/v2/cmd', 1)).toBe(false);
    expect(await trySubscribe(v1.client, 'ngsi/+/+/cmd', 1)).toBe(false);
  });

  it('sends the command of the entity\'s owner to its device; only that device\'s answer on its own cmdexe counts', async () => {
    const v1 = inboxes[0]!;
    const v2 = await connectDevice('v2');
    expect(await trySubscribe(v2.client, 'ngsi/default/v2/cmd', 1)).toBe(true);
    expect((await issue('alice', 'wide')).status).toBe(204);
    await waitUntil(() => v1.messages.some((m) => m.topic === 'ngsi/default/v1/cmd'), 5_000, 'the command at v1');
    const cmd = JSON.parse(v1.messages.find((m) => m.topic === 'ngsi/default/v1/cmd')!.payload) as { id: string; value: unknown };
    expect(cmd.value).toBe('wide');
    await waitUntil(async () => (await status()) === 'DELIVERED', 5_000, 'DELIVERED');
    // Another device answering on v1's cmdexe, or on its own with v1's command id: neither counts.
    await publishAcked(v2.client, 'ngsi/default/v1/cmdexe', JSON.stringify({ id: cmd.id, status: 'ERROR' }), { qos: 1 });
    await publishAcked(v2.client, 'ngsi/default/v2/cmdexe', JSON.stringify({ id: cmd.id, status: 'ERROR' }), { qos: 1 });
    expect(await status()).toBe('DELIVERED');
    expect(b.broker.commands.stats().dropped.foreign).toBe(1);
    // An answer of the device on its own topic does.
    await publishAcked(v1.client, 'ngsi/default/v1/cmdexe', JSON.stringify({ id: cmd.id, status: 'OK' }), { qos: 1 });
    expect(await status()).toBe('OK');
    // v2 never saw v1's command.
    expect(v2.messages.filter((m) => m.topic.endsWith('/cmd'))).toEqual([]);
  });

  it('disconnects a device that publishes on a cmd topic (the broker\'s only); at MQTT 5 refuses it with PUBACK 0x87 instead', async () => {
    const v2 = await connectDevice('v2');
    const forged = JSON.stringify({ id: 'forged', name: 'open', value: 1 });
    if (mqttVersion() === 5) {
      expect(await publishAcked(v2.client, 'ngsi/default/v1/cmd', forged, { qos: 1 })).toBe(0x87);
      expect(v2.client.connected).toBe(true);
      return;
    }
    const closed = new Promise<void>((resolve) => v2.client.once('close', () => resolve()));
    v2.client.publish('ngsi/default/v1/cmd', forged, { qos: 1 });
    await closed;
  });

  it('refuses anonymous connections', async () => {
    await expect(connectInbox(url, {}, 3_000)).rejects.toMatchObject({ code: refusedWith(4) });
  });
});
