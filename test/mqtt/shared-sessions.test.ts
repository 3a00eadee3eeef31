// Shared subscriptions in the gateway: a persistent member keeps its membership across a restart
// (its subscription is in the SQLite session store) and finds the messages its group kept meanwhile;
// a shared filter is authorized as its filter is (the same ACL); the groups show in /metrics.

import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { connect, type MqttClient } from 'mqtt';
import { ADMIN_ROLE, startAuthBroker } from '../helpers/auth.js';
import { startTestBroker, tempDir, type TestBroker } from '../helpers/broker.js';
import { parseExposition } from '../helpers/metrics.js';
import { awaitConnack } from '../helpers/mqtt.js';
import { connectInbox, trySubscribe, type Inbox } from '../helpers/mqtt-inbox.js';
import { within } from '../helpers/process.js';

const LOOPBACK = { mqtt: { port: 0, host: '127.0.0.1' }, server: { port: 0, host: '127.0.0.1' }, metrics: { enabled: true } };

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function sharedMetrics(b: TestBroker): Promise<Record<'groups' | 'members' | 'dropped', number | undefined>> {
  const res = await b.request('GET', '/metrics');
  expect(res.status).toBe(200);
  const m = parseExposition(res.text);
  return { groups: m.value('edgeld_mqtt_shared_groups'), members: m.value('edgeld_mqtt_shared_members'), dropped: m.value('edgeld_mqtt_shared_dropped_total') };
}

/** A client whose first message (queued ones included) is awaited from before its CONNACK. */
async function connectFirst(url: string, clientId: string): Promise<{ client: MqttClient; first: () => Promise<string> }> {
  const client = connect(url, { clientId, clean: false, protocolVersion: 4, reconnectPeriod: 0 });
  closers.push(() => void client.end(true));
  const first = new Promise<string>((resolve) => client.once('message', (_t, p) => resolve(p.toString())));
  await awaitConnack(client, url, 5_000);
  return { client, first: () => within(first, 5_000, `a message for ${clientId}`) };
}

describe('shared subscriptions of the gateway', () => {
  it('keeps a persistent member across a restart: messages published before it is back wait for it', async () => {
    const dir = tempDir('edgeld-mqtt-shared-');
    closers.push(() => dir.remove());
    const dbPath = join(dir.path, 'edgeld.db');
    const first = await startTestBroker({ dbPath, config: LOOPBACK });
    await first.broker.listen();
    const before = await connectFirst(`mqtt://127.0.0.1:${first.broker.mqttPort}`, 'agent-1');
    expect(await trySubscribe(before.client, '$share/agents/site/#', 1)).toBe(true);
    expect(await sharedMetrics(first)).toEqual({ groups: 1, members: 1, dropped: 0 });
    await within(before.client.endAsync(), 5_000, 'DISCONNECT');
    await first.close();

    const second = await startTestBroker({ dbPath, config: LOOPBACK });
    closers.push(() => second.close());
    await second.broker.listen();
    // The member is known before it connects: the group keeps the message for it.
    expect(await sharedMetrics(second)).toEqual({ groups: 1, members: 1, dropped: 0 });
    await second.broker.publishLocal('site/a', 'while-away', 1);
    const url = `mqtt://127.0.0.1:${second.broker.mqttPort}`;
    const after = await connectFirst(url, 'agent-1');
    expect(await after.first()).toBe('while-away');
    // And it is a member of the group on this connection (its subscription restored, not sent again).
    const next = within(new Promise<string>((resolve) => after.client.once('message', (_t, p) => resolve(p.toString()))), 5_000, 'a live message');
    await second.broker.publishLocal('site/b', 'live', 1);
    expect(await next).toBe('live');
  });

  it('authorizes a shared filter as its filter: refused where the filter is, granted and delivered where it is not', async () => {
    const b = await startAuthBroker({ config: { metrics: { enabled: true } } });
    closers.push(() => b.close());
    await b.broker.listen();
    const url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    const inboxes: Inbox[] = [];
    closers.push(() => {
      for (const i of inboxes) i.client.end(true);
    });
    const as = async (username: string, password: string, clientId?: string): Promise<Inbox> => {
      const inbox = await connectInbox(url, { username, password, ...(clientId ? { clientId } : {}) });
      inboxes.push(inbox);
      return inbox;
    };
    const reg = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId: 'dev1' }, claims: { roles: [ADMIN_ROLE] } });
    expect(reg.status, reg.text).toBe(201);
    const device = await as('dev1', reg.json.secret, 'dev1');
    const bob = await as('bob', await b.token('bob'));
    const admin = await as('root', await b.token('root', { roles: [ADMIN_ROLE] }));

    expect(await trySubscribe(device.client, '$share/g/ngsi/default/other/#', 1)).toBe(false);
    expect(await trySubscribe(bob.client, '$share/g/ngsi/+/+/attrs', 1)).toBe(false);
    expect(await trySubscribe(bob.client, '$share/g/$SYS/#', 1)).toBe(false);
    expect(await trySubscribe(admin.client, '$share/g/ngsi/+/+/attrs', 1)).toBe(true);
    // The IoT Agent's filters are free topics: any authenticated client reads them.
    expect(await trySubscribe(bob.client, '$share/ulgroup//+/+/attrs', 1)).toBe(true);
    expect(await sharedMetrics(b)).toEqual({ groups: 2, members: 2, dropped: 0 });

    await device.client.publishAsync('ngsi/default/dev1/attrs', '{"temperature":21}', { qos: 1 });
    const got = await admin.waitFor('ngsi/default/dev1/attrs', '{"temperature":21}');
    expect(got.topic).toBe('ngsi/default/dev1/attrs');
  });

  it('carries the gateway\'s commands to a device subscribed through a shared subscription, followed to its PUBACK', async () => {
    const b = await startAuthBroker();
    closers.push(() => b.close());
    await b.broker.listen();
    const url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    const entity = 'urn:ngsi-ld:Valve:shared-1';
    const admin = { claims: { roles: [ADMIN_ROLE] } };
    expect((await b.as('alice', 'POST', '/ngsi-ld/v1/entities', { body: { id: entity, type: 'Valve' } })).status).toBe(201);
    const reg = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId: 'v1', entityId: entity, commands: [{ name: 'open' }] }, ...admin });
    expect(reg.status, reg.text).toBe(201);
    const device = await connectInbox(url, { clientId: 'v1', username: 'v1', password: reg.json.secret });
    closers.push(() => void device.client.end(true));
    expect(await trySubscribe(device.client, '$share/valves/ngsi/default/v1/cmd', 1)).toBe(true);
    const issued = await b.as('alice', 'POST', `/ngsi-ld/v1/entities/${encodeURIComponent(entity)}/attrs`, { body: { open: { type: 'Property', value: 'wide' } } });
    expect(issued.status, issued.text).toBe(204);
    const at = await within(new Promise<string>((resolve) => {
      const check = (): void => void (device.messages.length > 0 ? resolve(device.messages[0]!.payload) : setTimeout(check, 5));
      check();
    }), 5_000, 'the command at the device');
    expect(JSON.parse(at)).toMatchObject({ name: 'open', value: 'wide' });
    const status = async (): Promise<unknown> => (await b.as('root', 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent(entity)}`, admin)).json.open_status?.value;
    await within((async () => {
      while ((await status()) !== 'DELIVERED') await new Promise((r) => setTimeout(r, 10));
    })(), 5_000, 'DELIVERED');
  });
});
