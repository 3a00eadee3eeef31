// Aggregated reads from the rollups: a period grid aligned on a tier's periods (its origin and length
// whole minutes or hours) is answered from that tier for the periods the tier holds exactly, and from
// the raw rows after them. Summaries merge into the same statistics the raw rows give (sums up to
// floating-point rounding); a distinct count is exact only where a period is one summary.

import type { HistoryAggregateOptions, HistoryWindow, PeriodGrid, PeriodStats, RollupRepository, RollupRow, RollupTier } from './history-types.js';
import { addSummary, periodStart, TIER_MS } from './rollups.js';

/** The tier a read takes, and the instant before which its periods come from it. */
export interface TierPlan {
  tier: RollupTier;
  /** Periods starting before `split` come from the tier; from `split` on, from the raw rows. */
  split: number;
  /** The read wants distinct counts and the raw rows still hold them all (a summary without one then sends it to the raw rows). */
  distinctFromRaw: boolean;
}

const isAligned = (t: number, tier: RollupTier): boolean => periodStart(tier, t) === t;

/** Whether every period boundary of the grid falls on the tier's period boundaries. */
function gridFits(grid: PeriodGrid, window: HistoryWindow, tier: RollupTier): boolean {
  switch (grid.kind) {
    case 'fixed': return isAligned(grid.origin, tier) && grid.ms % TIER_MS[tier] === 0;
    case 'calendar': return grid.starts.every((s) => isAligned(s, tier));
    case 'whole': return window.from !== undefined && isAligned(window.from, tier);
  }
}

/** The last period start of the grid at or before t (the grid's first start when t is before it). */
function periodStartAtOrBefore(grid: PeriodGrid, window: HistoryWindow, t: number): number {
  switch (grid.kind) {
    case 'fixed': return grid.origin + Math.floor((t - grid.origin) / grid.ms) * grid.ms;
    case 'calendar': {
      let found = grid.starts[0] ?? t;
      for (const s of grid.starts) if (s <= t) found = s;
      return found;
    }
    case 'whole': return window.to !== undefined && t >= window.to ? window.to : window.from ?? t;
  }
}

/** Periods of a grid spanning more than one summary of the tier (a distinct count there is not exact). */
const spansSeveral = (grid: PeriodGrid, tier: RollupTier): boolean => grid.kind !== 'fixed' || grid.ms !== TIER_MS[tier];

/**
 * The tier to answer an aggregation by observedAt from, and up to when; undefined when the raw rows
 * answer it all (no tier fits, or the tier holds no period of the window exactly).
 */
export function planTierRead(rollups: RollupRepository, window: HistoryWindow, grid: PeriodGrid, stats: HistoryAggregateOptions['stats']): TierPlan | undefined {
  if (window.timeproperty !== 'observedAt') return undefined;
  const lo = window.from ?? Number.NEGATIVE_INFINITY;
  const rawDropped = rollups.droppedBefore('raw');
  const rawComplete = rawDropped === undefined || rawDropped <= lo;
  for (const tier of ['hour', 'minute'] as const) {
    if (!gridFits(grid, window, tier)) continue;
    const wantsDistinct = stats === undefined || stats.has('distinct');
    // A distinct count over several summaries is not exact: the raw rows answer it while they last.
    if (wantsDistinct && spansSeveral(grid, tier) && rawComplete) continue;
    const tierDropped = rollups.droppedBefore(tier);
    if (tierDropped !== undefined && tierDropped > lo && rawComplete) continue;
    let until = rollups.completeBefore(tier);
    if (window.to !== undefined) until = Math.min(until, periodStart(tier, window.to));
    const split = periodStartAtOrBefore(grid, window, until);
    if (split > lo && Number.isFinite(split)) return { tier, split, distinctFromRaw: wantsDistinct && rawComplete };
  }
  return undefined;
}

/** The index of the period holding t, -1 when none does. */
function periodOf(grid: PeriodGrid, t: number): number {
  switch (grid.kind) {
    case 'whole': return 0;
    case 'fixed': return t < grid.origin ? -1 : Math.floor((t - grid.origin) / grid.ms);
    case 'calendar': {
      let lo = 0;
      let hi = grid.starts.length - 1;
      let found = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (grid.starts[mid]! <= t) {
          found = mid;
          lo = mid + 1;
        } else hi = mid - 1;
      }
      return found;
    }
  }
}


/** Statistics per series and period from summaries (ordered by series then t), ordered by series then period. */
export function statsOfSummaries(rows: readonly RollupRow[], grid: PeriodGrid): PeriodStats[] {
  const groups: Array<{ period: number; total: RollupRow; summaries: number }> = [];
  let current: (typeof groups)[number] | undefined;
  for (const r of rows) {
    const period = periodOf(grid, r.t);
    if (period < 0) continue;
    if (current === undefined || current.total.series !== r.series || current.period !== period) {
      current = { period, total: { ...r }, summaries: 1 };
      groups.push(current);
      continue;
    }
    addSummary(current.total, r);
    current.summaries += 1;
  }
  return groups.map(({ period, total: t, summaries }) => ({
    series: t.series, period, count: t.n, numbers: t.numbers, strings: t.strings,
    // A distinct count does not add up: exact only for a period of one summary.
    distinct: summaries === 1 ? t.distinct_n : null,
    sum: t.sum, sumsq: t.sumsq, min: t.min, max: t.max, minString: t.min_s, maxString: t.max_s, first: t.first_t, last: t.last_t,
  }));
}

/**
 * Keeps, per series, the periods ranked (skip, skip + limit] in `order` (as the raw aggregation's
 * window function does); the rows stay ordered by series then ascending period.
 */
export function rankPeriods(rows: readonly PeriodStats[], opts: Pick<HistoryAggregateOptions, 'order' | 'skip' | 'limit'>): PeriodStats[] {
  const bySeries = new Map<number, PeriodStats[]>();
  for (const r of rows) {
    const list = bySeries.get(r.series);
    if (list === undefined) bySeries.set(r.series, [r]);
    else list.push(r);
  }
  const out: PeriodStats[] = [];
  for (const series of [...bySeries.keys()].sort((a, b) => a - b)) {
    const list = bySeries.get(series)!.sort((a, b) => a.period - b.period);
    const ranked = opts.order === 'desc' ? [...list].reverse() : list;
    const kept = ranked.slice(opts.skip, opts.skip + Math.min(opts.limit, Number.MAX_SAFE_INTEGER));
    out.push(...kept.sort((a, b) => a.period - b.period));
  }
  return out;
}
