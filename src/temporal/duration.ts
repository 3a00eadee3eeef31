// ISO 8601 durations (PnYnMnWnDTnHnMnS) for aggrPeriodDuration (NGSI-LD §4.5.19) and retention:
// parsing, and adding whole multiples to an instant with calendar months and years.

import type { Duration } from './types.js';

const DURATION = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/;
const MS = { week: 604_800_000, day: 86_400_000, hour: 3_600_000, minute: 60_000, second: 1000 };

/** The duration, or undefined when the text is not an ISO 8601 duration. */
export function parseDuration(text: string): Duration | undefined {
  const m = DURATION.exec(text);
  if (!m || text === 'P' || text.endsWith('T')) return undefined;
  const n = (i: number): number => (m[i] === undefined ? 0 : Number(m[i]!.replace(',', '.')));
  const fixedMs = Math.round(n(3) * MS.week + n(4) * MS.day + n(5) * MS.hour + n(6) * MS.minute + n(7) * MS.second);
  const out: Duration = { years: n(1), months: n(2), fixedMs };
  return Number.isSafeInteger(out.years) && Number.isSafeInteger(out.months) && Number.isSafeInteger(fixedMs) ? out : undefined;
}

export const isZeroDuration = (d: Duration): boolean => d.years === 0 && d.months === 0 && d.fixedMs === 0;

/** Whether the duration has a fixed length in milliseconds (no months or years). */
export const isFixedDuration = (d: Duration): boolean => d.years === 0 && d.months === 0;

/**
 * `at` plus `times` × the duration, in UTC: years and months move the calendar date (a day past the
 * end of the month rolls over, as Date.UTC does), the fixed part adds milliseconds.
 */
export function addDuration(at: number, d: Duration, times = 1): number {
  if (isFixedDuration(d)) return at + times * d.fixedMs;
  const t = new Date(at);
  const moved = Date.UTC(t.getUTCFullYear() + times * d.years, t.getUTCMonth() + times * d.months, t.getUTCDate(),
    t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds(), t.getUTCMilliseconds());
  return moved + times * d.fixedMs;
}
