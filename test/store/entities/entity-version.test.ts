// Entity row versions: every write of a row's representation stores a number never used before, the
// database refuses a change that keeps it, and listings never serve a kept decoding of an older row.

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/index.js';
import { entity, fileStore, memoryStore, NS, property, rawRead, tempDir } from '../helpers.js';

const T = NS + 'T';
const TEMP = NS + 'temperature';
const listAll = (store: Store): unknown[] =>
  store.entities.list({ tenant: '' }, { types: [T], limit: 100, offset: 0, count: false }).entities.map((e) => [e.id, e.attrs[TEMP]?.[0]]);

describe('entity row versions', () => {
  const stores: Store[] = [];
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const s of stores.splice(0)) s.close();
    for (const c of cleanups.splice(0)) c();
  });

  it('stores a greater version at each insert, update and soft delete, surviving a reopen', () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const versions = (): number[] => rawRead(tmp.file, (db) => db.prepare<[], number>('SELECT version FROM entities ORDER BY rowid').pluck().all());
    let store = fileStore(tmp.file);
    store.entities.insert('', entity('urn:a', [T], { [TEMP]: [property(1)] }));
    store.entities.insert('', entity('urn:b', [T], { [TEMP]: [property(1)] }));
    const [a0, b0] = versions();
    store.entities.update('', entity('urn:a', [T], { [TEMP]: [property(2)] }));
    const [a1] = versions();
    expect(b0!).toBeGreaterThan(a0!);
    expect(a1!).toBeGreaterThan(b0!);
    store.close();
    store = fileStore(tmp.file);
    stores.push(store);
    store.entities.markDeleted('', 'urn:b', 5);
    const [, b1] = versions();
    expect(b1!).toBeGreaterThan(a1!);
  });

  it('refuses a change of the representation that keeps the version, whoever writes it', () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const store = fileStore(tmp.file);
    store.entities.insert('', entity('urn:a', [T]));
    store.close();
    const db = new Database(tmp.file);
    try {
      expect(() => db.prepare("UPDATE entities SET doc = '{}' WHERE id = 'urn:a'").run()).toThrow(/without a new version/);
      expect(() => db.prepare("UPDATE entities SET modified_at = 9 WHERE id = 'urn:a'").run()).toThrow(/without a new version/);
      expect(() => db.prepare("UPDATE entities SET deleted_at = 9 WHERE id = 'urn:a'").run()).toThrow(/without a new version/);
      expect(() => db.prepare("UPDATE entities SET doc = '{}', version = version - 1 WHERE id = 'urn:a'").run()).toThrow(/without a new version/);
      expect(db.prepare("UPDATE entities SET doc = '{}', version = version + 1 WHERE id = 'urn:a'").run().changes).toBe(1);
      // Columns outside the representation need no new version.
      expect(db.prepare("UPDATE entities SET owner = 'x' WHERE id = 'urn:a'").run().changes).toBe(1);
    } finally {
      db.close();
    }
  });

  it('lists the current row after updates, a soft delete, and a purge whose row id is used again', () => {
    const store = memoryStore();
    stores.push(store);
    store.entities.insert('', entity('urn:a', [T], { [TEMP]: [property(1)] }));
    store.entities.insert('', entity('urn:b', [T], { [TEMP]: [property(1)] }));
    expect(listAll(store)).toMatchObject([['urn:a', { value: 1 }], ['urn:b', { value: 1 }]]);
    store.entities.update('', entity('urn:b', [T], { [TEMP]: [property(2)] }));
    expect(listAll(store)).toMatchObject([['urn:a', { value: 1 }], ['urn:b', { value: 2 }]]);
    // The last row goes: SQLite hands its row id to the next insert, here of the same entity id.
    expect(store.archive.purge('', 'urn:b', 3)).toBe(true);
    expect(listAll(store)).toMatchObject([['urn:a', { value: 1 }]]);
    store.entities.insert('', entity('urn:b', [T], { [TEMP]: [property(3)] }));
    expect(listAll(store)).toMatchObject([['urn:a', { value: 1 }], ['urn:b', { value: 3 }]]);
    store.entities.markDeleted('', 'urn:a', 4);
    expect(listAll(store)).toMatchObject([['urn:b', { value: 3 }]]);
  });

  it('serves the kept decoding of an unchanged row', () => {
    const store = memoryStore();
    stores.push(store);
    store.entities.insert('', entity('urn:a', [T], { [TEMP]: [property(1)] }));
    const first = store.entities.list({ tenant: '' }, { types: [T], limit: 10, offset: 0, count: false }).entities[0];
    const again = store.entities.list({ tenant: '' }, { types: [T], limit: 10, offset: 0, count: false }).entities[0];
    expect(again).toBe(first);
    store.entities.update('', entity('urn:a', [T], { [TEMP]: [property(1)] }));
    expect(store.entities.list({ tenant: '' }, { types: [T], limit: 10, offset: 0, count: false }).entities[0]).not.toBe(first);
  });
});
