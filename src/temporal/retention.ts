// The history retention job body, per tier: raw rows (`history.retention`), minute and hour summaries
// (`history.minute-retention`, `history.hour-retention`), each optionally shortened or lengthened for
// a tenant or an entity type (`history.retention-rules`). Whole tables before the longest horizon are
// dropped; rows before a shorter one are deleted in short chunked transactions, yielding to the event
// loop in between. With rollups on, raw rows go only once their summaries exist: the rollups run
// first, and the raw horizon never passes the instant before which both tiers are complete.

import type { Logger } from '../lib/index.js';
import type { HistoryRetention, RollupRepository, RollupTier, SeriesFilter } from '../store/index.js';
import { addDuration } from './duration.js';
import { runRollups, ROLLUP_GRACE_MS } from './rollups.js';
import type { Duration } from './types.js';

/** Rows deleted per transaction. */
const RETENTION_CHUNK = 5000;

export type HistoryLevel = 'raw' | RollupTier;
const HISTORY_LEVELS: readonly HistoryLevel[] = ['raw', 'minute', 'hour'];

/** How long each level is kept; absent: for ever. */
export type LevelRetention = Partial<Record<HistoryLevel, Duration>>;

/** Retention of the series of a tenant, or of the entities of a type in it. */
export interface RetentionRule {
  tenant: string;
  /** An expanded type IRI; absent: every entity of the tenant. */
  type?: string;
  retention: LevelRetention;
}

export interface RetentionDeps {
  store: {
    isOpen(): boolean;
    readonly history: HistoryRetention & { readonly rollups: RollupRepository; seriesOf(tenant: string, type?: string): number[] };
  };
  log: Logger;
  /** The default retention of each level. */
  retention: LevelRetention;
  rules?: readonly RetentionRule[];
  /** Whether rollups are computed: raw rows then go only once summarized. */
  rollups?: boolean;
  chunk?: number;
  /** Aborted at shutdown: the run stops between two chunks (the next run goes on). */
  signal?: AbortSignal;
}

export interface RetentionReport {
  /** The default raw horizon (undefined: raw rows are kept). */
  horizon: number | undefined;
  /** Tables dropped (raw buckets, then summary tables). */
  dropped: string[];
  /** Rows deleted. */
  pruned: number;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The instant before which history goes: `now` minus the retention period (calendar-aware). */
const horizonOf = (now: number, d: Duration | undefined): number => (d === undefined ? Number.NEGATIVE_INFINITY : addDuration(now, d, -1));

/** Every raw horizon in use: the rows older than the latest of them may have lost their neighbours. */
export function mergeHorizon(now: number, retention: LevelRetention, rules: readonly RetentionRule[]): number {
  return Math.max(horizonOf(now, retention.raw), ...rules.map((r) => horizonOf(now, r.retention.raw ?? retention.raw)));
}

/** One deletion: rows before `horizon`, of the series the filter selects. */
interface Cut {
  horizon: number;
  filter: SeriesFilter;
}

/** The series each rule governs, once per run: a series falls under the most specific rule (tenant and type before tenant). */
interface RuledSeries {
  rule: RetentionRule;
  series: number[];
}

function seriesOfRules(deps: RetentionDeps): { ruled: RuledSeries[]; claimed: number[] } {
  const rules = [...(deps.rules ?? [])].sort((a, b) => Number(b.type !== undefined) - Number(a.type !== undefined));
  const claimed = new Set<number>();
  const ruled = rules.map((rule) => {
    const series = deps.store.history.seriesOf(rule.tenant, rule.type).filter((s) => !claimed.has(s));
    for (const s of series) claimed.add(s);
    return { rule, series };
  });
  return { ruled, claimed: [...claimed] };
}

/**
 * The cuts of one level: the whole-table horizon (the earliest, so that no series loses rows it
 * keeps), then row deletions for the series kept shorter; the series no rule governs follow the default.
 */
function cutsOf(deps: RetentionDeps, rules: ReturnType<typeof seriesOfRules>, level: HistoryLevel, now: number, cap: number): { tables: number; rows: Cut[] } {
  const ruled = rules.ruled.map(({ rule, series }) => ({ horizon: Math.min(cap, horizonOf(now, rule.retention[level] ?? deps.retention[level])), series }));
  const byDefault = Math.min(cap, horizonOf(now, deps.retention[level]));
  const tables = Math.min(byDefault, ...ruled.map((r) => r.horizon));
  const rows: Cut[] = [];
  if (byDefault > tables) rows.push({ horizon: byDefault, filter: { exclude: rules.claimed } });
  for (const r of ruled) if (r.horizon > tables && r.series.length > 0) rows.push({ horizon: r.horizon, filter: { include: r.series } });
  return { tables, rows };
}

/** The store's steps of one level: whole tables before a horizon, then rows. */
interface LevelSteps {
  dropTable(horizon: number): string | undefined;
  pruneRows(horizon: number, limit: number, filter?: SeriesFilter): number;
}

function stepsOf(deps: RetentionDeps, level: HistoryLevel): LevelSteps {
  const { history } = deps.store;
  if (level === 'raw') return { dropTable: (h) => history.dropBucketBefore(h), pruneRows: (h, limit, filter) => history.pruneBefore(h, limit, filter) };
  return {
    dropTable: (h) => history.rollups.dropTableBefore(level, h),
    pruneRows: (h, limit, filter) => history.rollups.pruneBefore(level, h, limit, filter),
  };
}

/** Applies the cuts of one level; false when stopped. */
async function applyLevel(deps: RetentionDeps, level: HistoryLevel, cuts: { tables: number; rows: Cut[] }, report: RetentionReport): Promise<boolean> {
  const { store } = deps;
  const chunk = deps.chunk ?? RETENTION_CHUNK;
  const steps = stepsOf(deps, level);
  const stopped = (): boolean => !store.isOpen() || deps.signal?.aborted === true;
  if (Number.isFinite(cuts.tables)) {
    for (;;) {
      if (!store.isOpen()) return false;
      const name = steps.dropTable(cuts.tables);
      if (name === undefined) break;
      report.dropped.push(name);
      await nextTurn();
      if (stopped()) return false;
    }
  }
  for (const cut of [{ horizon: cuts.tables, filter: {} }, ...cuts.rows]) {
    if (!Number.isFinite(cut.horizon)) continue;
    for (;;) {
      if (stopped()) return false;
      const n = steps.pruneRows(cut.horizon, chunk, cut.filter);
      report.pruned += n;
      if (n < chunk) break;
      await nextTurn();
    }
  }
  if (level !== 'raw' && Number.isFinite(cuts.tables)) store.history.rollups.noteDropped(level, cuts.tables);
  return true;
}

/** One retention run as of `now`; idempotent (a second run finds nothing left to do). */
export async function runRetention(deps: RetentionDeps, now: number): Promise<RetentionReport> {
  const { store, log } = deps;
  const { rollups } = store.history;
  const report: RetentionReport = { horizon: deps.retention.raw === undefined ? undefined : horizonOf(now, deps.retention.raw), dropped: [], pruned: 0 };
  if (deps.rollups === true) {
    await runRollups({ store, log, mergeBefore: mergeHorizon(now, deps.retention, deps.rules ?? []), ...(deps.signal ? { signal: deps.signal } : {}) }, now);
  }
  const rules = seriesOfRules(deps);
  for (const level of HISTORY_LEVELS) {
    if (level !== 'raw' && deps.rollups !== true) continue;
    // Raw rows go once both tiers summarize them; minute summaries once the hour ones exist.
    const cap = level === 'raw' && deps.rollups === true ? Math.min(rollups.completeBefore('minute'), rollups.completeBefore('hour'), now - ROLLUP_GRACE_MS)
      : level === 'minute' ? rollups.completeBefore('hour') : Number.POSITIVE_INFINITY;
    if (!(await applyLevel(deps, level, cutsOf(deps, rules, level, now, cap), report))) break;
  }
  if (report.dropped.length > 0 || report.pruned > 0) {
    log.info('history retention', { horizon: report.horizon === undefined ? undefined : new Date(report.horizon).toISOString(), dropped: report.dropped.length, pruned: report.pruned });
  }
  return report;
}
