// Bucket naming and UTC ranges for the time-bucketed history tables.

import { describe, expect, it } from 'vitest';
import { bucketOf } from '../../../src/store/history/buckets.js';

describe('store history buckets: bucketOf', () => {
  it('names a month bucket and gives its UTC range', () => {
    expect(bucketOf(Date.parse('2024-02-29T23:59:59.999Z'), 'month')).toEqual({
      name: 'history_202402', startMs: Date.parse('2024-02-01T00:00:00Z'), endMs: Date.parse('2024-03-01T00:00:00Z'),
    });
    expect(bucketOf(Date.parse('2024-12-01T00:00:00Z'), 'month').endMs).toBe(Date.parse('2025-01-01T00:00:00Z'));
  });

  it('names a day bucket and gives its UTC range', () => {
    expect(bucketOf(Date.parse('2024-12-31T00:00:00Z'), 'day')).toEqual({
      name: 'history_20241231', startMs: Date.parse('2024-12-31T00:00:00Z'), endMs: Date.parse('2025-01-01T00:00:00Z'),
    });
  });

  it('handles instants before 1970', () => {
    expect(bucketOf(Date.parse('1969-07-20T20:17:00Z'), 'day').name).toBe('history_19690720');
  });

  it('rejects instants that cannot name a table', () => {
    expect(() => bucketOf(Number.NaN, 'month')).toThrow(RangeError);
    expect(() => bucketOf(Date.parse('+010000-01-01T00:00:00Z'), 'month')).toThrow(RangeError);
  });
});
