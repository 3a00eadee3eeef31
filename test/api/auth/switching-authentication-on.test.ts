// Switching authentication on over a database used without it (behaviour §8; docs/auth.md
// "Switching authentication on"): its entities have no owner and are admin-only until an
// administrator grants rights on them; its subscriptions have no owner and are suspended (shown
// paused, with why) until an administrator adopts them by updating them; the start log counts both.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/lib/index.js';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../../helpers/auth.js';
import { startTestBroker } from '../../helpers/broker.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';

const E = '/ngsi-ld/v1/entities';
const SUBS = '/ngsi-ld/v1/subscriptions';
const P = '/ngsi-ld/v1/auth/permissions';
const ROOM = 'urn:ngsi-ld:Room:old1';
const ROOT = { roles: [ADMIN_ROLE] };

let dir: string;
let receiver: Receiver;
const opened: Array<{ close(): Promise<void> }> = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeld-authon-'));
  receiver = await startReceiver();
});

afterEach(async () => {
  for (const b of opened.splice(0)) await b.close();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

const temperature = (value: number) => ({ temperature: { type: 'Property', value } });

/** Runs the gateway without authentication: one Room and one subscription to the receiver, notified once. */
async function useWithoutAuthentication(dbPath: string): Promise<string> {
  const b = await startTestBroker({ dbPath });
  try {
    expect((await b.request('POST', E, { body: { id: ROOM, type: 'Room', ...temperature(18) } })).status).toBe(201);
    const sub = await b.request('POST', SUBS, {
      body: { type: 'Subscription', entities: [{ type: 'Room' }], notification: { endpoint: { uri: receiver.url(), accept: 'application/json' } } },
    });
    expect(sub.status, sub.text).toBe(201);
    expect((await b.request('PATCH', `${E}/${ROOM}/attrs`, { body: temperature(19) })).status).toBe(204);
    await receiver.waitFor(1);
    return sub.headers.get('location')!.split('/').pop()!;
  } finally {
    await b.close();
  }
}

/** The gateway again, over the same database, with authentication on; its log lines. */
async function startWithAuthentication(dbPath: string): Promise<{ b: AuthBroker; lines: string[] }> {
  const lines: string[] = [];
  const b = await startAuthBroker({ dbPath, log: createLogger('info', 'edgeld', (line) => lines.push(line)) });
  opened.push(b);
  return { b, lines };
}

describe('switching authentication on over a database used without it', () => {
  it('logs how many entities and subscriptions have no owner, in one line', async () => {
    const dbPath = join(dir, 'edgeld.db');
    await useWithoutAuthentication(dbPath);
    const { lines } = await startWithAuthentication(dbPath);
    const found = lines.map((l) => JSON.parse(l) as { level: string; msg: string; entities?: number; subscriptions?: number })
      .filter((l) => l.msg.includes('have no owner'));
    expect(found).toEqual([expect.objectContaining({
      level: 'warn', msg: '1 entities and 1 subscriptions have no owner: admin-only / suspended until adopted', entities: 1, subscriptions: 1,
    })]);
  });

  it('logs no such line when every entity and subscription has an owner, nor without authentication', async () => {
    const dbPath = join(dir, 'edgeld.db');
    const { b } = await startWithAuthentication(dbPath);
    expect((await b.as('alice', 'POST', E, { body: { id: 'urn:ngsi-ld:Room:a1', type: 'Room', ...temperature(1) } })).status).toBe(201);
    const made = await b.as('alice', 'POST', SUBS, {
      body: { type: 'Subscription', entities: [{ type: 'Room' }], notification: { endpoint: { uri: receiver.url(), accept: 'application/json' } } },
    });
    expect(made.status, made.text).toBe(201);
    await opened.pop()!.close();
    const again = await startWithAuthentication(dbPath);
    expect(again.lines.some((l) => l.includes('have no owner'))).toBe(false);
    const off: string[] = [];
    const plain = await startTestBroker({ dbPath: join(dir, 'off.db'), log: createLogger('info', 'edgeld', (line) => off.push(line)) });
    expect((await plain.request('POST', E, { body: { id: ROOM, type: 'Room', ...temperature(1) } })).status).toBe(201);
    await plain.close();
    expect(off.some((l) => l.includes('have no owner'))).toBe(false);
  });

  it('counts as owned an id owned by an earlier life of it, or by an own permission kept from an older version', async () => {
    const dbPath = join(dir, 'edgeld.db');
    await useWithoutAuthentication(dbPath);
    const { b } = await startWithAuthentication(dbPath);
    expect(b.broker.store.countOwnerlessEntities()).toBe(1);
    const again = 'urn:ngsi-ld:Room:again';
    expect((await b.as('alice', 'POST', E, { body: { id: again, type: 'Room', ...temperature(1) } })).status).toBe(201);
    expect((await b.as('alice', 'DELETE', `${E}/${again}`)).status).toBe(204);
    expect((await b.as('alice', 'POST', E, { body: { id: again, type: 'Room', ...temperature(2) } })).status).toBe(201);
    expect((await b.as('bob', 'GET', `${E}/${again}`)).status).toBe(403);
    expect((await b.as('alice', 'GET', `${E}/${again}`)).status).toBe(200);
    expect(b.broker.store.countOwnerlessEntities()).toBe(1);
    // As a version before owners lived in the entity rows kept them.
    b.broker.store.permissions.insert('', { id: 'urn:ngsi-ld:Permission:legacy', target: { id: ROOM }, assignee: 'bob', action: 'own', createdAt: 0, modifiedAt: 0 });
    expect((await b.as('bob', 'GET', `${E}/${ROOM}`)).status).toBe(200);
    expect(b.broker.store.countOwnerlessEntities()).toBe(0);
    expect(b.broker.store.countLiveEntities()).toBe(2);
  });

  it('makes entities without an owner admin-only until an administrator grants rights on them', async () => {
    const dbPath = join(dir, 'edgeld.db');
    await useWithoutAuthentication(dbPath);
    const { b } = await startWithAuthentication(dbPath);
    expect((await b.as('bob', 'GET', `${E}/${ROOM}`)).status).toBe(403);
    expect((await b.as('bob', 'PATCH', `${E}/${ROOM}/attrs`, { body: temperature(30) })).status).toBe(403);
    expect((await b.as('bob', 'GET', `${E}?type=Room`)).json).toEqual([]);
    expect((await b.as('root', 'GET', `${E}/${ROOM}`, { claims: ROOT })).status).toBe(200);
    // Only an administrator may grant on it: bob cannot grant himself anything.
    expect((await b.as('bob', 'POST', P, { body: { type: 'Permission', target: { id: ROOM }, assignee: 'bob', action: 'read' } })).status).toBe(403);
    // `own` is the service's alone (service interface 5 rule 6); `admin` gives the same rights.
    expect((await b.as('root', 'POST', P, { body: { type: 'Permission', target: { id: ROOM }, assignee: 'bob', action: 'own' }, claims: ROOT })).status).toBe(400);
    const granted = await b.as('root', 'POST', P, { body: { type: 'Permission', target: { id: ROOM }, assignee: 'bob', action: 'admin' }, claims: ROOT });
    expect(granted.status, granted.text).toBe(201);
    expect((await b.as('bob', 'GET', `${E}/${ROOM}`)).status).toBe(200);
    expect((await b.as('bob', 'PATCH', `${E}/${ROOM}/attrs`, { body: temperature(31) })).status).toBe(204);
    expect((await b.as('carol', 'GET', `${E}/${ROOM}`)).status).toBe(403);
    expect((await b.as('bob', 'POST', P, { body: { type: 'Permission', target: { id: ROOM }, assignee: 'carol', action: 'read' } })).status).toBe(201);
    expect((await b.as('carol', 'GET', `${E}/${ROOM}`)).status).toBe(200);
  });

  it('suspends a subscription without an owner (paused, with why) until an administrator adopts it by updating it', async () => {
    const dbPath = join(dir, 'edgeld.db');
    const id = await useWithoutAuthentication(dbPath);
    const { b } = await startWithAuthentication(dbPath);
    const shown = await b.as('root', 'GET', `${SUBS}/${id}`, { claims: ROOT });
    expect(shown.json).toMatchObject({ status: 'paused', statusReason: expect.stringContaining('no owner') });
    // Its changes are not notified: the cursor passes them with nothing sent.
    expect((await b.as('root', 'PATCH', `${E}/${ROOM}/attrs`, { body: temperature(20), claims: ROOT })).status).toBe(204);
    await b.broker.notifier.idle();
    expect(receiver.received).toHaveLength(1);
    // Nobody else may adopt it.
    expect((await b.as('bob', 'PATCH', `${SUBS}/${id}`, { body: { description: 'mine' } })).status).toBe(403);
    const adopted = await b.as('root', 'PATCH', `${SUBS}/${id}`, { body: { description: 'adopted' }, claims: ROOT });
    expect(adopted.status, adopted.text).toBe(204);
    const after = (await b.as('root', 'GET', `${SUBS}/${id}`, { claims: ROOT })).json;
    expect(after.status).toBe('active');
    expect(after).not.toHaveProperty('statusReason');
    // The administrator owns it now (stored as its owner), and it is notified again.
    const owned = b.broker.store.subscriptions.list('', { limit: 10, offset: 0, count: false }, 'root').items;
    expect(owned.map((s) => s.id)).toEqual([id]);
    expect((await b.as('root', 'PATCH', `${E}/${ROOM}/attrs`, { body: temperature(21), claims: ROOT })).status).toBe(204);
    const [, second] = await receiver.waitFor(2);
    expect(second!.body.data).toEqual([expect.objectContaining({ id: ROOM, temperature: expect.objectContaining({ value: 21 }) })]);
    // statusReason is read-only.
    expect((await b.as('root', 'PATCH', `${SUBS}/${id}`, { body: { statusReason: 'x' }, claims: ROOT })).status).toBe(400);
  });

  it('changes nothing without authentication: the subscription is notified and shown active', async () => {
    const dbPath = join(dir, 'edgeld.db');
    const id = await useWithoutAuthentication(dbPath);
    const b = await startTestBroker({ dbPath });
    opened.push(b);
    expect((await b.request('GET', `${SUBS}/${id}`)).json).toMatchObject({ status: 'active' });
    expect((await b.request('GET', `${SUBS}/${id}`)).json).not.toHaveProperty('statusReason');
    expect((await b.request('PATCH', `${E}/${ROOM}/attrs`, { body: temperature(22) })).status).toBe(204);
    await receiver.waitFor(2);
  });
});
