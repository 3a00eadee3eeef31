// The two-generation cache: hits in either generation, a bound never exceeded, the oldest entries
// dropped first, and an old entry that is used kept.

import { describe, expect, it } from 'vitest';
import { createGenerations } from '../../src/lib/index.js';

describe('createGenerations', () => {
  it('finds what was set, in the young and in the old generation', () => {
    const cache = createGenerations<string, number>(8);
    for (const [k, v] of [['a', 1], ['b', 2], ['c', 3], ['d', 4]] as const) cache.set(k, v); // the young generation, full (4), becomes the old one
    cache.set('e', 5);
    expect([cache.get('e'), cache.get('a'), cache.get('d'), cache.get('f')]).toEqual([5, 1, 4, undefined]);
  });

  it('holds at most its bound, and forgets the oldest entries first', () => {
    const cache = createGenerations<number, number>(10);
    for (let i = 0; i < 100; i++) cache.set(i, i);
    const kept = Array.from({ length: 100 }, (_, i) => i).filter((i) => cache.get(i) !== undefined);
    expect(kept.length).toBeGreaterThanOrEqual(5);
    expect(kept.length).toBeLessThanOrEqual(10);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, k) => 100 - kept.length + k));
  });

  it('keeps an old entry that is asked for, over entries never asked for again', () => {
    const cache = createGenerations<string, number>(4);
    cache.set('hot', 1);
    cache.set('x', 2); // young → old: {hot, x}
    expect(cache.get('hot')).toBe(1); // moves to the young generation
    cache.set('y', 3); // young {hot, y} → old; {hot, x} dropped, but hot lives on
    cache.set('z', 4);
    expect(cache.get('hot')).toBe(1);
    expect(cache.get('x')).toBeUndefined();
  });

  it('starts empty again after clear()', () => {
    const cache = createGenerations<string, number>(4);
    cache.set('a', 1);
    cache.clear();
    expect(cache.get('a')).toBeUndefined();
  });
});
