// Temporal reads over the history buckets (NGSI-LD §5.7.3-5.7.4): only buckets that can hold the window,
// keyset pages through (series, time) indexes with LIMIT fetched as arrays, aggregation per series and
// period in SQL.

import type BetterSqlite3 from 'better-sqlite3';
import type { EntityId, Iri } from '../../ngsi/index.js';
import type { BucketCatalogue, BucketInfo } from './buckets.js';
import { decodeReadRow, readColumns, type ReadRow } from './history-codec.js';
import { mergeOrdered, type MergeCursor, type MergeKey, type MergeSource } from './history-merge.js';
import type {
  HistoryAggregateOptions, HistoryReader, HistoryReadOptions, HistorySeries, HistoryWindow, PeriodGrid, PeriodStats, TimedInstance,
  TimeOrder, TimeProperty, RollupRepository,
} from './history-types.js';
import { planTierRead, rankPeriods, statsOfSummaries } from './history-tiers.js';
import type { IriDictionary } from '../iris.js';
import {
  aggregateSql, createStatementCache, registerPeriodFunction, unionOfBuckets, type AggregateRow, type StatementCache,
} from './history-sql.js';

/** The column a time property is read from, and what a row needs to have one. */
const TIME_COLUMN: Record<TimeProperty, { col: string; where: string }> = {
  // observed_at is t whenever it is set, and t has the (series, t) index.
  observedAt: { col: 't', where: 'observed_at IS NOT NULL' },
  createdAt: { col: 'created_at', where: '1' },
  modifiedAt: { col: 'modified_at', where: '1' },
  deletedAt: { col: 'deleted_at', where: 'deleted_at IS NOT NULL' },
};

/** Open window bounds, as instants every stored time lies strictly inside. */
const MIN_TIME = -8_640_000_000_000_001;
const MAX_TIME = 8_640_000_000_000_001;

const FIRST_PAGE = 32;
const MAX_PAGE = 4096;

interface SeriesRow {
  id: number;
  entity_id: EntityId;
  attr: Iri;
  dataset_id: string | null;
}

/** Rows merge on their time, bucket rank and insertion order. */
const READ_KEY: MergeKey<ReadRow> = { time: (row) => row[1], rid: (row) => row[0] };

/** Rows a read still takes (skipped ones included): no cursor fetches a page larger than that. */
interface ReadBudget {
  remaining: number;
}

interface Candidate {
  bucket: BucketInfo;
  rank: number;
  lo: number;
  hi: number;
}

/** Buckets whose rows can have the window's time property inside the window, with their bounds. */
function candidates(buckets: readonly BucketInfo[], window: HistoryWindow): Candidate[] {
  const out: Candidate[] = [];
  const from = window.from ?? MIN_TIME;
  const to = window.to ?? MAX_TIME;
  buckets.forEach((bucket, rank) => {
    let range: { min: number; max: number } | undefined;
    switch (window.timeproperty) {
      case 'observedAt': range = { min: bucket.startMs, max: bucket.endMs - 1 }; break;
      case 'createdAt': range = bucket.created; break;
      case 'modifiedAt': range = bucket.modified; break;
      case 'deletedAt': range = bucket.deleted; break;
    }
    if (range && range.max >= from && range.min < to) out.push({ bucket, rank, lo: range.min, hi: range.max });
  });
  return out;
}

const seriesIds = (series: readonly HistorySeries[]): string => JSON.stringify(series.map((s) => s.id));

function pageSql(table: string, tp: TimeProperty, order: TimeOrder): string {
  const { col, where } = TIME_COLUMN[tp];
  const desc = order === 'desc';
  return `SELECT ${readColumns(col)} FROM ${table}
    WHERE series = @series AND ${where} AND ${col} >= @lo AND ${col} < @hi
      AND NOT (${col} = @kt AND rowid ${desc ? '>=' : '<='} @krid)
    ORDER BY ${col} ${desc ? 'DESC' : 'ASC'}, rowid ${desc ? 'DESC' : 'ASC'} LIMIT CAST(@limit AS INTEGER)`;
}

const windowParams = (series: readonly HistorySeries[], window: HistoryWindow): Record<string, unknown> =>
  ({ ids: seriesIds(series), lo: window.from ?? MIN_TIME, hi: window.to ?? MAX_TIME });

function filterSql(table: string, tp: TimeProperty): string {
  const { col, where } = TIME_COLUMN[tp];
  return `FROM ${table} WHERE series IN (SELECT value FROM json_each(@ids)) AND ${where} AND ${col} >= @lo AND ${col} < @hi`;
}

/**
 * Keyset pages of one series in one bucket: pages grow, but never beyond what the read still
 * needs; every row the merge takes is reported to the budget.
 */
function openCursor(
  statements: StatementCache, c: Candidate, series: number, window: HistoryWindow, order: TimeOrder, budget: ReadBudget,
): MergeCursor<ReadRow> {
  const stmt = statements.raw<ReadRow>(pageSql(c.bucket.name, window.timeproperty, order));
  let rows: ReadRow[] = [];
  let at = 0;
  let done = false;
  let size = FIRST_PAGE;
  let kt = order === 'asc' ? MIN_TIME : MAX_TIME;
  let krid = 0;
  const fill = (): void => {
    const limit = Math.max(1, Math.min(size, budget.remaining));
    const lo = Math.max(window.from ?? MIN_TIME, order === 'asc' ? kt : MIN_TIME);
    const hi = Math.min(window.to ?? MAX_TIME, order === 'desc' ? kt + 1 : MAX_TIME);
    rows = stmt.all({ series, lo, hi, kt, krid, limit });
    at = 0;
    done = rows.length < limit;
    size = Math.min(size * 4, MAX_PAGE);
    const last = rows[rows.length - 1];
    if (last) {
      kt = READ_KEY.time(last);
      krid = READ_KEY.rid(last);
    }
  };
  fill();
  return {
    rank: c.rank,
    peek: () => rows[at],
    advance: () => {
      budget.remaining -= 1;
      at += 1;
      if (at >= rows.length && !done) fill();
    },
  };
}

function readInstances(
  statements: StatementCache, buckets: BucketCatalogue, series: readonly HistorySeries[], window: HistoryWindow, opts: HistoryReadOptions,
): TimedInstance[] {
  if (series.length === 0 || opts.limit <= 0) return [];
  const budget: ReadBudget = { remaining: opts.skip + opts.limit };
  const sources: MergeSource<ReadRow>[] = [];
  for (const c of candidates(buckets.list(), window)) {
    for (const s of series) sources.push({ lo: c.lo, hi: c.hi, open: () => openCursor(statements, c, s.id, window, opts.order, budget) });
  }
  const rows = mergeOrdered(sources, READ_KEY, opts.order, opts.skip, opts.limit);
  const keys = new Map(series.map((s) => [s.id, s.datasetId === undefined
    ? { entityId: s.entityId, attr: s.attr } : { entityId: s.entityId, attr: s.attr, datasetId: s.datasetId }]));
  return rows.map((row): TimedInstance => {
    const key = keys.get(row[2]);
    if (!key) throw new Error(`history row of unknown series ${row[2]}`);
    return { time: row[1], instance: decodeReadRow(row, key) };
  });
}

/**
 * Aggregates from a rollup tier where one fits the grid (see planTierRead), the raw rows after it;
 * then ranks the periods as the raw aggregation would.
 */
function aggregateTiered(
  statements: StatementCache, buckets: BucketCatalogue, rollups: RollupRepository, series: readonly HistorySeries[], window: HistoryWindow,
  grid: PeriodGrid, opts: HistoryAggregateOptions,
): PeriodStats[] {
  if (series.length === 0 || opts.limit <= 0) return [];
  const plan = planTierRead(rollups, window, grid, opts.stats);
  if (plan === undefined) return aggregatePeriods(statements, buckets, series, window, grid, opts);
  const ids = series.map((s) => s.id);
  const summaries = rollups.rows(plan.tier, ids, window.from ?? Number.NEGATIVE_INFINITY, plan.split);
  // A summary kept without its distinct count (a dense hour): the raw rows answer while they last.
  if (plan.distinctFromRaw && summaries.some((r) => r.distinct_n === null)) return aggregatePeriods(statements, buckets, series, window, grid, opts);
  const fromTier = statsOfSummaries(summaries, grid);
  const fromRaw = window.to !== undefined && plan.split >= window.to ? []
    : aggregatePeriods(statements, buckets, series, { ...window, from: plan.split }, grid, { ...opts, skip: 0, limit: Number.MAX_SAFE_INTEGER });
  return rankPeriods([...fromTier, ...fromRaw], opts);
}

function aggregatePeriods(
  statements: StatementCache, buckets: BucketCatalogue, series: readonly HistorySeries[], window: HistoryWindow, grid: PeriodGrid,
  opts: HistoryAggregateOptions,
): PeriodStats[] {
  if (series.length === 0 || opts.limit <= 0) return [];
  const { col, where } = TIME_COLUMN[window.timeproperty];
  const tables = candidates(buckets.list(), window).map((c) => c.bucket.name);
  if (tables.length === 0) return [];
  const source = unionOfBuckets(tables, (table) => `SELECT series, ${col} AS time, value, num FROM ${table}
    WHERE series IN (SELECT value FROM json_each(@ids)) AND ${where} AND ${col} >= @lo AND ${col} < @hi
      AND (value IS NOT NULL OR num IS NOT NULL)`);
  // Ranking periods per series costs a window function: only when some may be left out.
  const ranked = opts.skip > 0 || periodsAtMost(grid, window) > opts.limit ? opts.order : undefined;
  const params: Record<string, unknown> = windowParams(series, window);
  if (ranked) Object.assign(params, { skip: opts.skip, end: opts.skip + Math.min(opts.limit, Number.MAX_SAFE_INTEGER) });
  if (grid.kind === 'fixed') Object.assign(params, { origin: grid.origin, ms: grid.ms });
  if (grid.kind === 'calendar') params['starts'] = JSON.stringify(grid.starts);
  const run = (strings: boolean): PeriodStats[] =>
    statements.raw<AggregateRow>(aggregateSql({ source, grid, stats: opts.stats, strings, ranked })).all(params).map(statsOf);
  const rows = run(false);
  // Strings can only be among values that are not numbers: counted in a second pass, when there are such.
  return rows.some((r) => r.count > r.numbers) ? run(true) : rows;
}

export function createHistoryReader(db: BetterSqlite3.Database, iris: IriDictionary, buckets: BucketCatalogue, rollups?: RollupRepository): HistoryReader {
  const statements = createStatementCache(db, buckets);
  registerPeriodFunction(db);

  const forEachCandidate = <T>(window: HistoryWindow, fn: (c: Candidate) => T): T[] =>
    candidates(buckets.list(), window).map(fn);

  const reader: HistoryReader = {
    series({ tenant }, entityIds, attrs) {
      if (entityIds.length === 0) return [];
      const attrIds = attrs?.map((a) => iris.lookup(a)).filter((id) => id !== undefined);
      if (attrIds && attrIds.length === 0) return [];
      const stmt = statements.get<SeriesRow>(`SELECT s.id, s.entity_id, i.iri AS attr, s.dataset_id
        FROM series s JOIN iris i ON i.id = s.attr
        WHERE s.tenant = @tenant AND s.entity_id IN (SELECT value FROM json_each(@ids))
          ${attrIds ? 'AND s.attr IN (SELECT value FROM json_each(@attrs))' : ''}
        ORDER BY s.entity_id, i.iri, s.dataset_id IS NOT NULL, s.dataset_id`);
      const params: Record<string, unknown> = { tenant, ids: JSON.stringify(entityIds) };
      if (attrIds) params['attrs'] = JSON.stringify(attrIds);
      return stmt.all(params).map((r) => {
        const s: HistorySeries = { id: r.id, entityId: r.entity_id, attr: r.attr };
        if (r.dataset_id !== null) s.datasetId = r.dataset_id;
        return s;
      });
    },

    read: (series, window, opts) => readInstances(statements, buckets, series, window, opts),

    nextTime(series, window, time, order) {
      if (series.length === 0) return undefined;
      const col = TIME_COLUMN[window.timeproperty].col;
      const found = forEachCandidate(window, (c) => statements.get<{ at: number | null }>(order === 'asc'
        ? `SELECT min(${col}) AS at ${filterSql(c.bucket.name, window.timeproperty)} AND ${col} > @time`
        : `SELECT max(${col}) AS at ${filterSql(c.bucket.name, window.timeproperty)} AND ${col} < @time`,
      ).get({ ...windowParams(series, window), time })?.at ?? null).filter((t) => t !== null);
      if (found.length === 0) return undefined;
      return order === 'asc' ? Math.min(...found) : Math.max(...found);
    },

    count(series, window) {
      if (series.length === 0) return 0;
      return forEachCandidate(window, (c) => statements.get<{ n: number }>(
        `SELECT count(*) AS n ${filterSql(c.bucket.name, window.timeproperty)}`,
      ).get(windowParams(series, window))?.n ?? 0).reduce((a, b) => a + b, 0);
    },

    extent(series, window) {
      if (series.length === 0) return undefined;
      const col = TIME_COLUMN[window.timeproperty].col;
      let min: number | undefined;
      let max: number | undefined;
      for (const r of forEachCandidate(window, (c) => statements.get<{ lo: number | null; hi: number | null }>(
        `SELECT min(${col}) AS lo, max(${col}) AS hi ${filterSql(c.bucket.name, window.timeproperty)}`,
      ).get(windowParams(series, window)))) {
        if (r?.lo == null || r.hi == null) continue;
        min = min === undefined ? r.lo : Math.min(min, r.lo);
        max = max === undefined ? r.hi : Math.max(max, r.hi);
      }
      return min === undefined || max === undefined ? undefined : { min, max };
    },

    aggregate: (series, window, grid, opts) => (rollups === undefined
      ? aggregatePeriods(statements, buckets, series, window, grid, opts)
      : aggregateTiered(statements, buckets, rollups, series, window, grid, opts)),
  };
  return reader;
}

/** At most how many periods the instances of a window fall in (Infinity when it is open). */
function periodsAtMost(grid: PeriodGrid, window: HistoryWindow): number {
  switch (grid.kind) {
    case 'whole': return 1;
    case 'fixed':
      return window.from === undefined || window.to === undefined ? Infinity : Math.floor((window.to - window.from) / grid.ms) + 2;
    case 'calendar': return grid.starts.length + 1;
  }
}

const statsOf = (r: AggregateRow): PeriodStats => ({
  series: r[0], period: r[1], count: r[2], numbers: r[3], strings: r[4], distinct: r[5], sum: r[6], sumsq: r[7], min: r[8],
  max: r[9], minString: r[10], maxString: r[11], first: r[12], last: r[13],
});
