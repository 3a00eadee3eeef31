// The geo index: R*Tree rows kept in step with entity writes, the backfill of migration 2, and query
// plans that start from the R*Tree.

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/lib/index.js';
import { LOCATION, parseGeoQuery, type Entity, type EntityFilter } from '../../../src/ngsi/index.js';
import { createEntityRepository } from '../../../src/store/entities/entities.js';
import { encodeEntityDoc } from '../../../src/store/entities/entity-doc.js';
import { registerSqlFunctions, translateFilter, type FilterContext } from '../../../src/store/entities/entity-filters.js';
import { registerGeoSqlFunctions } from '../../../src/store/entities/geo-sql.js';
import { createIriDictionary, type IriDictionary } from '../../../src/store/iris.js';
import { MIGRATIONS, runMigrations } from '../../../src/store/migrations/migrations.js';
import { createTxRunner } from '../../../src/store/transactions.js';
import { createCacheGroup } from '../../../src/store/tx-cache.js';
import type { EntityRepository } from '../../../src/store/types.js';
import { at, LYON_FIXTURES, Q } from '../../cases/geo-cases.js';
import { mapper } from '../../ngsi/fake-mapper.js';
import { entity, NS, T0 } from '../helpers.js';

interface Parts {
  db: Database.Database;
  iris: IriDictionary;
  entities: EntityRepository;
}

/** A store assembled from its parts, to look at its tables and query plans. */
function openParts(): Parts {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  registerSqlFunctions(db);
  registerGeoSqlFunctions(db);
  runMigrations(db, MIGRATIONS, silentLogger);
  const caches = createCacheGroup(db);
  const iris = createIriDictionary(db, caches);
  const runner = createTxRunner(db, caches, silentLogger);
  return { db, iris, entities: createEntityRepository(db, iris, runner.transaction, () => undefined) };
}

const located = (id: string, coordinates: number[], extra: Entity['attrs'] = {}): Entity =>
  entity(id, [NS + 'Place'], { [LOCATION]: [{ kind: 'GeoProperty', value: { type: 'Point', coordinates }, createdAt: T0, modifiedAt: T0, sub: {} }], ...extra });

interface TreeRow {
  id: number;
  entity: number;
  minLon: number;
  minLat: number;
}
const treeRows = (db: Database.Database): TreeRow[] => db.prepare<[], TreeRow>('SELECT id, entity, minLon, minLat FROM geo_index ORDER BY id').all();

describe('geo index maintenance', () => {
  let parts: Parts;
  beforeEach(() => {
    parts = openParts();
  });
  afterEach(() => parts.db.close());

  it('adds one R*Tree row per GeoProperty instance of every attribute', () => {
    parts.entities.insert('', located('urn:a', [4.83, 45.75], {
      [NS + 'area']: [{ kind: 'GeoProperty', value: { type: 'Polygon', coordinates: [[[4.8, 45.7], [4.9, 45.7], [4.9, 45.8], [4.8, 45.7]]] }, createdAt: T0, modifiedAt: T0, sub: {} }],
      [NS + 'name']: [{ kind: 'Property', value: { type: 'Point', coordinates: [1, 2] }, createdAt: T0, modifiedAt: T0, sub: {} }],
    }));
    expect(treeRows(parts.db)).toHaveLength(2);
  });

  it('keeps rows whose box did not change and replaces the ones that moved', () => {
    const e = located('urn:a', [4.83, 45.75]);
    parts.entities.insert('', e);
    const [before] = treeRows(parts.db);
    parts.entities.update('', { ...e, modifiedAt: T0 + 1 });
    expect(treeRows(parts.db)).toEqual([before]);
    parts.entities.update('', located('urn:a', [4.85, 45.76]));
    const after = treeRows(parts.db);
    expect(after).toHaveLength(1);
    expect(after[0]?.id).not.toBe(before?.id);
    expect(after[0]?.minLon).toBeCloseTo(4.85, 4);
  });

  it('drops the rows of a soft-deleted entity and of a removed row', () => {
    parts.entities.insert('', located('urn:a', [4.83, 45.75]));
    parts.entities.insert('', located('urn:b', [4.84, 45.75]));
    parts.entities.markDeleted('', 'urn:a', T0 + 1);
    expect(treeRows(parts.db).map((r) => r.entity)).toHaveLength(1);
    parts.db.prepare("DELETE FROM entities WHERE id = 'urn:b'").run();
    expect(treeRows(parts.db)).toEqual([]);
    expect(parts.db.prepare('SELECT count(*) FROM geo_shapes').pluck().get()).toBe(0);
  });

  it('indexes the entities that exist when migration 2 runs', () => {
    const db = new Database(':memory:');
    runMigrations(db, MIGRATIONS.slice(0, 1), silentLogger);
    const insert = db.prepare('INSERT INTO entities (tenant, id, doc, created_at, modified_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?)');
    insert.run('', 'urn:live', encodeEntityDoc(located('urn:live', [4.83, 45.75])), T0, T0, null);
    insert.run('', 'urn:gone', encodeEntityDoc(located('urn:gone', [4.84, 45.75])), T0, T0, T0);
    insert.run('t2', 'urn:live', encodeEntityDoc(located('urn:live', [4.85, 45.75])), T0, T0, null);
    runMigrations(db, MIGRATIONS, silentLogger);
    const rows = treeRows(db);
    expect(rows.map((r) => r.entity)).toEqual([1, 3]);
    expect(rows[1]?.minLon).toBeCloseTo(4.85, 4);
    db.close();
  });
});

describe('geo filter SQL', () => {
  let parts: Parts;
  beforeEach(() => {
    parts = openParts();
    for (const e of LYON_FIXTURES) parts.entities.insert('', e);
  });
  afterEach(() => parts.db.close());

  const plan = (filter: EntityFilter): string[] => {
    let n = 0;
    const ctx: FilterContext = { db: parts.db, iris: parts.iris, param: (p) => `${p}${n++}` };
    const fragment = translateFilter(filter, ctx);
    // The same statement shape as the entity repository's page query.
    const sql = `EXPLAIN QUERY PLAN SELECT e.id FROM entities e NOT INDEXED WHERE e.tenant = @tenant AND e.deleted_at IS NULL AND (${fragment.sql}) ORDER BY e.rowid LIMIT 20 OFFSET 0`;
    return parts.db.prepare<[Record<string, unknown>], { detail: string }>(sql).all({ ...fragment.params, tenant: '' }).map((r) => r.detail);
  };

  // R*Tree plan index 2 is a box search; the constraint string names each constrained coordinate.
  const usesTree = (details: string[]): boolean => details.some((d) => /^SCAN g VIRTUAL TABLE INDEX 2:([A-H]\d)+$/.test(d));
  // The candidates are looked up by rowid, never by scanning the tenant's entities.
  const looksUpCandidates = (details: string[]): boolean => details.some((d) => /^SEARCH e .*rowid=\?/.test(d)) && !details.some((d) => d.startsWith('SCAN e'));

  it('starts a within query from the R*Tree', () => {
    const details = plan({ kind: 'geo', query: parseGeoQuery({ georel: 'within', geometry: 'Polygon', coordinates: Q }, mapper) });
    expect(usesTree(details)).toBe(true);
    expect(looksUpCandidates(details)).toBe(true);
  });

  it('starts a near;maxDistance query from the R*Tree, with two boxes across the antimeridian', () => {
    const near = plan({ kind: 'geo', query: parseGeoQuery({ georel: 'near;maxDistance==500', geometry: 'Point', coordinates: at(3, 3) }, mapper) });
    expect(usesTree(near)).toBe(true);
    const across = plan({ kind: 'geo', query: parseGeoQuery({ georel: 'near;maxDistance==5000', geometry: 'Point', coordinates: '[179.99, 0]' }, mapper) });
    expect(across.filter((d) => /^SCAN g VIRTUAL TABLE INDEX 2:/.test(d))).toHaveLength(2);
  });

  it('checks every entity with the geoproperty when no box bounds the matches (disjoint)', () => {
    const details = plan({ kind: 'geo', query: parseGeoQuery({ georel: 'disjoint', geometry: 'Polygon', coordinates: Q }, mapper) });
    expect(usesTree(details)).toBe(false);
    expect(details.some((d) => d.includes('geo_shapes_entity'))).toBe(true);
  });

  it('binds the query and never writes its values into the SQL text', () => {
    let n = 0;
    const ctx: FilterContext = { db: parts.db, iris: parts.iris, param: (p) => `${p}${n++}` };
    const query = parseGeoQuery({ georel: 'near;maxDistance==1234.5', geometry: 'Point', coordinates: '[4.8123, 45.7654]' }, mapper);
    const fragment = translateFilter({ kind: 'geo', query }, ctx);
    expect(fragment.sql).not.toMatch(/1234|4\.81|45\.76|ngsi-ld/);
  });

  it('matches nothing when no entity ever had the geoproperty', () => {
    const query = parseGeoQuery({ georel: 'disjoint', geometry: 'Point', coordinates: at(3, 3), geoproperty: 'operationSpace' }, mapper);
    expect(parts.entities.list({ tenant: '' }, { filters: [{ kind: 'geo', query }], limit: 10, offset: 0, count: true })).toEqual({ entities: [], count: 0 });
  });

  it('combines with the type and other filters (AND)', () => {
    const query = parseGeoQuery({ georel: 'within', geometry: 'Polygon', coordinates: Q }, mapper);
    const out = parts.entities.list({ tenant: '' }, {
      filters: [{ kind: 'geo', query }, { kind: 'idPattern', pattern: 'point' }], limit: 10, offset: 0, count: true,
    });
    expect(out.entities.map((e) => e.id)).toEqual(['urn:ngsi-ld:Place:pointInside', 'urn:ngsi-ld:Place:pointInHole']);
    expect(parts.entities.list({ tenant: '' }, { types: [NS + 'Other'], filters: [{ kind: 'geo', query }], limit: 10, offset: 0, count: true }).count).toBe(0);
  });
});
