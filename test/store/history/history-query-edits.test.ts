// Temporal edits and retention on stored history: overwrite at the same observedAt, instance edits by
// id, series removal, bucket drops and chunked pruning, the entity archive, and migration 5.

import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/lib/index.js';
import type { HistoryInstance, Store } from '../../../src/store/index.js';
import { MIGRATIONS, runMigrations } from '../../../src/store/migrations/migrations.js';
import { entity, fileStore, memoryStore, NS, property, rawRead, T0, tempDir } from '../helpers.js';

const E = 'urn:ngsi-ld:Sensor:e1';
const ATTR = NS + 'temperature';
const DAY = 86_400_000;
const stores: Store[] = [];
const open = (bucket: 'day' | 'month' = 'day'): Store => {
  const s = memoryStore({ historyBucket: bucket });
  stores.push(s);
  return s;
};
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

function observed(value: number, at: number, extra: Partial<HistoryInstance> = {}): HistoryInstance {
  const datasetId = extra.datasetId;
  return {
    entityId: E, attr: ATTR, instanceId: `urn:ngsi-ld:Instance:${randomUUID()}`, observedAt: at, createdAt: T0, modifiedAt: T0,
    attribute: property(value, { observedAt: at, ...(datasetId ? { datasetId } : {}) }), ...extra,
  };
}

const values = (store: Store): unknown[] => store.history.listForEntity({ tenant: '' }, E).map((i) => i.attribute?.kind === 'Property' && i.attribute.value);

describe('upsertObserved', () => {
  it('replaces the instance of the same series at the same observedAt, and keeps other datasets', () => {
    const store = open();
    store.history.upsertObserved('', [observed(1, T0), observed(2, T0 + 1), observed(3, T0, { datasetId: 'urn:ds:x' })]);
    store.history.upsertObserved('', [observed(10, T0), observed(11, T0 + 2)]);
    expect(values(store)).toEqual([10, 2, 11, 3]);
    expect(store.history.listForEntity({ tenant: '' }, E)).toHaveLength(4);
  });
});

describe('instance edits', () => {
  it('finds, modifies (keeping the id) and reports unknown instances', () => {
    const store = open();
    const a = observed(1, T0);
    store.history.upsertObserved('', [a, observed(2, T0 + DAY)]);
    expect(store.history.findInstance({ tenant: '' }, E, ATTR, a.instanceId)?.attribute).toMatchObject({ value: 1 });
    const moved = store.history.modifyInstance('', E, ATTR, a.instanceId, (old) => ({
      ...old, observedAt: T0 + 3 * DAY, attribute: property(5, { observedAt: T0 + 3 * DAY }),
    }));
    expect(moved).toBe(true);
    expect(store.history.listForEntity({ tenant: '' }, E).map((i) => [i.instanceId === a.instanceId, i.observedAt])).toEqual([
      [false, T0 + DAY], [true, T0 + 3 * DAY],
    ]);
    expect(store.history.modifyInstance('', E, ATTR, 'urn:ngsi-ld:Instance:nope', (x) => x)).toBe(false);
    expect(store.history.findInstance({ tenant: '' }, E, NS + 'other', a.instanceId)).toBeUndefined();
  });
});

describe('removeSeries', () => {
  it('removes the default instance, one dataset, all datasets or the whole entity', () => {
    const store = open();
    const write = (): void => store.history.upsertObserved('', [
      observed(1, T0), observed(2, T0, { datasetId: 'urn:ds:x' }), observed(3, T0, { datasetId: 'urn:ds:y' }),
      { ...observed(4, T0), attr: NS + 'humidity' },
    ]);
    write();
    expect(store.history.removeSeries('', E, ATTR, 'default')).toBe(1);
    expect(store.history.removeSeries('', E, ATTR, 'urn:ds:x')).toBe(1);
    expect(store.history.removeSeries('', E, ATTR, 'urn:ds:none')).toBe(0);
    expect(store.history.series({ tenant: '' }, [E]).map((s) => [s.attr, s.datasetId])).toEqual([[NS + 'humidity', undefined], [ATTR, 'urn:ds:y']]);
    expect(store.history.removeSeries('', E)).toBe(2);
    expect(store.history.series({ tenant: '' }, [E])).toEqual([]);
    // The removed series ids are forgotten: writing again (also in one transaction with a removal) works.
    write();
    store.transaction(() => {
      store.history.removeSeries('', E, ATTR, 'all');
      store.history.upsertObserved('', [observed(9, T0)]);
    });
    expect(values(store)).toEqual([4, 9]);
  });
});

describe('retention steps', () => {
  it('drops buckets entirely before the horizon one at a time, and prunes the straddling one in chunks', () => {
    const store = open('day');
    const list: HistoryInstance[] = [];
    for (let d = 0; d < 4; d++) for (let h = 0; h < 24; h += 2) list.push(observed(d * 100 + h, T0 + d * DAY + h * 3_600_000));
    store.history.upsertObserved('', list);
    const horizon = T0 + 2 * DAY + 5 * 3_600_000;
    const before = store.history.buckets();
    expect(before).toHaveLength(5);
    const dropped: string[] = [];
    for (let name = store.history.dropBucketBefore(horizon); name; name = store.history.dropBucketBefore(horizon)) dropped.push(name);
    expect(dropped).toEqual(before.slice(0, 2));
    let pruned = 0;
    for (let n = store.history.pruneBefore(horizon, 2); n > 0; n = store.history.pruneBefore(horizon, 2)) pruned += n;
    expect(pruned).toBe(list.filter((i) => i.observedAt! < horizon && i.observedAt! >= T0 + 2 * DAY - (T0 % DAY)).length);
    expect(store.history.listForEntity({ tenant: '' }, E).map((i) => i.observedAt)).toEqual(list.map((i) => i.observedAt).filter((t) => t! >= horizon));
    // A bucket dropped can be written again.
    store.history.upsertObserved('', [observed(1, T0)]);
    expect(store.history.buckets()[0]).toBe(before[0]);
  });
});

describe('entity archive', () => {
  it('gives the latest document of an id, deleted or not, lists them and purges every row', () => {
    const store = open();
    const t = NS + 'Sensor';
    store.entities.insert('', entity(E, [t], {}, T0));
    store.entities.markDeleted('', E, T0 + 1);
    store.entities.insert('', entity(E, [t, NS + 'Thing'], {}, T0 + 2));
    store.entities.markDeleted('', E, T0 + 3);
    store.entities.insert('', entity('urn:x:2', [t], {}, T0 + 4));
    expect(store.archive.latest({ tenant: '' }, E)).toMatchObject({ types: [t, NS + 'Thing'], deletedAt: T0 + 3 });
    const listed = store.archive.list({ tenant: '' }, { types: [t], limit: 10, offset: 0, count: true });
    expect(listed.entities.map((e) => e.id)).toEqual([E, 'urn:x:2']);
    expect(listed.count).toBe(2);
    store.history.upsertObserved('', [observed(1, T0)]);
    expect(store.archive.list({ tenant: '' }, { attrs: [ATTR], limit: 10, offset: 0, count: false }).entities.map((e) => e.id)).toEqual([E]);
    expect(store.archive.purge('', 'urn:x:2', T0 + 5)).toBe(true);
    expect(store.entities.get({ tenant: '' }, 'urn:x:2')).toBeUndefined();
    expect(store.archive.latest({ tenant: '' }, 'urn:x:2')).toBeUndefined();
    expect(store.archive.purge('', 'urn:x:2', T0 + 6)).toBe(false);
  });
});

describe('migrations 5 and 6', () => {
  it('index existing buckets by (series, t) and deletion, record their bounds and serve createdAt reads', () => {
    const tmp = tempDir();
    try {
      const db = new Database(tmp.file.replace('/data/edgeld.db', '/edgeld.db'));
      runMigrations(db, MIGRATIONS.slice(0, 4), silentLogger);
      db.exec(`CREATE TABLE history_202401 (series INTEGER NOT NULL REFERENCES series (id), t INTEGER NOT NULL, observed_at INTEGER,
        created_at INTEGER NOT NULL, modified_at INTEGER NOT NULL, deleted_at INTEGER, instance_id BLOB NOT NULL, value TEXT, num REAL, sub TEXT);
        CREATE INDEX history_202401_series_t ON history_202401 (series, t);
        INSERT INTO iris (id, iri) VALUES (1, '${ATTR}');
        INSERT INTO series (id, tenant, entity_id, attr, dataset_id) VALUES (1, '', '${E}', 1, NULL);
        INSERT INTO history_buckets (name, start_ms, end_ms) VALUES ('history_202401', ${Date.UTC(2024, 0, 1)}, ${Date.UTC(2024, 1, 1)});
        INSERT INTO history_202401 VALUES (1, ${T0}, ${T0}, ${T0 + 50}, ${T0 + 60}, NULL, 'urn:a', NULL, 1.5, NULL);
        INSERT INTO history_202401 VALUES (1, ${T0 + 10}, NULL, ${T0 + 10}, ${T0 + 70}, ${T0 + 70}, 'urn:b', NULL, NULL, NULL);`);
      db.close();
      const store = fileStore(tmp.file.replace('/data/edgeld.db', '/edgeld.db'));
      stores.push(store);
      const series = store.history.series({ tenant: '' }, [E]);
      expect(store.history.read(series, { timeproperty: 'createdAt', from: T0 + 40 }, { order: 'asc', skip: 0, limit: 10 })
        .map((r) => r.time)).toEqual([T0 + 50]);
      expect(store.history.count(series, { timeproperty: 'deletedAt' })).toBe(1);
      store.close();
      const info = rawRead(tmp.file.replace('/data/edgeld.db', '/edgeld.db'), (raw) => ({
        indexes: raw.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'history_202401' ORDER BY name").pluck().all(),
        bounds: raw.prepare('SELECT created_min, created_max, modified_min, modified_max, deleted_min, deleted_max FROM history_buckets').get(),
      }));
      // Migration 5 added an index per time property; migration 6 keeps only these two.
      expect(info.indexes).toEqual(['history_202401_series_deleted', 'history_202401_series_t']);
      expect(info.bounds).toEqual({ created_min: T0 + 10, created_max: T0 + 50, modified_min: T0 + 60, modified_max: T0 + 70, deleted_min: T0 + 70, deleted_max: T0 + 70 });
    } finally {
      tmp.cleanup();
    }
  });
});
