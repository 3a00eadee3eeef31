// Time-ordered ids: UUID version 7, sorting in the order they were made across milliseconds.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { timeOrderedUuid, uuid } from '../../src/lib/index.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('timeOrderedUuid', () => {
  it('is a UUID version 7 (RFC 9562 variant) starting with the milliseconds since the epoch', () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 25, 12, 0, 0, 123), toFake: ['Date'] });
    const id = timeOrderedUuid();
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(Date.UTC(2026, 10, 25, 12, 0, 0, 123));
  });

  it('sorts ids made in later milliseconds after earlier ones, and never repeats', () => {
    vi.useFakeTimers({ now: 1_700_000_000_000, toFake: ['Date'] });
    const ids: string[] = [];
    for (let i = 0; i < 1_000; i++) {
      ids.push(timeOrderedUuid());
      if (i % 10 === 9) vi.setSystemTime(Date.now() + 1);
    }
    const firstOfEachMs = ids.filter((_, i) => i % 10 === 0);
    expect([...firstOfEachMs].sort()).toEqual(firstOfEachMs);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('uuid', () => {
  it('is a random UUID version 4 with the RFC 9562 variant, never repeated, its bits evenly spread', () => {
    const ids = Array.from({ length: 20_000 }, () => uuid());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Each free hex position takes each of its 16 digits about equally often (1,250 expected).
    for (const position of [0, 7, 9, 15, 20, 35]) {
      const counts = new Map<string, number>();
      for (const id of ids) counts.set(id[position]!, (counts.get(id[position]!) ?? 0) + 1);
      expect(counts.size).toBe(16);
      for (const n of counts.values()) expect(n).toBeGreaterThan(1_000);
    }
  });
});
