// Aggregation periods (NGSI-LD §4.5.19): the whole requested range by default, else consecutive
// periods of aggrPeriodDuration aligned on timeAt (on the oldest instance when there is no timeAt).

import { BadRequestDataError } from '../ngsi/index.js';
import type { HistoryWindow, PeriodGrid } from '../store/index.js';
import { addDuration, isFixedDuration } from './duration.js';
import type { Duration } from './types.js';

/** Calendar periods one request may span (a month period over 8,000 years). */
const MAX_CALENDAR_PERIODS = 100_000;

export interface Periods {
  grid: PeriodGrid;
  /** Start and end of period `index`. */
  bounds(index: number): { start: number; end: number };
}

/**
 * The periods of a window. `extent` (earliest and latest time of the instances concerned) fills the
 * open ends: the origin without timeAt, the end of the whole range or of calendar periods.
 */
export function periodsOf(window: HistoryWindow, period: Duration | undefined, extent: { min: number; max: number }): Periods {
  const origin = window.from ?? extent.min;
  if (period === undefined) {
    const end = window.to ?? extent.max;
    return { grid: { kind: 'whole' }, bounds: () => ({ start: origin, end }) };
  }
  if (isFixedDuration(period)) {
    if (period.fixedMs <= 0) throw new BadRequestDataError('aggrPeriodDuration must be longer than zero');
    const ms = period.fixedMs;
    return {
      grid: { kind: 'fixed', origin, ms },
      bounds: (k) => ({ start: origin + k * ms, end: origin + (k + 1) * ms }),
    };
  }
  const last = window.to === undefined ? extent.max + 1 : window.to;
  const starts = [origin];
  for (let k = 1; starts[starts.length - 1]! < last; k++) {
    if (k > MAX_CALENDAR_PERIODS) throw new BadRequestDataError('aggrPeriodDuration is too short for the requested range');
    starts.push(addDuration(origin, period, k));
  }
  return {
    grid: { kind: 'calendar', starts },
    bounds: (k) => ({ start: starts[k] ?? origin, end: starts[k + 1] ?? addDuration(origin, period, k + 1) }),
  };
}
