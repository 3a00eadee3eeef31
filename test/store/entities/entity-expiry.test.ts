// The expiry of transient entities in the store (migration 26): expiresAt round-trips in the document,
// the expires_at column follows every write of it and is cleared by a delete, the entities due are
// found over all tenants earliest first by a range scan of the partial index, and permanent entities
// never enter that index.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entity, fileStore, NS, rawRead, T0, tempDir } from '../helpers.js';
import type { Store } from '../../../src/store/index.js';

const ROOM = NS + 'Room';
const id = (n: number): string => `urn:ngsi-ld:Room:${n}`;
const transient = (n: number, at: number, text?: string) =>
  ({ ...entity(id(n), [ROOM]), expiresAt: at, ...(text === undefined ? {} : { expiresAtText: text }) });

let tmp: ReturnType<typeof tempDir>;
let store: Store;
beforeEach(() => {
  tmp = tempDir();
  store = fileStore(tmp.file);
});
afterEach(() => {
  if (store.isOpen()) store.close();
  tmp.cleanup();
});

/** The rows of the expiry index, read from the file. */
const indexed = (): Array<{ id: string; expires_at: number }> => {
  store.close();
  return rawRead(tmp.file, (db) => db.prepare('SELECT id, expires_at FROM entities INDEXED BY entities_expiry WHERE expires_at IS NOT NULL ORDER BY id').all() as Array<{ id: string; expires_at: number }>);
};

describe('store entities: expiresAt', () => {
  it('round-trips expiresAt and its text in the entity', () => {
    const e = transient(1, T0 + 1_000, '2026-05-01T10:00:01Z');
    store.entities.insert('', e);
    expect(store.entities.get({ tenant: '' }, id(1))).toEqual(e);
  });

  it('lists the entities due over every tenant, earliest first, at most `limit`; nextExpiry is the earliest', () => {
    store.entities.insert('', transient(1, T0 + 3_000));
    store.entities.insert('east', transient(2, T0 + 1_000));
    store.entities.insert('', transient(3, T0 + 2_000));
    store.entities.insert('', transient(4, T0 + 9_000));
    store.entities.insert('', entity(id(5), [ROOM]));
    expect(store.entities.nextExpiry()).toBe(T0 + 1_000);
    expect(store.entities.dueToExpire(T0 + 3_000, 10)).toEqual([
      { tenant: 'east', id: id(2), expiresAt: T0 + 1_000 },
      { tenant: '', id: id(3), expiresAt: T0 + 2_000 },
      { tenant: '', id: id(1), expiresAt: T0 + 3_000 },
    ]);
    expect(store.entities.dueToExpire(T0 + 3_000, 2).map((d) => d.id)).toEqual([id(2), id(3)]);
    expect(store.entities.dueToExpire(T0 + 999, 10)).toEqual([]);
  });

  it('follows an update that moves or removes expiresAt, and a delete clears it', () => {
    const a = transient(1, T0 + 1_000);
    const b = transient(2, T0 + 1_000);
    store.entities.insert('', a);
    store.entities.insert('', b);
    store.entities.insert('', transient(3, T0 + 1_000));
    store.entities.update('', { ...a, expiresAt: T0 + 50_000 }, a);
    const { expiresAt: _at, ...permanent } = b;
    store.entities.update('', permanent, b);
    store.entities.markDeleted('', id(3), T0 + 10, true);
    expect(store.entities.dueToExpire(T0 + 10_000, 10)).toEqual([]);
    expect(store.entities.nextExpiry()).toBe(T0 + 50_000);
    expect(indexed()).toEqual([{ id: id(1), expires_at: T0 + 50_000 }]);
  });

  it('keeps permanent entities out of the expiry index, through insert, update and delete', () => {
    const e = entity(id(1), [ROOM]);
    store.entities.insert('', e);
    store.entities.update('', { ...e, modifiedAt: T0 + 1 }, e);
    store.entities.insert('', entity(id(2), [ROOM]));
    store.entities.markDeleted('', id(2), T0 + 2, false);
    expect(store.entities.nextExpiry()).toBeUndefined();
    expect(indexed()).toEqual([]);
  });

  it('finds the entities due with a range scan of the expiry index', () => {
    store.close();
    const plan = rawRead(tmp.file, (db) => db.prepare(
      'EXPLAIN QUERY PLAN SELECT tenant, id, expires_at FROM entities WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT 10',
    ).all(T0) as Array<{ detail: string }>);
    const text = plan.map((p) => p.detail).join('\n');
    expect(text).toMatch(/^SEARCH entities USING INDEX entities_expiry \(expires_at[<>]/);
    expect(text).not.toContain('TEMP B-TREE');
  });
});
