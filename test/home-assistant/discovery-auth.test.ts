// Home Assistant discovery with authentication on: Home Assistant connects with a token of the admin
// role and reads the configs, the states and the devices' status topics; a subject without the role
// reads no state; a command from Home Assistant's topics is a write of the publishing subject, so one
// without write permission on the entity issues none, the entity's owner does; a device publishing
// there is refused.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../helpers/auth.js';
import { connectInbox, trySubscribe, type Inbox } from '../helpers/mqtt-inbox.js';
import { mqttVersion, publishAcked } from '../helpers/mqtt.js';
import { waitUntil } from '../helpers/fake-cloud.js';

const ENTITY = 'urn:ngsi-ld:Boiler:alice-1';
const STATE = 'edgeld/ha/default/b1/state';
const POWER_SET = 'edgeld/ha/default/b1/power/set';
const admin = { claims: { roles: [ADMIN_ROLE] } };

let b: AuthBroker;
let url: string;
let secret: string;
const inboxes: Inbox[] = [];

const connectAs = async (sub: string, roles: string[] = []): Promise<Inbox> => {
  const inbox = await connectInbox(url, { clientId: `${sub}-client`, username: sub, password: await b.token(sub, { roles }) });
  inboxes.push(inbox);
  return inbox;
};
const recent = async (): Promise<Array<{ name: string; value: unknown }>> =>
  (await b.as('root', 'GET', `/edgeld/v1/commands?entity=${encodeURIComponent(ENTITY)}`, admin)).json.recent;

beforeAll(async () => {
  b = await startAuthBroker({
    config: {
      application: { lockout: { ...defaultConfig().application.lockout, enabled: false } },
      integrations: { homeAssistant: { enabled: true, discoveryPrefix: 'homeassistant', nodeId: 'edgeld' } },
    },
  });
  await b.broker.listen();
  url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
  expect((await b.as('alice', 'POST', '/ngsi-ld/v1/entities', { body: { id: ENTITY, type: 'Boiler', power: { type: 'Property', value: false } } })).status).toBe(201);
  const reg = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId: 'b1', entityId: ENTITY, commands: [{ name: 'power' }] }, ...admin });
  expect(reg.status, reg.text).toBe(201);
  secret = reg.json.secret;
});

afterAll(async () => {
  for (const i of inboxes) i.client.end(true);
  await b.close();
});

describe('Home Assistant with authentication', () => {
  it('reads the configs, the states and the status topics with a token of the admin role', async () => {
    const ha = await connectAs('homeassistant', [ADMIN_ROLE]);
    for (const filter of ['homeassistant/#', 'edgeld/ha/#', 'ngsi/+/+/status']) expect(await trySubscribe(ha.client, filter, 1)).toBe(true);
    await ha.waitFor(STATE, JSON.stringify({ power: false }));
    expect(ha.messages.some((m) => m.topic === 'homeassistant/switch/edgeld/default_b1_power/config')).toBe(true);
  });

  it('writes no command for a subject without write permission; the owner\'s command is issued', async () => {
    const ha = inboxes[0]!;
    const bob = await connectAs('bob');
    await bob.client.publishAsync(POWER_SET, 'ON', { qos: 1 });
    const alice = await connectAs('alice');
    await alice.client.publishAsync(POWER_SET, 'ON', { qos: 1 });
    await ha.waitFor(STATE, JSON.stringify({ power: true }));
    await b.broker.commands.idle();
    expect(await recent()).toMatchObject([{ name: 'power', value: true }]);
  });

  it('delivers no state to a subject without the admin role', async () => {
    const bob = await connectAs('bob2');
    expect(await trySubscribe(bob.client, 'edgeld/ha/#', 1)).toBe(true);
    await b.as('alice', 'PATCH', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}/attrs`, { body: { power: { type: 'Property', value: false } } });
    await inboxes[0]!.waitFor(STATE, JSON.stringify({ power: false }));
    await bob.client.subscribeAsync('bob2/marker', { qos: 1 });
    await bob.client.publishAsync('bob2/marker', 'end', { qos: 1 });
    expect((await bob.before('bob2/marker', 'end')).filter((m) => m.topic.startsWith('edgeld/ha/'))).toEqual([]);
  });

  it('refuses a device publishing on Home Assistant\'s command topics', async () => {
    const before = (await recent()).length;
    const device = await connectInbox(url, { clientId: 'default/b1', username: 'default/b1', password: secret });
    inboxes.push(device);
    // Refused: acknowledged at MQTT 3.1.1 (no negative acknowledgement), PUBACK 0x87 at MQTT 5.
    expect(await publishAcked(device.client, POWER_SET, 'OFF', { qos: 1 })).toBe(mqttVersion() === 5 ? 0x87 : 0);
    await b.as('alice', 'PATCH', `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY)}/attrs`, { body: { power: { type: 'Property', value: true } } });
    await waitUntil(async () => (await recent()).length === before + 1, 5_000, 'alice\'s command');
    expect((await recent())[0]).toMatchObject({ name: 'power', value: true });
  });
});
