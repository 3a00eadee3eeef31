// Entity listing plans: a type listing walks the type index instead of every entity of the tenant, a
// filter's candidate list drives when there is one, and every plan gives the same page and count.

import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/lib/index.js';
import {
  LOCATION, matchesGeo, parseGeoQuery, parseQ, type Entity, type EntityFilter, type GeoPropertyAttr,
} from '../../../src/ngsi/index.js';
import { createEntityRepository } from '../../../src/store/entities/entities.js';
import { registerSqlFunctions } from '../../../src/store/entities/entity-filters.js';
import { createIriDictionary } from '../../../src/store/iris.js';
import { MIGRATIONS, runMigrations } from '../../../src/store/migrations/migrations.js';
import { registerQueryFunctions } from '../../../src/store/entities/query-values.js';
import { createTxRunner } from '../../../src/store/transactions.js';
import { createCacheGroup } from '../../../src/store/tx-cache.js';
import type { EntityListQuery, EntityRepository } from '../../../src/store/index.js';
import { entityId, Q_CASES, Q_FIXTURES } from '../../cases/q-cases.js';
import { mapper } from '../../ngsi/fake-mapper.js';
import { memoryStore } from '../helpers.js';

const ROOM = mapper.expandTerm('Room');
const SENSOR = mapper.expandTerm('Sensor');
const DEVICE = mapper.expandTerm('Device');
const TEMPERATURE = mapper.expandTerm('temperature');
const q = (text: string): EntityFilter => ({ kind: 'q', expr: parseQ(text, mapper) });
const ids = (r: { entities: Entity[] }): string[] => r.entities.map((e) => e.id);

describe('entity listing plans', () => {
  let db: Database.Database;
  let repo: EntityRepository;

  beforeEach(() => {
    db = new Database(':memory:');
    registerSqlFunctions(db);
    registerQueryFunctions(db);
    runMigrations(db, MIGRATIONS, silentLogger);
    const caches = createCacheGroup(db);
    repo = createEntityRepository(db, createIriDictionary(db, caches), createTxRunner(db, caches, silentLogger).transaction, () => undefined);
    for (const e of Q_FIXTURES) repo.insert('', e);
    for (const e of Q_FIXTURES) repo.insert('other', e);
    return () => {
      vi.restoreAllMocks();
      db.close();
    };
  });

  /** The query plan of the page statement a listing prepares (statements are cached by text). */
  function planOf(query: Omit<EntityListQuery, 'offset' | 'count'>): string[] {
    const spy = vi.spyOn(db, 'prepare');
    repo.list({ tenant: '' }, { ...query, offset: 0, count: false });
    const sql = spy.mock.calls.map(([text]) => text).find((text) => text.includes('LIMIT CAST(@limit AS INTEGER)'));
    spy.mockRestore();
    if (sql === undefined) throw new Error('no listing statement was prepared');
    const params = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((m) => [m[1], null]));
    const details = db.prepare<[Record<string, unknown>], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`).all(params).map((r) => r.detail);
    // A page in creation order is the subquery of one group_concat: its plan is the subquery's.
    const wrapper = /^CO-ROUTINE \((subquery-\d+)\)$/.exec(details[0] ?? '');
    if (wrapper && details[details.length - 1] === `SCAN (${wrapper[1]})`) return details.slice(1, -1);
    return details;
  }

  it('walks the type key in creation order for a type, never the table', () => {
    const details = planOf({ types: [ROOM], limit: 10 });
    expect(details).toEqual(['SEARCH t USING PRIMARY KEY (iri=?)', 'SEARCH e USING INTEGER PRIMARY KEY (rowid=?)']);
  });

  it('merges the type index ranges of several types in creation order, without a sort', () => {
    const details = planOf({ types: [ROOM, SENSOR, DEVICE], limit: 10 });
    expect(details).toContain('MERGE (UNION)');
    expect(details.filter((d) => d === 'SEARCH t USING PRIMARY KEY (iri=?)')).toHaveLength(3);
    expect(details.join('\n')).not.toMatch(/entities_live_order|TEMP B-TREE/);
  });

  it('starts from the q candidates and probes their types when q reads the values index', () => {
    const details = planOf({ types: [ROOM], filters: [q('temperature>20')], limit: 10 });
    expect(details[0]).toBe('SEARCH e USING INTEGER PRIMARY KEY (rowid=?)');
    expect(details.join('\n')).toMatch(/attr_values_num/);
    expect(details.join('\n')).toMatch(/SEARCH x USING PRIMARY KEY \(iri=\? AND entity=\?\)/);
    expect(details.join('\n')).not.toMatch(/TEMP B-TREE/);
  });

  describe('gives the same entities and count whatever the plan [§4.9, §4.17]', () => {
    const typesOf = (n: number): string[] => Q_FIXTURES.find((e) => e.id === entityId(n))?.types ?? [];
    const selections: Array<{ name: string; types: string[] }> = [
      { name: 'one type', types: [ROOM] },
      { name: 'several types', types: [SENSOR, DEVICE] },
    ];
    for (const { name, types } of selections) {
      it.each(Q_CASES)(`${name} with q=$q`, ({ q: text, expect: want }) => {
        const expected = want.filter((n) => typesOf(n).some((t) => types.includes(t))).map(entityId);
        const all = repo.list({ tenant: '' }, { types, filters: [q(text)], limit: 100, offset: 0, count: true });
        expect({ ids: ids(all), count: all.count }).toEqual({ ids: expected, count: expected.length });
        const page = repo.list({ tenant: '' }, { types, filters: [q(text)], limit: 2, offset: 1, count: false });
        expect(ids(page)).toEqual(expected.slice(1, 3));
      });
    }
  });

  it('combines types with filters that list no candidates, ids and attrs', () => {
    const idPattern: EntityFilter = { kind: 'idPattern', pattern: '^urn:ngsi-ld:Q:0[1-8]$' };
    const one = repo.list({ tenant: '' }, { types: [ROOM], filters: [idPattern], limit: 100, offset: 0, count: true });
    expect({ ids: ids(one), count: one.count }).toEqual({ ids: [1, 2, 3, 4].map(entityId), count: 4 });
    const several = repo.list({ tenant: '' }, { types: [SENSOR, ROOM], filters: [idPattern], limit: 2, offset: 3, count: true });
    expect({ ids: ids(several), count: several.count }).toEqual({ ids: [4, 6].map(entityId), count: 7 });
    const byId = repo.list({ tenant: '' }, { types: [SENSOR], ids: [entityId(11), entityId(1), entityId(7)], limit: 100, offset: 0, count: true });
    expect({ ids: ids(byId), count: byId.count }).toEqual({ ids: [7, 11].map(entityId), count: 2 });
    const withAttrs = repo.list({ tenant: '' }, { types: [ROOM, DEVICE], attrs: [TEMPERATURE], limit: 100, offset: 0, count: true });
    expect(withAttrs.count).toBe(ids(withAttrs).length);
    expect(ids(withAttrs).every((id) => Q_FIXTURES.find((e) => e.id === id)?.attrs[TEMPERATURE] !== undefined)).toBe(true);
  });

  it('lists more types than one merged walk takes, in creation order', () => {
    const types = Array.from({ length: 70 }, (_, i) => mapper.expandTerm(`Kind${i}`));
    types.forEach((t, i) => repo.insert('', { id: `urn:ngsi-ld:K:${i}`, types: [t, ROOM], attrs: {}, createdAt: 0, modifiedAt: 0 }));
    expect(planOf({ types, limit: 3 })[0]).toBe('SEARCH e USING INTEGER PRIMARY KEY (rowid=?)');
    const r = repo.list({ tenant: '' }, { types: [...types].reverse(), limit: 3, offset: 1, count: true });
    expect({ ids: ids(r), count: r.count }).toEqual({ ids: ['urn:ngsi-ld:K:1', 'urn:ngsi-ld:K:2', 'urn:ngsi-ld:K:3'], count: 70 });
  });

  it('leaves out deleted entities when walking the type index', () => {
    repo.markDeleted('', entityId(2), 1);
    const r = repo.list({ tenant: '' }, { types: [ROOM], limit: 100, offset: 0, count: true });
    expect(ids(r)).not.toContain(entityId(2));
    expect(r.count).toBe(ids(r).length);
  });
});

describe('entity listing: near from the shape index [§4.10]', () => {
  const T = Date.UTC(2024, 0, 1);
  const geo = (value: GeoPropertyAttr['value'], datasetId?: string): GeoPropertyAttr => ({
    kind: 'GeoProperty', value, createdAt: T, modifiedAt: T, sub: {}, ...(datasetId === undefined ? {} : { datasetId }),
  });
  /** A deterministic spread of positions within about 2 km of the centre (4.83, 45.75). */
  const position = (n: number): [number, number] => [4.83 + (((n * 7919) % 401) - 200) / 8000, 45.75 + (((n * 104729) % 401) - 200) / 11000];
  const shapes = (n: number): GeoPropertyAttr[] => {
    const [lon, lat] = position(n);
    switch (n % 5) {
      // A line whose ends coincide: a single position, as a point is.
      case 1: return [geo({ type: 'LineString', coordinates: [[lon, lat], [lon, lat]] })];
      // A far point and a nearby polygon: only the document answers for the polygon.
      case 2: return [geo({ type: 'Point', coordinates: [lon + 1, lat] }), geo({
        type: 'Polygon', coordinates: [[[lon, lat], [lon + 0.002, lat], [lon + 0.002, lat + 0.002], [lon, lat]]],
      }, 'urn:ngsi-ld:Dataset:shape')];
      case 3: return [geo({ type: 'Point', coordinates: [lon, lat, 120] }), geo({ type: 'Point', coordinates: [lat, lon] }, 'urn:ngsi-ld:Dataset:swapped')];
      default: return [geo({ type: 'Point', coordinates: [lon, lat] })];
    }
  };
  const places: Entity[] = Array.from({ length: 150 }, (_, n) => ({
    id: `urn:ngsi-ld:Place:${n}`, types: [n % 2 === 0 ? ROOM : SENSOR], attrs: { [LOCATION]: shapes(n) }, createdAt: T, modifiedAt: T,
  }));

  it.each(['near;maxDistance==600', 'near;maxDistance==1200', 'near;maxDistance==2000', 'near;minDistance==900'])(
    '%s selects what the in-memory evaluator selects, with and without a type', (georel) => {
      const store = memoryStore();
      for (const e of places) store.entities.insert('', e);
      const query = parseGeoQuery({ georel, geometry: 'Point', coordinates: '[4.83,45.75]' }, mapper);
      for (const types of [[], [ROOM]]) {
        const expected = places.filter((e) => (types.length === 0 || types.some((t) => e.types.includes(t))) && matchesGeo(query, e)).map((e) => e.id);
        const all = store.entities.list({ tenant: '' }, { types, filters: [{ kind: 'geo', query }], limit: 1000, offset: 0, count: true });
        expect({ ids: ids(all), count: all.count }).toEqual({ ids: expected, count: expected.length });
        expect(expected.length).toBeGreaterThan(types.length === 0 ? 5 : 2);
      }
      store.close();
    },
  );
});
