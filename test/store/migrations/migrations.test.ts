// Numbered migrations tracked in user_version: applied once, each in its own transaction.

import { beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/lib/index.js';
import { MIGRATIONS, runMigrations, type Migration } from '../../../src/store/migrations/migrations.js';
import { fileStore, memoryStore, rawRead, tempDir } from '../helpers.js';
import Database from 'better-sqlite3';
import { shapeBounds, toShape, type AttributeKind } from '../../../src/ngsi/index.js';
import { KIND_CODES } from '../../../src/store/entities/attribute-kinds.js';
import { geoBoundsOf } from '../../../src/store/migrations/migration-002-geo-bounds.js';
import { KIND_CODES as MIGRATION_4_CODES } from '../../../src/store/migrations/migration-004-attribute-kinds.js';

describe('store migrations', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
    return tmp.cleanup;
  });

  it('creates the parent directory and applies every migration on a new file', () => {
    const store = fileStore(tmp.file);
    store.close();
    const version = rawRead(tmp.file, (db) => db.pragma('user_version', { simple: true }));
    expect(version).toBe(MIGRATIONS[MIGRATIONS.length - 1]?.version);
    const tables = rawRead(tmp.file, (db) =>
      db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all());
    expect(tables).toEqual(expect.arrayContaining(['contexts', 'entities', 'entity_attr_kinds', 'entity_types', 'history_buckets', 'iris', 'series']));
  });

  it('applies nothing twice when a file is opened again', () => {
    fileStore(tmp.file).close();
    const db = new Database(tmp.file);
    try {
      expect(runMigrations(db, MIGRATIONS, silentLogger)).toBe(0);
    } finally {
      db.close();
    }
    const store = fileStore(tmp.file);
    expect(store.isOpen()).toBe(true);
    store.close();
  });

  it('applies only the migrations newer than the file, each in its own transaction', () => {
    const db = new Database(':memory:');
    const ran: number[] = [];
    const list: Migration[] = [
      { version: 1, up: (d) => { ran.push(1); d.exec('CREATE TABLE a (x)'); } },
      { version: 2, up: (d) => { ran.push(2); d.exec('CREATE TABLE b (x)'); } },
    ];
    expect(runMigrations(db, list.slice(0, 1), silentLogger)).toBe(1);
    expect(runMigrations(db, list, silentLogger)).toBe(1);
    expect(ran).toEqual([1, 2]);
    const failing: Migration[] = [...list, { version: 3, up: (d) => { d.exec('CREATE TABLE c (x)'); throw new Error('boom'); } }];
    expect(() => runMigrations(db, failing, silentLogger)).toThrow('boom');
    expect(db.pragma('user_version', { simple: true })).toBe(2);
    expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'c'").pluck().get()).toBe(0);
    db.close();
  });

  it('refuses a database written by a newer schema', () => {
    const db = new Database(':memory:');
    db.pragma('user_version = 99');
    expect(() => runMigrations(db, MIGRATIONS, silentLogger)).toThrow(/newer/);
    db.close();
  });

  it('refuses a migration list whose versions do not increase', () => {
    const db = new Database(':memory:');
    const noop = (): void => undefined;
    expect(() => runMigrations(db, [{ version: 2, up: noop }, { version: 2, up: noop }], silentLogger)).toThrow(/above 2/);
    expect(() => runMigrations(db, [{ version: 0, up: noop }], silentLogger)).toThrow(/above 0/);
    db.close();
  });

  it('applies a list with a reserved gap, and applies what follows when the database stands after the gap', () => {
    const db = new Database(':memory:');
    const ran: number[] = [];
    const step = (v: number): Migration => ({ version: v, up: () => { ran.push(v); } });
    expect(runMigrations(db, [step(1), step(3)], silentLogger)).toBe(2);
    expect(db.pragma('user_version', { simple: true })).toBe(3);
    expect(runMigrations(db, [step(1), step(2), step(3), step(4)], silentLogger)).toBe(1);
    expect(ran).toEqual([1, 3, 4]);
    db.close();
  });

  it('opens an in-memory database with foreign keys on', () => {
    const store = memoryStore();
    expect(store.isOpen()).toBe(true);
    store.close();
  });
});

describe('frozen copies inside migrations', () => {
  it('the live attribute-kind codes keep every code migration 4 wrote', () => {
    for (const [kind, code] of Object.entries(MIGRATION_4_CODES)) expect(KIND_CODES[kind as AttributeKind]).toBe(code);
  });

  it("migration 2's geometry boxes are the live geo index's boxes", () => {
    const values: unknown[] = [
      { type: 'Point', coordinates: [1.5, 2.5] },
      { type: 'Point', coordinates: [1, 2, 30], bbox: [0, 0, 1, 1] },
      { type: 'Polygon', coordinates: [[[0, 0], [4, 0], [4, 3], [0, 0]]] },
      '{"type":"LineString","coordinates":[[-10,-5],[20,7,100]]}',
      { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [-1, 0] }, { type: 'MultiPoint', coordinates: [[3, 4]] }] },
      { type: 'MultiPolygon', coordinates: [[[[1, 1], [2, 1], [2, 2], [1, 1]]]] },
      { type: 'MultiLineString', coordinates: [[[5, 6], [7, 8]], [[9, 10], [11, -12]]] },
      { type: 'Point', coordinates: [200, 0] },
      { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1]]] },
      { type: 'LineString', coordinates: [[0, 0]] },
      { type: 'GeometryCollection', geometries: [] },
      { type: 'Circle', coordinates: [0, 0] },
      '[1, 2]',
      'not json',
      42,
      null,
    ];
    for (const value of values) {
      const shape = toShape(value);
      expect(geoBoundsOf(value), JSON.stringify(value)).toEqual(shape && shapeBounds(shape));
    }
  });
});
