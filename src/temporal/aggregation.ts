// Aggregation methods over per-period statistics (NGSI-LD §4.5.19), pure: numbers and booleans (0/1)
// take every method, strings the counts and min/max, other values the counts; mixed kinds are 422.

import { BadRequestDataError, OperationNotSupportedError, type Json } from '../ngsi/index.js';
import type { PeriodStats } from '../store/index.js';
import type { AggrMethod } from './types.js';

const NUMERIC_ONLY: ReadonlySet<AggrMethod> = new Set(['sum', 'avg', 'stddev', 'sumsq']);
const ORDERED: ReadonlySet<AggrMethod> = new Set(['min', 'max']);

/**
 * Throws when a method cannot apply to the values of one series (all its periods): 400 when the
 * values are of one kind the method does not apply to, 422 when the kinds are mixed.
 */
export function checkAggregable(methods: readonly AggrMethod[], periods: readonly PeriodStats[], attrName: string): void {
  let count = 0;
  let numbers = 0;
  let strings = 0;
  for (const p of periods) {
    count += p.count;
    numbers += p.numbers;
    strings += p.strings;
  }
  if (count === 0) return;
  for (const m of methods) {
    if (NUMERIC_ONLY.has(m)) {
      if (numbers === count) continue;
      if (numbers > 0) throw new OperationNotSupportedError(`Cannot compute ${m} of ${attrName}: its values are of mixed kinds`);
      throw new BadRequestDataError(`Cannot compute ${m} of ${attrName}: it applies to numbers and booleans only`);
    }
    if (ORDERED.has(m)) {
      if (numbers === count || strings === count) continue;
      if (numbers > 0 || strings > 0) {
        throw new OperationNotSupportedError(`Cannot compute ${m} of ${attrName}: its values are of mixed kinds`);
      }
      throw new BadRequestDataError(`Cannot compute ${m} of ${attrName}: it applies to numbers, booleans and strings only`);
    }
  }
}

/** The statistics each method is computed from, beyond the counts (which the kind checks need too). */
const STATISTICS: Record<AggrMethod, ReadonlyArray<keyof PeriodStats>> = {
  totalCount: [],
  distinctCount: ['distinct'],
  sum: ['sum'],
  avg: ['sum'],
  sumsq: ['sumsq'],
  stddev: ['sum', 'sumsq'],
  min: ['min', 'minString'],
  max: ['max', 'maxString'],
};

/** The statistics to compute for the methods (aggregateValue reads nothing else). */
export function statisticsOf(methods: readonly AggrMethod[]): Set<keyof PeriodStats> {
  return new Set(methods.flatMap((m) => STATISTICS[m]));
}

/**
 * Sample standard deviation from count, sum and sum of squares; 0 for a single value. Rounding can
 * make the variance a hair below zero: clamped.
 */
function stddev(n: number, sum: number, sumsq: number): number {
  if (n < 2) return 0;
  const variance = (sumsq - (sum * sum) / n) / (n - 1);
  return variance > 0 ? Math.sqrt(variance) : 0;
}

/** The value of one method over one period (checked with checkAggregable first). */
export function aggregateValue(method: AggrMethod, p: PeriodStats): Json {
  switch (method) {
    case 'totalCount': return p.count;
    case 'distinctCount': return p.distinct;
    case 'sum': return p.sum ?? 0;
    case 'avg': return p.numbers === 0 ? 0 : (p.sum ?? 0) / p.numbers;
    case 'sumsq': return p.sumsq ?? 0;
    case 'stddev': return stddev(p.numbers, p.sum ?? 0, p.sumsq ?? 0);
    case 'min': return p.numbers > 0 ? p.min : p.minString;
    case 'max': return p.numbers > 0 ? p.max : p.maxString;
  }
}
