// The query-values index behind q: query plans that read it instead of the JSON documents, and rows
// kept in step with inserts, updates and deletes [§4.9].

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/lib/index.js';
import { parseQ, type Entity, type EntityFilter } from '../../../src/ngsi/index.js';
import { createEntityRepository } from '../../../src/store/entities/entities.js';
import { registerSqlFunctions, translateFilter } from '../../../src/store/entities/entity-filters.js';
import { createIriDictionary, type IriDictionary } from '../../../src/store/iris.js';
import { MIGRATIONS, runMigrations } from '../../../src/store/migrations/migrations.js';
import { createTxRunner } from '../../../src/store/transactions.js';
import { createCacheGroup } from '../../../src/store/tx-cache.js';
import type { EntityRepository } from '../../../src/store/index.js';
import { mapper } from '../../ngsi/fake-mapper.js';
import { entity, property } from '../helpers.js';

const TEMP = mapper.expandTerm('temperature');
const NAME = mapper.expandTerm('name');
const ids = (r: { entities: Entity[] }): string[] => r.entities.map((e) => e.id);

describe('query-values index', () => {
  let db: Database.Database;
  let iris: IriDictionary;
  let repo: EntityRepository;

  beforeEach(() => {
    db = new Database(':memory:');
    registerSqlFunctions(db);
    runMigrations(db, MIGRATIONS, silentLogger);
    const caches = createCacheGroup(db);
    iris = createIriDictionary(db, caches);
    repo = createEntityRepository(db, iris, createTxRunner(db, caches, silentLogger).transaction, () => undefined);
    return () => db.close();
  });

  const q = (text: string): EntityFilter => ({ kind: 'q', expr: parseQ(text, mapper) });
  const list = (text: string): string[] => ids(repo.list({ tenant: '' }, { filters: [q(text)], limit: 100, offset: 0, count: false }));
  const rows = (): unknown[] => db.prepare('SELECT inst, seq, typ, num, str FROM attr_values ORDER BY entity, attr, inst, seq').all();

  function plan(text: string): string {
    let n = 0;
    const fragment = translateFilter(q(text), { db, iris, param: (p) => `${p}${n++}` });
    const sql = `EXPLAIN QUERY PLAN SELECT e.id FROM entities e NOT INDEXED WHERE e.tenant = @tenant AND e.deleted_at IS NULL AND (${fragment.sql}) ORDER BY e.rowid LIMIT 20`;
    const steps = db.prepare<[Record<string, unknown>], { detail: string }>(sql).all({ tenant: '', ...fragment.params });
    return steps.map((s) => s.detail).join('\n');
  }

  it('answers a numeric comparison from the attr_values index, not from the documents', () => {
    for (let i = 0; i < 50; i++) repo.insert('', entity(`urn:ngsi-ld:E:${i}`, [mapper.expandTerm('Room')], { [TEMP]: [property(i)] }));
    const steps = plan('temperature>40');
    expect(steps).toMatch(/USING COVERING INDEX attr_values_num \(attr=\? AND typ=\? AND num>\?\)/);
    expect(steps).not.toMatch(/json_each|json_tree/);
    expect(list('temperature>46')).toEqual(['urn:ngsi-ld:E:47', 'urn:ngsi-ld:E:48', 'urn:ngsi-ld:E:49']);
  });

  it('answers string equality from the string index', () => {
    repo.insert('', entity('urn:ngsi-ld:E:1', [], { [NAME]: [property('Alpha')] }));
    expect(plan('name=="Alpha"')).toMatch(/INDEX attr_values_str \(attr=\? AND str=\?/);
    expect(list('name=="Alpha"')).toEqual(['urn:ngsi-ld:E:1']);
  });

  it('stores one row per element, and a marker row for an instance without any', () => {
    repo.insert('', entity('urn:ngsi-ld:E:1', [], {
      [TEMP]: [property([1, 'x', true, { a: 1 }]), property({ a: 1 }, { datasetId: 'urn:ngsi-ld:Dataset:a' })],
    }));
    expect(rows()).toEqual([
      { inst: 0, seq: 0, typ: 1, num: 1, str: null },
      { inst: 0, seq: 1, typ: 2, num: null, str: 'x' },
      { inst: 0, seq: 2, typ: 3, num: 1, str: null },
      { inst: 1, seq: 0, typ: 0, num: null, str: null },
    ]);
  });

  it('keeps the rows in step with updates and soft deletes', () => {
    repo.insert('', entity('urn:ngsi-ld:E:1', [], { [TEMP]: [property(10)], [NAME]: [property('2024-01-01T00:00:00Z')] }));
    expect(list('temperature==10')).toEqual(['urn:ngsi-ld:E:1']);
    expect(list('name==2024-01-01T00:00:00Z')).toEqual(['urn:ngsi-ld:E:1']);
    repo.update('', entity('urn:ngsi-ld:E:1', [], { [TEMP]: [property(12)] }));
    expect(list('temperature==10')).toEqual([]);
    expect(list('temperature==12')).toEqual(['urn:ngsi-ld:E:1']);
    expect(list('name')).toEqual([]);
    expect(rows()).toEqual([{ inst: 0, seq: 0, typ: 1, num: 12, str: null }]);
    repo.markDeleted('', 'urn:ngsi-ld:E:1', 1);
    expect(rows()).toEqual([]);
    expect(list('temperature==12')).toEqual([]);
  });

  it('treats attributes never stored as absent without touching the index', () => {
    repo.insert('', entity('urn:ngsi-ld:E:1', [], { [TEMP]: [property(1)] }));
    expect(list('neverSeen==1')).toEqual([]);
    expect(list('neverSeen!=1')).toEqual([]);
    expect(list('neverSeen.observedAt')).toEqual([]);
    expect(list('!neverSeen')).toEqual(['urn:ngsi-ld:E:1']);
    expect(list('!neverSeen;temperature==1')).toEqual(['urn:ngsi-ld:E:1']);
    expect(iris.lookup(mapper.expandTerm('neverSeen'))).toBeUndefined();
  });

  it('binds every value: the SQL text does not depend on the literals', () => {
    let n = 0;
    const param = (p: string): string => `${p}${n++}`;
    const a = translateFilter(q('name=="x\' OR 1=1 --"'), { db, iris: { intern: () => 1, lookup: () => 1 }, param });
    n = 0;
    const b = translateFilter(q('name=="y"'), { db, iris: { intern: () => 1, lookup: () => 1 }, param });
    expect(a.sql).toBe(b.sql);
    expect(a.sql).not.toContain('OR 1=1');
    expect(Object.values(a.params)).toContain("x' OR 1=1 --");
  });
});

describe('migration 6', () => {
  it('keeps the values and types of a version-5 database, keeps numbers out of the string index, and queries still find them', () => {
    const db = new Database(':memory:');
    try {
      registerSqlFunctions(db);
      runMigrations(db, MIGRATIONS.slice(0, 5), silentLogger);
      // Today's repository writes the version-5 rows; the columns (and index) of later migrations it
      // needs are there only while it writes.
      db.exec('ALTER TABLE entities ADD COLUMN version INTEGER NOT NULL DEFAULT 0');
      db.exec('ALTER TABLE entities ADD COLUMN expires_at INTEGER');
      db.exec('CREATE INDEX entities_expiry ON entities (expires_at) WHERE expires_at IS NOT NULL');
      const caches = createCacheGroup(db);
      const iris = createIriDictionary(db, caches);
      const repo = createEntityRepository(db, iris, createTxRunner(db, caches, silentLogger).transaction, () => undefined);
      repo.insert('', entity('urn:ngsi-ld:E:1', [mapper.expandTerm('Room')], { [TEMP]: [property(10)], [NAME]: [property('Alpha')] }));
      repo.insert('', entity('urn:ngsi-ld:E:2', [], { [TEMP]: [property(30)] }));
      const before = db.prepare('SELECT entity, attr, inst, seq, typ, num, str FROM attr_values ORDER BY entity, attr').all();
      db.exec('ALTER TABLE entities DROP COLUMN version');
      db.exec('DROP INDEX entities_expiry');
      db.exec('ALTER TABLE entities DROP COLUMN expires_at');
      runMigrations(db, MIGRATIONS, silentLogger);
      expect(db.prepare('SELECT entity, attr, inst, seq, typ, num, str FROM attr_values ORDER BY entity, attr').all()).toEqual(before);
      const indexes = db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'attr_values' ORDER BY name").pluck().all();
      expect(indexes).toEqual(['attr_values_num', 'attr_values_str']);

      // The string index is partial: numbers never enter it.
      expect(db.prepare("SELECT count(*) FROM attr_values INDEXED BY attr_values_str WHERE str IS NOT NULL").pluck().get()).toBe(1);
      const q = (text: string): EntityFilter => ({ kind: 'q', expr: parseQ(text, mapper) });
      const fresh = createEntityRepository(db, iris, createTxRunner(db, caches, silentLogger).transaction, () => undefined);
      expect(ids(fresh.list({ tenant: '' }, { filters: [q('temperature>20')], limit: 10, offset: 0, count: false }))).toEqual(['urn:ngsi-ld:E:2']);
      expect(ids(fresh.list({ tenant: '' }, { filters: [q('name=="Alpha"')], limit: 10, offset: 0, count: false }))).toEqual(['urn:ngsi-ld:E:1']);
      // The type rows moved to their (type, entity) table.
      expect(ids(fresh.list({ tenant: '' }, { types: [mapper.expandTerm('Room')], limit: 10, offset: 0, count: false }))).toEqual(['urn:ngsi-ld:E:1']);
      expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'entity_types_iri'").pluck().get()).toBe(0);
    } finally {
      db.close();
    }
  });
});
