// The bounded least-recently-used map shared by the caches.

import { describe, expect, it } from 'vitest';
import { createLru } from '../../src/lib/index.js';

describe('createLru', () => {
  it('evicts the least recently used entry beyond its bound', () => {
    const lru = createLru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe(1);
    expect(lru.size).toBe(2);
  });
});
