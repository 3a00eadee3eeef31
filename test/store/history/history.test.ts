// History repository: lossless round trip, ordering, compact row format and time buckets.

import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Attribute } from '../../../src/ngsi/index.js';
import type { HistoryInstance } from '../../../src/store/index.js';
import { everyKind, fileStore, memoryStore, NS, property, rawRead, T0, tempDir } from '../helpers.js';

const E = 'urn:ngsi-ld:Sensor:1';
const newInstanceId = (): string => `urn:ngsi-ld:Instance:${randomUUID()}`;

function instance(attr: string, attribute: Attribute | undefined, extra: Partial<HistoryInstance> = {}): HistoryInstance {
  const inst: HistoryInstance = { entityId: E, attr, instanceId: newInstanceId(), createdAt: attribute?.createdAt ?? T0, modifiedAt: attribute?.modifiedAt ?? T0, ...extra };
  if (attribute) {
    inst.attribute = attribute;
    if (attribute.observedAt !== undefined) inst.observedAt = attribute.observedAt;
    if (attribute.datasetId !== undefined) inst.datasetId = attribute.datasetId;
  }
  return inst;
}

/** Instances of every kind, in the order listForEntity returns them. */
function sampleInstances(): HistoryInstance[] {
  const all: HistoryInstance[] = [];
  for (const [attr, list] of Object.entries(everyKind())) for (const a of list) all.push(instance(attr, a, { subject: 'alice' }));
  // A deletion instance, with and without subject, and one whose attribute disagrees with the columns.
  all.push({ entityId: E, attr: NS + 'on', instanceId: newInstanceId(), createdAt: T0 + 50, modifiedAt: T0 + 50, deletedAt: T0 + 50 });
  all.push({ entityId: E, attr: NS + 'name', instanceId: 'urn:other:kept-verbatim', createdAt: T0 + 60, modifiedAt: T0 + 60, deletedAt: T0 + 60, subject: 'bob' });
  all.push({ ...instance(NS + 'name', property('late', { createdAt: T0 + 1, modifiedAt: T0 + 2 })), observedAt: T0 + 70, createdAt: T0 + 3, modifiedAt: T0 + 4 });
  return all;
}

const sortedLikeList = (xs: HistoryInstance[]): HistoryInstance[] =>
  [...xs].sort((a, b) => (a.attr < b.attr ? -1 : a.attr > b.attr ? 1 : 0)
    || (a.datasetId ?? '').localeCompare(b.datasetId ?? '')
    || (a.observedAt ?? a.createdAt) - (b.observedAt ?? b.createdAt));

describe('store history: round trip', () => {
  it('decodes every kind, datasetId, observedAt, deletions, subject and instanceId exactly', () => {
    const store = memoryStore();
    const written = sampleInstances();
    store.transaction(() => store.history.append('', written));
    expect(store.history.listForEntity({ tenant: '' }, E)).toEqual(sortedLikeList(written));
    store.close();
  });

  it('returns one attribute, ordered by datasetId, time, then insertion', () => {
    const store = memoryStore();
    const attr = NS + 'temperature';
    const at = (t: number, datasetId?: string): HistoryInstance =>
      instance(attr, property(t - T0, { observedAt: t, ...(datasetId ? { datasetId } : {}) }));
    const a = at(T0 + 30);
    const b = at(T0 + 10, 'urn:ds:2');
    const c = at(T0 + 10);
    const d = at(T0 + 30);
    const e = at(T0 + 5, 'urn:ds:1');
    store.history.append('', [a, b, c]);
    store.history.append('', [d, e, instance(NS + 'other', property(1))]);
    expect(store.history.listForEntity({ tenant: '' }, E, attr).map((i) => i.instanceId)).toEqual([c, a, d, e, b].map((i) => i.instanceId));
    expect(store.history.listForEntity({ tenant: '' }, E, NS + 'never')).toEqual([]);
    expect(store.history.listForEntity({ tenant: 'other-tenant' }, E)).toEqual([]);
    store.close();
  });
});

describe('store history: storage format', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
    return tmp.cleanup;
  });

  interface Row { instance_id: Buffer | string; value: string | null; num: number | null; deleted_at: number | null; sub: string | null; t: number }

  it('stores compact rows: raw uuid bytes, numbers only in num, no repeated members', () => {
    const store = fileStore(tmp.file);
    const num = instance(NS + 'a', property(21.5, { observedAt: T0 + 1 }));
    const bool = instance(NS + 'b', property(true), { subject: 'alice' });
    const unit = instance(NS + 'c', property(3, { unitCode: 'CEL' }));
    const del: HistoryInstance = { entityId: E, attr: NS + 'a', instanceId: newInstanceId(), createdAt: T0 + 2, modifiedAt: T0 + 2, deletedAt: T0 + 2 };
    store.transaction(() => store.history.append('', [num, bool, unit, del]));
    store.close();
    const rows = rawRead(tmp.file, (db) => db.prepare<[], Row>('SELECT * FROM history_202401 ORDER BY rowid').all());
    expect(rows.map((r) => [r.value, r.num, r.deleted_at, r.sub, r.t])).toEqual([
      [null, 21.5, null, null, T0 + 1],
      ['{"value":true}', 1, null, 'alice', T0],
      ['{"unitCode":"CEL"}', 3, null, null, T0],
      [null, null, T0 + 2, null, T0 + 2],
    ]);
    expect(rows.every((r) => Buffer.isBuffer(r.instance_id) && r.instance_id.length === 16)).toBe(true);
  });

  it('reuses series and iris across appends', () => {
    const store = fileStore(tmp.file);
    for (let i = 0; i < 3; i++) store.history.append('', [instance(NS + 'a', property(i, { createdAt: T0 + i }))]);
    store.entities.insert('', { id: E, types: [NS + 'a'], attrs: { [NS + 'a']: [property(1)] }, createdAt: T0, modifiedAt: T0 });
    store.close();
    const counts = rawRead(tmp.file, (db) => [
      db.prepare('SELECT count(*) FROM series').pluck().get(),
      db.prepare('SELECT count(*) FROM iris').pluck().get(),
    ]);
    expect(counts).toEqual([1, 1]);
  });
});

describe('store history: time buckets', () => {
  const at = (iso: string, observed: boolean): HistoryInstance => {
    const t = Date.parse(iso);
    return instance(NS + 'a', property(1, { createdAt: observed ? T0 : t, modifiedAt: t, ...(observed ? { observedAt: t } : {}) }), {});
  };

  it('puts instances of different months in different month tables, by observedAt ?? createdAt', () => {
    const store = memoryStore({ historyBucket: 'month' });
    const list = [at('2024-03-31T23:59:59.999Z', true), at('2024-04-01T00:00:00.000Z', false), at('2023-12-15T10:00:00Z', true)];
    store.history.append('', list);
    expect(store.history.buckets()).toEqual(['history_202312', 'history_202403', 'history_202404']);
    expect(store.history.listForEntity({ tenant: '' }, E)).toEqual(sortedLikeList(list));
    store.close();
  });

  it('names day buckets history_YYYYMMDD', () => {
    const store = memoryStore({ historyBucket: 'day' });
    store.history.append('', [at('2024-02-29T23:00:00Z', true), at('2024-03-01T01:00:00Z', false), at('2024-02-29T01:00:00Z', true)]);
    expect(store.history.buckets()).toEqual(['history_20240229', 'history_20240301']);
    store.close();
  });

  it('creates no bucket and leaves caches clean when the transaction rolls back', () => {
    const store = memoryStore();
    const inst = at('2025-06-01T00:00:00Z', true);
    expect(() => store.transaction(() => {
      store.history.append('', [inst]);
      throw new Error('abort');
    })).toThrow('abort');
    expect(store.history.buckets()).toEqual([]);
    store.history.append('', [inst]);
    expect(store.history.buckets()).toEqual(['history_202506']);
    expect(store.history.listForEntity({ tenant: '' }, E)).toEqual([inst]);
    store.close();
  });
});
