// Row caches stay bounded: past half their size a generation of committed entries is forgotten.

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createCacheGroup } from '../../src/store/tx-cache.js';

describe('transaction-aware caches', () => {
  it('hold at most their size, forget the least recently used generation, and keep a hit young', () => {
    const db = new Database(':memory:');
    const group = createCacheGroup(db);
    const cache = group.create<string, number>(4);
    cache.set('a', 1);
    cache.set('b', 2);
    // The young generation is full (half the size): it becomes the old one.
    cache.set('c', 3);
    // A hit in the old generation moves the entry to the young one, which fills again.
    expect(cache.get('a')).toBe(1);
    cache.set('d', 4);
    // Now old = {c, a}, young = {d}: b was only in the generation that was dropped.
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('d')).toBe(4);
    expect(cache.get('c')).toBe(3);
    cache.set('a', 10);
    expect(cache.get('a')).toBe(10);
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
