// Every write entry point of the API goes through the write core: each journals exactly one change
// per entity it touched, in its transaction, with the kind, attributes and instances of the write,
// and the ChangeEvent emitted after commit is that journal row.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChangeEvent, ChangeKind } from '../../src/events.js';
import { DEFAULT_CONTEXT_VOCAB as V } from '../../src/ngsi/index.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';

const E = '/ngsi-ld/v1/entities';
const TP = '/ngsi-ld/v1/temporal/entities';
const OPS = '/ngsi-ld/v1/entityOperations';
const id = (n: number): string => `urn:ngsi-ld:Room:w${n}`;
const at = (minutes: number): string => new Date(Date.parse('2026-04-01T00:00:00.000Z') + minutes * 60_000).toISOString();

let b: TestBroker;
let events: ChangeEvent[];

beforeEach(async () => {
  b = await startTestBroker();
  events = [];
  b.broker.events.on((e) => events.push(e));
});

afterEach(async () => {
  await b.close();
});

async function send(method: string, path: string, body?: unknown): Promise<void> {
  const res = await b.request(method, path, body === undefined ? {} : { body });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
}

const room = (n: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: id(n), type: 'Room', temperature: { type: 'Property', value: 20, observedAt: at(10) }, humidity: { type: 'Property', value: 40 }, ...extra,
});

/** Seeds rooms 1 and 2, with temporal instances of temperature, then forgets their changes. */
async function seed(): Promise<void> {
  await send('POST', `${OPS}/create`, [room(1), room(2)]);
  await send('POST', `${TP}/${id(1)}/attrs`, { temperature: [{ type: 'Property', value: 5, observedAt: at(1) }] });
  events = [];
}

/** The journal rows written since `after`, decoded. */
const journalSince = (after: number): ChangeEvent[] => b.broker.store.journal.readAfter(after, 1_000, { instances: true });

interface EntryPoint {
  name: string;
  run(): Promise<void>;
  /** The change expected per entity, in order. */
  expect: Array<{ id: string; kind: ChangeKind; written?: string[]; deleted?: string[]; instances?: number }>;
}

async function firstInstanceId(n: number): Promise<string> {
  const res = await b.request('GET', `${TP}/${id(n)}?attrs=temperature`);
  return res.json.temperature[0].instanceId as string;
}

const ENTRY_POINTS: EntryPoint[] = [
  { name: 'POST /entities', run: () => send('POST', E, room(3)),
    expect: [{ id: id(3), kind: 'entityCreated', written: [V + 'temperature', V + 'humidity'], instances: 2 }] },
  { name: 'PUT /entities/{id}', run: () => send('PUT', `${E}/${id(1)}`, { type: 'Room', light: { type: 'Property', value: 1 } }),
    expect: [{ id: id(1), kind: 'entityReplaced', written: [V + 'light'], deleted: [V + 'temperature', V + 'humidity'], instances: 3 }] },
  { name: 'PATCH /entities/{id} (merge)', run: () => send('PATCH', `${E}/${id(1)}`, { humidity: { value: 41 }, temperature: 'urn:ngsi-ld:null' }),
    expect: [{ id: id(1), kind: 'entityUpdated', written: [V + 'humidity'], deleted: [V + 'temperature'], instances: 2 }] },
  { name: 'DELETE /entities/{id}', run: () => send('DELETE', `${E}/${id(1)}`),
    expect: [{ id: id(1), kind: 'entityDeleted', deleted: [V + 'temperature', V + 'humidity'], instances: 2 }] },
  { name: 'POST /entities/{id}/attrs (append)', run: () => send('POST', `${E}/${id(1)}/attrs`, { light: { type: 'Property', value: 3 } }),
    expect: [{ id: id(1), kind: 'entityUpdated', written: [V + 'light'], instances: 1 }] },
  { name: 'PATCH /entities/{id}/attrs (update)', run: () => send('PATCH', `${E}/${id(1)}/attrs`, { humidity: { type: 'Property', value: 45 } }),
    expect: [{ id: id(1), kind: 'entityUpdated', written: [V + 'humidity'], instances: 1 }] },
  { name: 'PATCH /entities/{id}/attrs/{attr}', run: () => send('PATCH', `${E}/${id(1)}/attrs/humidity`, { value: 46 }),
    expect: [{ id: id(1), kind: 'entityUpdated', written: [V + 'humidity'], instances: 1 }] },
  { name: 'PUT /entities/{id}/attrs/{attr}', run: () => send('PUT', `${E}/${id(1)}/attrs/humidity`, { type: 'Property', value: 47 }),
    expect: [{ id: id(1), kind: 'entityUpdated', written: [V + 'humidity'], instances: 1 }] },
  { name: 'DELETE /entities/{id}/attrs/{attr}', run: () => send('DELETE', `${E}/${id(1)}/attrs/humidity`),
    expect: [{ id: id(1), kind: 'entityUpdated', deleted: [V + 'humidity'], instances: 1 }] },
  { name: 'POST /entityOperations/create', run: () => send('POST', `${OPS}/create`, [room(3), room(4)]),
    expect: [{ id: id(3), kind: 'entityCreated' }, { id: id(4), kind: 'entityCreated' }] },
  { name: 'POST /entityOperations/upsert', run: () => send('POST', `${OPS}/upsert`, [room(1), room(3)]),
    expect: [{ id: id(1), kind: 'entityReplaced' }, { id: id(3), kind: 'entityCreated' }] },
  { name: 'POST /entityOperations/upsert?options=update', run: () => send('POST', `${OPS}/upsert?options=update`, [{ id: id(1), type: 'Room', light: { type: 'Property', value: 1 } }]),
    expect: [{ id: id(1), kind: 'entityUpdated', written: [V + 'light'] }] },
  { name: 'POST /entityOperations/update', run: () => send('POST', `${OPS}/update`, [{ id: id(1), humidity: { type: 'Property', value: 1 } }, { id: id(2), humidity: { type: 'Property', value: 2 } }]),
    expect: [{ id: id(1), kind: 'entityUpdated', written: [V + 'humidity'] }, { id: id(2), kind: 'entityUpdated', written: [V + 'humidity'] }] },
  { name: 'POST /entityOperations/merge', run: () => send('POST', `${OPS}/merge`, [{ id: id(2), humidity: { value: 9 } }]),
    expect: [{ id: id(2), kind: 'entityUpdated', written: [V + 'humidity'] }] },
  { name: 'POST /entityOperations/delete', run: () => send('POST', `${OPS}/delete`, [id(1), id(2)]),
    expect: [{ id: id(1), kind: 'entityDeleted' }, { id: id(2), kind: 'entityDeleted' }] },
  { name: 'DELETE /entities?type= (purge)', run: () => send('DELETE', `${E}?type=Room`),
    expect: [{ id: id(1), kind: 'entityDeleted' }, { id: id(2), kind: 'entityDeleted' }] },
  { name: 'DELETE /entities?type=&drop= (purge of attributes)', run: () => send('DELETE', `${E}?type=Room&drop=humidity`),
    expect: [{ id: id(1), kind: 'entityUpdated', deleted: [V + 'humidity'] }, { id: id(2), kind: 'entityUpdated', deleted: [V + 'humidity'] }] },
  { name: 'POST /temporal/entities (new entity)', run: () => send('POST', TP, { id: id(5), type: 'Room', temperature: [{ type: 'Property', value: 1, observedAt: at(1) }, { type: 'Property', value: 2, observedAt: at(2) }] }),
    expect: [{ id: id(5), kind: 'entityCreated', written: [V + 'temperature'], instances: 2 }] },
  { name: 'POST /temporal/entities (existing entity, newer instance)', run: () => send('POST', TP, { id: id(1), type: 'Room', temperature: [{ type: 'Property', value: 30, observedAt: at(20) }] }),
    expect: [{ id: id(1), kind: 'entityUpdated', written: [V + 'temperature'], instances: 1 }] },
  { name: 'POST /temporal/entities/{id}/attrs (newer instance)', run: () => send('POST', `${TP}/${id(1)}/attrs`, { temperature: [{ type: 'Property', value: 31, observedAt: at(30) }] }),
    expect: [{ id: id(1), kind: 'entityUpdated', written: [V + 'temperature'], instances: 1 }] },
  { name: 'POST /temporal/entities/{id}/attrs (back-fill: current state unchanged)', run: () => send('POST', `${TP}/${id(1)}/attrs`, { temperature: [{ type: 'Property', value: 2, observedAt: at(2) }, { type: 'Property', value: 3, observedAt: at(3) }] }),
    expect: [{ id: id(1), kind: 'historyChanged', written: [V + 'temperature'], instances: 2 }] },
  { name: 'PATCH /temporal/entities/{id}/attrs/{attr}/{instanceId} (modifyInstance)',
    run: async () => {
      const instanceId = await firstInstanceId(1);
      await send('PATCH', `${TP}/${id(1)}/attrs/temperature/${instanceId}`, { type: 'Property', value: 6 });
    },
    expect: [{ id: id(1), kind: 'historyChanged', written: [V + 'temperature'], instances: 1 }] },
  { name: 'DELETE /temporal/entities/{id}/attrs/{attr}/{instanceId}',
    run: async () => {
      const instanceId = await firstInstanceId(1);
      await send('DELETE', `${TP}/${id(1)}/attrs/temperature/${instanceId}`);
    },
    expect: [{ id: id(1), kind: 'historyChanged', deleted: [V + 'temperature'], instances: 0 }] },
  { name: 'DELETE /temporal/entities/{id}/attrs/{attr} (deleteAttribute)', run: () => send('DELETE', `${TP}/${id(1)}/attrs/temperature`),
    expect: [{ id: id(1), kind: 'historyChanged', deleted: [V + 'temperature'], instances: 0 }] },
  { name: 'DELETE /temporal/entities/{id}', run: () => send('DELETE', `${TP}/${id(1)}`),
    expect: [{ id: id(1), kind: 'entityDeleted', deleted: [V + 'temperature', V + 'humidity'], instances: 0 }] },
];

describe('the write core behind every write entry point', () => {
  for (const ep of ENTRY_POINTS) {
    it(`${ep.name}: one journaled change per entity, announced after commit as that row`, async () => {
      await seed();
      const before = b.broker.store.journal.lastSeq();
      await ep.run();
      const rows = journalSince(before);
      // Reads made by the entry point itself (finding an instance id) write nothing.
      expect(rows.map((r) => [r.id, r.kind])).toEqual(ep.expect.map((x) => [x.id, x.kind]));
      ep.expect.forEach((x, i) => {
        const row = rows[i]!;
        if (x.written) expect(new Set(row.written)).toEqual(new Set(x.written));
        if (x.deleted) expect(new Set(row.deleted)).toEqual(new Set(x.deleted));
        if (x.instances !== undefined) expect(row.instances).toHaveLength(x.instances);
        for (const inst of row.instances) expect(inst.entityId).toBe(x.id);
        expect(row.tenant).toBe('');
      });
      // Sequences are consecutive, and each event is its journal row.
      expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => before + 1 + i));
      expect(JSON.parse(JSON.stringify(events))).toEqual(rows);
    });
  }

  it('a write that changes nothing journals nothing (update with noOverwrite of existing attributes)', async () => {
    await seed();
    const before = b.broker.store.journal.lastSeq();
    await send('POST', `${E}/${id(1)}/attrs?options=noOverwrite`, { humidity: { type: 'Property', value: 99 } });
    expect(journalSince(before)).toEqual([]);
    expect(events).toEqual([]);
  });

  it('a failed write journals nothing and announces nothing', async () => {
    await seed();
    const before = b.broker.store.journal.lastSeq();
    const res = await b.request('POST', E, { body: room(1) });
    expect(res.status).toBe(409);
    expect(journalSince(before)).toEqual([]);
    expect(events).toEqual([]);
  });

  it('a batch with a failing element journals the others only', async () => {
    await seed();
    const before = b.broker.store.journal.lastSeq();
    const res = await b.request('POST', `${OPS}/create`, { body: [room(1), room(6)] });
    expect(res.status).toBe(207);
    expect(journalSince(before).map((r) => r.id)).toEqual([id(6)]);
  });

  it('previous holds the entity before the change, restricted to the attributes it touched', async () => {
    await seed();
    const before = b.broker.store.journal.lastSeq();
    await send('PATCH', `${E}/${id(1)}/attrs`, { humidity: { type: 'Property', value: 45 } });
    const [row] = journalSince(before);
    expect(Object.keys(row!.previous!.attrs)).toEqual([V + 'humidity']);
    expect(row!.previous!.attrs[V + 'humidity']![0]).toMatchObject({ kind: 'Property', value: 40 });
    expect(Object.keys(row!.entity!.attrs).sort()).toEqual([V + 'humidity', V + 'temperature']);
    expect(row!.entity!.attrs[V + 'humidity']![0]).toMatchObject({ value: 45 });
  });

  it('a tenant and a subject are journaled with the change', async () => {
    const before = b.broker.store.journal.lastSeq();
    const res = await b.request('POST', E, { body: room(7), headers: { 'NGSILD-Tenant': 'plant2' } });
    expect(res.status).toBe(201);
    await b.broker.entities.update({ tenant: 'plant2', subject: 'urn:ngsi-ld:Subject:alice', admin: true, assignees: [], groups: [] }, id(7),
      (current, now) => ({ entity: { ...current, modifiedAt: now, scope: ['/a'] }, changes: [], updated: [], notUpdated: [] }));
    const rows = journalSince(before);
    expect(rows.map((r) => [r.tenant, r.kind, r.subject])).toEqual([['plant2', 'entityCreated', undefined], ['plant2', 'entityUpdated', 'urn:ngsi-ld:Subject:alice']]);
    expect(rows[1]!.entity!.scope).toEqual(['/a']);
  });
});
