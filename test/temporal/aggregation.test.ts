// Aggregation methods over period statistics (NGSI-LD §4.5.19) and the aggregation periods: values,
// the 400/422 rules by value kind, and period bounds aligned on the origin.

import { describe, expect, it } from 'vitest';
import type { PeriodStats } from '../../src/store/index.js';
import { aggregateValue, checkAggregable } from '../../src/temporal/aggregation.js';
import { parseDuration } from '../../src/temporal/duration.js';
import { periodsOf } from '../../src/temporal/periods.js';

const stats = (over: Partial<PeriodStats>): PeriodStats => ({
  series: 1, period: 0, count: 0, numbers: 0, strings: 0, distinct: 0, sum: null, sumsq: null, min: null, max: null,
  minString: null, maxString: null, first: 0, last: 0, ...over,
});

describe('aggregateValue', () => {
  it('derives avg and the sample standard deviation from count, sum and sum of squares', () => {
    const xs = [2, 4, 4, 4, 5, 5, 7, 9];
    const p = stats({ count: 8, numbers: 8, distinct: 5, sum: 40, sumsq: xs.reduce((a, x) => a + x * x, 0), min: 2, max: 9 });
    const mean = 5;
    const sample = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1));
    expect(aggregateValue('avg', p)).toBe(5);
    expect(aggregateValue('stddev', p)).toBeCloseTo(sample, 12);
    expect(aggregateValue('sumsq', p)).toBe(232);
    expect(aggregateValue('totalCount', p)).toBe(8);
    expect(aggregateValue('distinctCount', p)).toBe(5);
    expect(aggregateValue('stddev', stats({ count: 1, numbers: 1, sum: 3, sumsq: 9 }))).toBe(0);
  });

  it('takes min and max of strings when there are no numbers', () => {
    const p = stats({ count: 2, strings: 2, minString: 'a', maxString: 'b' });
    expect([aggregateValue('min', p), aggregateValue('max', p)]).toEqual(['a', 'b']);
  });
});

describe('checkAggregable', () => {
  const numbers = stats({ count: 3, numbers: 3 });
  const strings = stats({ count: 2, strings: 2 });
  const objects = stats({ count: 2 });

  it('allows every method on numbers, counts and min/max on strings, counts on anything', () => {
    expect(() => checkAggregable(['sum', 'avg', 'stddev', 'sumsq', 'min', 'max', 'totalCount', 'distinctCount'], [numbers], 't')).not.toThrow();
    expect(() => checkAggregable(['min', 'max', 'totalCount', 'distinctCount'], [strings], 't')).not.toThrow();
    expect(() => checkAggregable(['totalCount', 'distinctCount'], [objects, numbers, strings], 't')).not.toThrow();
  });

  it('answers 400 for a method that does not apply to the one kind there is', () => {
    for (const m of ['sum', 'avg', 'stddev', 'sumsq'] as const) {
      expect(() => checkAggregable([m], [strings], 't')).toThrow(expect.objectContaining({ status: 400 }));
    }
    expect(() => checkAggregable(['max'], [objects], 't')).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('answers 422 OperationNotSupported over mixed kinds, also across periods', () => {
    for (const m of ['sum', 'avg', 'stddev', 'sumsq', 'min', 'max'] as const) {
      expect(() => checkAggregable([m], [numbers, strings], 't')).toThrow(expect.objectContaining({ status: 422 }));
    }
  });
});

describe('periodsOf', () => {
  const DAY = 86_400_000;
  const from = Date.UTC(2024, 0, 31);

  it('is one whole period by default, its open ends filled from the data', () => {
    const p = periodsOf({ timeproperty: 'observedAt', from }, undefined, { min: from + 5, max: from + 9 * DAY });
    expect(p.grid).toEqual({ kind: 'whole' });
    expect(p.bounds(0)).toEqual({ start: from, end: from + 9 * DAY });
  });

  it('aligns fixed periods on timeAt, or on the earliest instance without one', () => {
    const p = periodsOf({ timeproperty: 'observedAt', from }, parseDuration('PT6H'), { min: 0, max: 0 });
    expect(p.grid).toEqual({ kind: 'fixed', origin: from, ms: DAY / 4 });
    expect(p.bounds(5)).toEqual({ start: from + 5 * DAY / 4, end: from + 6 * DAY / 4 });
    expect(periodsOf({ timeproperty: 'observedAt', to: from }, parseDuration('P1D'), { min: 42, max: 99 }).bounds(0).start).toBe(42);
  });

  it('lists calendar period starts up to the end of the range', () => {
    const p = periodsOf({ timeproperty: 'observedAt', from, to: Date.UTC(2024, 3, 1) }, parseDuration('P1M'), { min: 0, max: 0 });
    expect(p.grid).toEqual({ kind: 'calendar', starts: [from, Date.UTC(2024, 2, 2), Date.UTC(2024, 2, 31), Date.UTC(2024, 4, 1)] });
    expect(p.bounds(1)).toEqual({ start: Date.UTC(2024, 2, 2), end: Date.UTC(2024, 2, 31) });
  });
});
