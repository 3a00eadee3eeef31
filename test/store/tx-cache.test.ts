// Row caches stay bounded: past their size the oldest committed entries are forgotten.

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createCacheGroup } from '../../src/store/tx-cache.js';

describe('transaction-aware caches', () => {
  it('forget the oldest committed entries past their size', () => {
    const db = new Database(':memory:');
    const group = createCacheGroup(db);
    const cache = group.create<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 10);
    cache.set('c', 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([10, undefined, 3]);
    db.close();
  });

  it('keep entries learnt in a transaction pending until commit, and drop them on discard', () => {
    const db = new Database(':memory:');
    const group = createCacheGroup(db);
    const cache = group.create<string, number>(10);
    db.exec('BEGIN');
    cache.set('x', 1);
    expect(cache.get('x')).toBe(1);
    group.discard();
    db.exec('ROLLBACK');
    expect(cache.get('x')).toBeUndefined();
    db.exec('BEGIN');
    cache.set('y', 2);
    db.exec('COMMIT');
    group.commit();
    expect(cache.get('y')).toBe(2);
    db.close();
  });
});
