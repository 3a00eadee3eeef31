// Notifications of context source registration subscriptions through the real app, its journal
// and notifier, to a real receiver on 127.0.0.1 (NGSI-LD §5.11.7, §5.3.2): the initial notification,
// each trigger (created, updated into and out of a match, deleted, expired by time), the parts of a
// registration shown, status members, periodic notifications, and tenants.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestBroker, T0, type TestBroker } from '../../helpers/broker.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';

const S = '/ngsi-ld/v1/csourceSubscriptions';
const R = '/ngsi-ld/v1/csourceRegistrations';
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
const REG = 'urn:ngsi-ld:ContextSourceRegistration:r1';

let b: TestBroker;
let receiver: Receiver;

beforeEach(async () => {
  receiver = await startReceiver();
  b = await startTestBroker({ config: { notifications: { retryBase: 5, retryMax: 20, maxAttempts: 50, timeout: 2_000 } } });
});

afterEach(async () => {
  await b.close();
  await receiver.close();
});

async function subscribe(extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<string> {
  const id = `urn:ngsi-ld:Subscription:${Math.random().toString(36).slice(2)}`;
  const res = await b.request('POST', S, {
    headers,
    body: { id, type: 'Subscription', entities: [{ type: 'Vehicle' }], notification: { endpoint: { uri: receiver.url(), accept: 'application/json' } }, ...extra },
  });
  expect(res.status, res.text).toBe(201);
  return id;
}

function reg(id: string, type: string, more: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, type: 'ContextSourceRegistration', endpoint: 'http://source.example:1026', information: [{ entities: [{ type }], propertyNames: ['speed'] }], ...more };
}

async function register(id: string, type: string, more: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<void> {
  const res = await b.request('POST', R, { body: reg(id, type, more), headers });
  expect(res.status, res.text).toBe(201);
}

async function patchReg(id: string, body: Record<string, unknown>): Promise<void> {
  const res = await b.request('PATCH', `${R}/${id}`, { body });
  expect(res.status, res.text).toBe(204);
}

const reasons = (): unknown[] => receiver.accepted().map((r) => r.body.triggerReason);

describe('registration changes notify registration subscriptions [§5.11.7]', () => {
  it('sends a ContextSourceNotification with newlyMatching when a matching registration is created [§5.3.2]', async () => {
    const sub = await subscribe();
    await register(REG, 'Vehicle');
    const [n] = await receiver.waitFor(1);
    expect(n!.body).toMatchObject({ type: 'ContextSourceNotification', subscriptionId: sub, notifiedAt: new Date(T0).toISOString(), triggerReason: 'newlyMatching' });
    expect(n!.body.id).toMatch(/^urn:ngsi-ld:Notification:/);
    expect(n!.body.data).toEqual([expect.objectContaining({ id: REG, type: 'ContextSourceRegistration', endpoint: 'http://source.example:1026' })]);
    expect(n!.headers['content-type']).toMatch(/^application\/json/);
    expect(n!.headers['link']).toContain(CORE);
  });

  it('does not notify for a registration that does not match', async () => {
    await subscribe();
    await register('urn:ngsi-ld:ContextSourceRegistration:bus', 'Bus');
    await register(REG, 'Vehicle');
    const all = await receiver.waitFor(1);
    await b.broker.notifier.idle();
    expect(all.map((r) => r.body.data[0].id)).toEqual([REG]);
    expect(receiver.received).toHaveLength(1);
  });

  it('tells updated, then noLongerMatching when an update takes it out of the match, then newlyMatching again', async () => {
    await subscribe();
    await register(REG, 'Vehicle');
    await receiver.waitFor(1);
    await patchReg(REG, { description: 'second' });
    await receiver.waitFor(2);
    await patchReg(REG, { information: [{ entities: [{ type: 'Bus' }] }] });
    await receiver.waitFor(3);
    await patchReg(REG, { information: [{ entities: [{ type: 'Vehicle' }] }] });
    await receiver.waitFor(4);
    expect(reasons()).toEqual(['newlyMatching', 'updated', 'noLongerMatching', 'newlyMatching']);
    expect(receiver.accepted()[1]!.body.data[0].description).toBe('second');
    // What no longer matches is shown as it matched last.
    expect(receiver.accepted()[2]!.body.data[0].information).toEqual([{ entities: [{ type: 'Vehicle' }], propertyNames: ['speed'] }]);
  });

  it('tells noLongerMatching when a matching registration is deleted', async () => {
    await subscribe();
    await register(REG, 'Vehicle');
    await receiver.waitFor(1);
    expect((await b.request('DELETE', `${R}/${REG}`)).status).toBe(204);
    await receiver.waitFor(2);
    expect(reasons()).toEqual(['newlyMatching', 'noLongerMatching']);
    expect(receiver.accepted()[1]!.body.data[0].id).toBe(REG);
  });

  it('tells noLongerMatching once when a registration expires by time, with no request [§5.2.9 expiresAt]', async () => {
    await subscribe();
    await register(REG, 'Vehicle', { expiresAt: new Date(T0 + 60_000).toISOString() });
    await receiver.waitFor(1);
    expect(b.broker.registrations.expire(T0 + 30_000)).toBe(0);
    b.clock.set(T0 + 61_000);
    expect(b.broker.registrations.expire(b.clock.now())).toBe(1);
    expect(b.broker.registrations.expire(b.clock.now())).toBe(0);
    await receiver.waitFor(2);
    await b.broker.notifier.idle();
    expect(reasons()).toEqual(['newlyMatching', 'noLongerMatching']);
    expect((await b.request('GET', `${R}/${REG}`)).status).toBe(404);
  });

  it('the scheduled expiry job notices an expiry once the broker runs, with no call of ours', async () => {
    await subscribe();
    await register(REG, 'Vehicle', { expiresAt: new Date(T0 + 60_000).toISOString() });
    await receiver.waitFor(1);
    b.clock.set(T0 + 61_000);
    await b.broker.listen();
    // The job runs on notifications.periodic-schedule (every second).
    const all = await receiver.waitFor(2, { ms: 5_000 });
    expect(all[1]!.body).toMatchObject({ triggerReason: 'noLongerMatching', data: [{ id: REG }] });
  });

  it('shows only the RegistrationInfo elements that match the subscription', async () => {
    await subscribe();
    await register(REG, 'Vehicle', { information: [{ entities: [{ type: 'Bus' }] }, { entities: [{ type: 'Vehicle' }], propertyNames: ['speed'] }] });
    const [n] = await receiver.waitFor(1);
    expect(n!.body.data[0].information).toEqual([{ entities: [{ type: 'Vehicle' }], propertyNames: ['speed'] }]);
  });

  it('matches watchedAttributes, q and csf on registration properties, and geoQ on location', async () => {
    await subscribe({ watchedAttributes: ['speed'], q: 'brand=="A"' });
    await register('urn:ngsi-ld:ContextSourceRegistration:other-attr', 'Vehicle', { information: [{ entities: [{ type: 'Vehicle' }], propertyNames: ['fuel'] }], brand: 'A' });
    await register('urn:ngsi-ld:ContextSourceRegistration:other-brand', 'Vehicle', { brand: 'B' });
    await register(REG, 'Vehicle', { brand: 'A' });
    const [n] = await receiver.waitFor(1);
    await b.broker.notifier.idle();
    expect(n!.body.data[0].id).toBe(REG);
    expect(receiver.received).toHaveLength(1);
  });

  it('matches geoQ against the registration location', async () => {
    await subscribe({ geoQ: { georel: 'within', geometry: 'Polygon', coordinates: [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]] } });
    await register('urn:ngsi-ld:ContextSourceRegistration:far', 'Vehicle', { location: { type: 'Point', coordinates: [50, 50] } });
    await register(REG, 'Vehicle', { location: { type: 'Point', coordinates: [5, 5] } });
    const [n] = await receiver.waitFor(1);
    await b.broker.notifier.idle();
    expect(n!.body.data[0].id).toBe(REG);
    expect(receiver.received).toHaveLength(1);
  });

  it('matches temporalQ on observedAt against the observationInterval', async () => {
    await subscribe({ temporalQ: { timerel: 'after', timeAt: '2020-06-01T00:00:00Z', timeproperty: 'observedAt' } });
    await register('urn:ngsi-ld:ContextSourceRegistration:none', 'Vehicle');
    await register(REG, 'Vehicle', { observationInterval: { startAt: '2020-01-01T00:00:00Z', endAt: '2021-01-01T00:00:00Z' } });
    const [n] = await receiver.waitFor(1);
    await b.broker.notifier.idle();
    expect(n!.body.data[0].id).toBe(REG);
    expect(receiver.received).toHaveLength(1);
  });

  it('a paused or expired subscription notifies nothing', async () => {
    await subscribe({ isActive: false });
    await subscribe({ expiresAt: new Date(T0 + 1_000).toISOString() });
    b.clock.set(T0 + 2_000);
    await register(REG, 'Vehicle');
    await b.broker.notifier.idle();
    expect(receiver.received).toHaveLength(0);
  });
});

describe('notifications of what matches when a subscription is written [§5.11.7]', () => {
  it('notifies every matching registration on creation, and again on an update', async () => {
    await register(REG, 'Vehicle');
    await register('urn:ngsi-ld:ContextSourceRegistration:bus', 'Bus');
    const sub = await subscribe();
    const [first] = await receiver.waitFor(1);
    expect(first!.body).toMatchObject({ subscriptionId: sub, triggerReason: 'newlyMatching' });
    expect(first!.body.data.map((r: { id: string }) => r.id)).toEqual([REG]);
    const patched = await b.request('PATCH', `${S}/${sub}`, { body: { entities: [{ type: 'Vehicle' }, { type: 'Bus' }] } });
    expect(patched.status, patched.text).toBe(204);
    const [, second] = await receiver.waitFor(2);
    expect(second!.body.data.map((r: { id: string }) => r.id)).toEqual([REG, 'urn:ngsi-ld:ContextSourceRegistration:bus']);
  });

  it('notifies nothing on creation when nothing matches', async () => {
    await subscribe();
    await b.broker.notifier.idle();
    expect(receiver.received).toHaveLength(0);
  });

  it('a periodic subscription notifies what matches at creation and each timeInterval [§5.2.12 timeInterval]', async () => {
    await register(REG, 'Vehicle');
    await subscribe({ timeInterval: 10 });
    await receiver.waitFor(1);
    // A change does not notify a periodic subscription.
    await patchReg(REG, { description: 'x' });
    await b.broker.notifier.idle();
    expect(receiver.received).toHaveLength(1);
    expect(await b.broker.notifier.runPeriodic(T0 + 5_000)).toBe(0);
    expect(await b.broker.notifier.runPeriodic(T0 + 10_000)).toBe(1);
    const all = await receiver.waitFor(2);
    expect(all[1]!.body.data[0]).toMatchObject({ id: REG, description: 'x' });
  });
});

describe('delivery status of a registration subscription [§5.2.14]', () => {
  it('records timesSent, lastNotification and lastSuccess with status ok', async () => {
    const sub = await subscribe();
    await register(REG, 'Vehicle');
    await receiver.waitFor(1);
    await b.broker.notifier.idle();
    const got = await b.request('GET', `${S}/${sub}`);
    expect(got.json.notification).toMatchObject({ status: 'ok', timesSent: 1, lastNotification: new Date(T0).toISOString(), lastSuccess: new Date(T0).toISOString() });
    expect(got.json.status).toBe('active');
  });

  it('records a failure with status failed, and retries until the receiver answers', async () => {
    receiver.respondWith((i) => (i < 2 ? 500 : 200));
    const sub = await subscribe();
    await register(REG, 'Vehicle');
    await receiver.waitFor(1, { accepted: true });
    await b.broker.notifier.idle();
    const got = await b.request('GET', `${S}/${sub}`);
    expect(got.json.notification).toMatchObject({ status: 'ok', timesSent: 3, lastFailure: new Date(T0).toISOString() });
    expect(receiver.received.map((r) => r.status)).toEqual([500, 500, 200]);
  });
});

describe('tenants [§4.14]', () => {
  it('a registration of one tenant notifies only the subscriptions of that tenant, with NGSILD-Tenant', async () => {
    await subscribe({}, { 'NGSILD-Tenant': 'east' });
    await register('urn:ngsi-ld:ContextSourceRegistration:default', 'Vehicle');
    await register(REG, 'Vehicle', {}, { 'NGSILD-Tenant': 'east' });
    const [n] = await receiver.waitFor(1);
    await b.broker.notifier.idle();
    expect(n!.body.data[0].id).toBe(REG);
    expect(n!.headers['ngsild-tenant']).toBe('east');
    expect(receiver.received).toHaveLength(1);
  });
});
