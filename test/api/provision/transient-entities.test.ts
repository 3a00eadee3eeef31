// Transient entities (NGSI-LD §4.22): expiresAt written by every entity write, validated, shown with
// sysAttrs, and the entity removed when it comes, as Delete Entity removes it (a deletion notification,
// a deletion instance in the history), in writes of at most 500 entities, in every tenant; by the
// job's run at start and by the alarm of the earliest expiry.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestBroker, T0, tempDir, type TestBroker } from '../../helpers/broker.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';
import { waitUntil } from '../../helpers/fake-cloud.js';
import { parseExposition } from '../../helpers/metrics.js';

const E = '/ngsi-ld/v1/entities';
const OPS = '/ngsi-ld/v1/entityOperations';
const TP = '/ngsi-ld/v1/temporal/entities';
const ID = 'urn:ngsi-ld:Room:t1';
const BAD_REQUEST_DATA = 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData';
const iso = (ms: number): string => new Date(ms).toISOString();
const room = (extra: Record<string, unknown> = {}, id = ID): Record<string, unknown> =>
  ({ id, type: 'Room', temperature: { type: 'Property', value: 20 }, ...extra });

let b: TestBroker;
beforeEach(async () => {
  b = await startTestBroker();
});
afterEach(() => b.close());

async function ok(method: string, path: string, body?: unknown, status = 204, headers: Record<string, string> = {}): Promise<void> {
  const res = await b.request(method, path, body === undefined ? { headers } : { body, headers });
  expect(res.status, res.text).toBe(status);
}
const statusOf = async (id = ID, headers: Record<string, string> = {}): Promise<number> => (await b.request('GET', `${E}/${id}`, { headers })).status;
const expiresAtOf = async (id = ID): Promise<unknown> => (await b.request('GET', `${E}/${id}?options=sysAttrs`)).json.expiresAt;

describe('expiresAt in entity representations [§4.22]', () => {
  it('is stored on create and shown, as written, with sysAttrs in the normalized and keyValues forms only', async () => {
    await ok('POST', E, room({ expiresAt: '2026-05-01T11:00:00Z' }), 201);
    const plain = await b.request('GET', `${E}/${ID}`);
    expect(plain.json).toEqual({ id: ID, type: 'Room', temperature: { type: 'Property', value: 20 } });
    expect((await b.request('GET', `${E}/${ID}?options=sysAttrs`)).json).toMatchObject({ expiresAt: '2026-05-01T11:00:00Z', createdAt: iso(T0) });
    expect((await b.request('GET', `${E}/${ID}?options=keyValues,sysAttrs`)).json).toMatchObject({ expiresAt: '2026-05-01T11:00:00Z', temperature: 20 });
  });

  it('is set by merge, PATCH …/attrs, batch upsert and batch update; replaced by PUT and merge', async () => {
    await ok('POST', E, room(), 201);
    expect(await expiresAtOf()).toBeUndefined();
    await ok('PATCH', `${E}/${ID}`, { expiresAt: '2026-05-02T00:00:00.000Z' });
    expect(await expiresAtOf()).toBe('2026-05-02T00:00:00.000Z');
    await ok('PATCH', `${E}/${ID}/attrs`, { expiresAt: '2026-05-03T00:00:00.000Z' });
    expect(await expiresAtOf()).toBe('2026-05-03T00:00:00.000Z');
    await ok('POST', `${OPS}/upsert?options=update`, [room({ expiresAt: '2026-05-04T00:00:00.000Z' })]);
    expect(await expiresAtOf()).toBe('2026-05-04T00:00:00.000Z');
    await ok('POST', `${OPS}/update`, [{ id: ID, type: 'Room', expiresAt: '2026-05-05T00:00:00.000Z' }]);
    expect(await expiresAtOf()).toBe('2026-05-05T00:00:00.000Z');
    await ok('PUT', `${E}/${ID}`, { type: 'Room', expiresAt: '2026-05-06T00:00:00+02:00' });
    expect(await expiresAtOf()).toBe('2026-05-06T00:00:00+02:00');
    await ok('POST', `${OPS}/create`, [room({ expiresAt: '2026-05-07T00:00:00.000Z' }, 'urn:ngsi-ld:Room:t2')], 201);
    expect(await expiresAtOf('urn:ngsi-ld:Room:t2')).toBe('2026-05-07T00:00:00.000Z');
  });

  it('an expiresAt-only merge changes no attribute: no history instance is written', async () => {
    await ok('POST', E, room(), 201);
    await ok('PATCH', `${E}/${ID}`, { expiresAt: '2026-05-02T00:00:00.000Z' });
    const h = (await b.request('GET', `${TP}/${ID}?timeproperty=modifiedAt&options=temporalValues`)).json;
    expect(h.temperature.values).toEqual([[20, iso(T0)]]);
  });
});

describe('expiresAt validation [§4.6.3]', () => {
  const BAD = ['not-a-date', '2026-13-45T00:00:00Z', '2026-05-01T10:00:00', 42, { value: '2026-05-01T10:00:00Z' }, null];

  it.each(BAD)('refuses %j with 400 BadRequestData on create, batch create, replace and merge', async (bad) => {
    const expectBad = async (method: string, path: string, body: unknown): Promise<void> => {
      const res = await b.request(method, path, { body });
      const problem = Array.isArray(res.json?.errors) ? res.json.errors[0].error : res.json;
      expect(res.status === 400 || res.status === 207, res.text).toBe(true);
      expect(problem.type).toBe(BAD_REQUEST_DATA);
    };
    await expectBad('POST', E, room({ expiresAt: bad }));
    await expectBad('POST', `${OPS}/create`, [room({ expiresAt: bad })]);
    await ok('POST', E, room(), 201);
    await expectBad('PUT', `${E}/${ID}`, { type: 'Room', expiresAt: bad });
    await expectBad('PATCH', `${E}/${ID}`, { expiresAt: bad });
    expect(await expiresAtOf()).toBeUndefined();
  });

  it('refuses a malformed expiresAt inside an attribute too', async () => {
    for (const bad of ['not-a-date', '2026-13-45T00:00:00Z', 7]) {
      const res = await b.request('POST', E, { body: room({ speed: { type: 'Property', value: 1, expiresAt: bad } }) });
      expect(res.status, res.text).toBe(400);
      expect(res.json.type).toBe(BAD_REQUEST_DATA);
    }
    expect(await statusOf()).toBe(404);
  });

  it('refuses NGSI-LD Null where nothing can be removed (create)', async () => {
    const res = await b.request('POST', E, { body: room({ expiresAt: 'urn:ngsi-ld:null' }) });
    expect(res.status).toBe(400);
    expect(res.json.type).toBe(BAD_REQUEST_DATA);
  });

  it('accepts an instant already passed: the entity is due at once and no longer served', async () => {
    await ok('POST', E, room({ expiresAt: '2020-01-01T00:00:00Z' }), 201);
    expect(await statusOf()).toBe(404);
    expect(await b.broker.entityExpiry.sweep()).toBe(1);
    // Removed, not hidden: the id can be created again.
    await ok('POST', E, room(), 201);
    expect(await statusOf()).toBe(200);
  });
});

describe('removal when expiresAt comes [§4.22]', () => {
  let receiver: Receiver;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(() => receiver.close());

  it('deletes the entity as DELETE does: 404, a deletion notification, a deletion instance in the history, counted', async () => {
    const sub = await b.request('POST', '/ngsi-ld/v1/subscriptions', {
      body: { type: 'Subscription', entities: [{ type: 'Room' }], notificationTrigger: ['entityDeleted'], notification: { endpoint: { uri: receiver.url() } } },
    });
    expect(sub.status, sub.text).toBe(201);
    await ok('POST', E, room({ expiresAt: iso(T0 + 60_000) }), 201);
    expect(await b.broker.entityExpiry.sweep()).toBe(0);
    expect(await statusOf()).toBe(200);

    b.clock.set(T0 + 60_000);
    expect(await b.broker.entityExpiry.sweep()).toBe(1);
    expect(await statusOf()).toBe(404);
    const [n] = await receiver.waitFor(1);
    expect(n!.body.data).toEqual([expect.objectContaining({ id: ID, type: 'Room', deletedAt: iso(T0 + 60_000) })]);

    const h = (await b.request('GET', `${TP}/${ID}?timeproperty=deletedAt&options=sysAttrs`)).json;
    expect(h.deletedAt).toBe(iso(T0 + 60_000));
    expect(h.temperature).toEqual([expect.objectContaining({ value: 'urn:ngsi-ld:null', deletedAt: iso(T0 + 60_000) })]);
    const audit = (await b.request('GET', `${TP}/${ID}?timeproperty=modifiedAt&options=audit`)).json;
    expect(audit.temperature.at(-1).sub).toEqual({ type: 'Property', value: 'urn:ngsi-ld:edgeld:expiry' });

    const metrics = parseExposition((await b.request('GET', '/metrics')).text);
    expect(metrics.value('edgeld_entities_expired_total')).toBe(1);
    expect(metrics.value('edgeld_entities_expiry_writes_total')).toBe(1);
  });

  it('an expiresAt moved later postpones the removal; one removed keeps the entity for good', async () => {
    await ok('POST', E, room({ expiresAt: iso(T0 + 10_000) }), 201);
    await ok('POST', E, room({ expiresAt: iso(T0 + 10_000) }, 'urn:ngsi-ld:Room:p2'), 201);
    await ok('POST', E, room({ expiresAt: iso(T0 + 10_000) }, 'urn:ngsi-ld:Room:p3'), 201);
    await ok('PATCH', `${E}/${ID}`, { expiresAt: iso(T0 + 100_000) });
    await ok('PATCH', `${E}/urn:ngsi-ld:Room:p2`, { expiresAt: 'urn:ngsi-ld:null' });
    await ok('PUT', `${E}/urn:ngsi-ld:Room:p3`, { type: 'Room', temperature: { type: 'Property', value: 1 } });
    expect(await expiresAtOf('urn:ngsi-ld:Room:p2')).toBeUndefined();

    b.clock.set(T0 + 20_000);
    expect(await b.broker.entityExpiry.sweep()).toBe(0);
    expect(await statusOf()).toBe(200);
    b.clock.set(T0 + 100_000);
    expect(await b.broker.entityExpiry.sweep()).toBe(1);
    expect(await statusOf()).toBe(404);
    b.clock.set(T0 + 10_000_000);
    expect(await b.broker.entityExpiry.sweep()).toBe(0);
    expect(await statusOf('urn:ngsi-ld:Room:p2')).toBe(200);
    expect(await statusOf('urn:ngsi-ld:Room:p3')).toBe(200);
  });

  it('checks inside the write that the entity is still due: found due, then no longer due when the write runs, it stays', async () => {
    await ok('POST', E, room({ expiresAt: iso(T0 + 1_000) }), 201);
    b.clock.set(T0 + 1_000);
    // The entities due are read when the run starts; its write runs at the end of the turn.
    const run = b.broker.entityExpiry.sweep();
    b.clock.set(T0 + 500);
    expect(await run).toBe(0);
    expect(await statusOf()).toBe(200);
    b.clock.set(T0 + 1_000);
    expect(await b.broker.entityExpiry.sweep()).toBe(1);
  });

  it('a deleted transient entity is not removed again, and a new one under its id lives', async () => {
    await ok('POST', E, room({ expiresAt: iso(T0 + 10_000) }), 201);
    await ok('DELETE', `${E}/${ID}`);
    await ok('POST', E, room(), 201);
    b.clock.set(T0 + 20_000);
    expect(await b.broker.entityExpiry.sweep()).toBe(0);
    expect(await statusOf()).toBe(200);
  });

  it('removes the entities of every tenant, each in its own tenant', async () => {
    const east = { 'NGSILD-Tenant': 'east' };
    await ok('POST', E, room({ expiresAt: iso(T0 + 5_000) }), 201);
    await ok('POST', E, room({ expiresAt: iso(T0 + 5_000) }), 201, east);
    await ok('POST', E, room({}, 'urn:ngsi-ld:Room:stay'), 201, east);
    b.clock.set(T0 + 5_000);
    expect(await b.broker.entityExpiry.sweep()).toBe(2);
    expect(await statusOf()).toBe(404);
    expect(await statusOf(ID, east)).toBe(404);
    expect(await statusOf('urn:ngsi-ld:Room:stay', east)).toBe(200);
    expect((await b.request('GET', `${TP}/${ID}?timeproperty=deletedAt&options=sysAttrs`, { headers: east })).json.deletedAt).toBe(iso(T0 + 5_000));
  });

  it('removes 1,200 due entities in writes of at most 500', async () => {
    const batch = (from: number): Array<Record<string, unknown>> =>
      Array.from({ length: 600 }, (_, i) => room({ expiresAt: iso(T0 + 1_000 + from + i) }, `urn:ngsi-ld:Room:bulk${from + i}`));
    await ok('POST', `${OPS}/create`, batch(0), 201);
    await ok('POST', `${OPS}/create`, batch(600), 201);
    b.clock.set(T0 + 1_000 + 1_199);
    expect(await b.broker.entityExpiry.sweep()).toBe(1_200);
    expect(b.broker.entityExpiry.stats()).toEqual({ expired: 1_200, writes: 3 });
    const left = await b.request('GET', `${E}?type=Room&count=true&limit=1`);
    expect(left.headers.get('NGSILD-Results-Count')).toBe('0');
  });

  it('stops between writes when the job is stopped, and the next run goes on', async () => {
    await ok('POST', `${OPS}/create`, Array.from({ length: 700 }, (_, i) => room({ expiresAt: iso(T0) }, `urn:ngsi-ld:Room:s${i}`)), 201);
    const stop = new AbortController();
    const run = b.broker.entityExpiry.sweep(stop.signal);
    stop.abort();
    expect(await run).toBe(500);
    expect(await b.broker.entityExpiry.sweep()).toBe(200);
  });
});

describe('the expiry job of a running broker', () => {
  it('removes at start what expired while the broker was down, then each entity when its expiresAt comes', async () => {
    await b.close();
    const dir = tempDir();
    try {
      const dbPath = `${dir.path}/edgeld.db`;
      const first = await startTestBroker({ dbPath });
      expect((await first.request('POST', E, { body: room({ expiresAt: iso(T0 + 5_000) }) })).status).toBe(201);
      await first.close();

      b = await startTestBroker({ dbPath });
      b.clock.set(T0 + 10_000);
      await b.broker.listen();
      await waitUntil(() => b.broker.entityExpiry.stats().expired === 1, 5_000, 'the run at start');
      expect(await statusOf()).toBe(404);
      // Already due when written: the alarm runs the job without waiting for its schedule.
      await ok('POST', E, room({ expiresAt: iso(T0 + 10_000) }, 'urn:ngsi-ld:Room:late'), 201);
      await waitUntil(() => b.broker.entityExpiry.stats().expired === 2, 5_000, 'the alarm');
      expect(await statusOf('urn:ngsi-ld:Room:late')).toBe(404);
    } finally {
      await b.close();
      dir.remove();
    }
  });
});
