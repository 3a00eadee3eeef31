// Rollups of history: per-minute and per-hour summaries of each series' observed instances (count,
// numbers, strings, distinct values, sum, sum of squares, min, max, string min and max, the first and
// last instant with their number), computed from the raw rows in the background. Raw rows are read
// once in insertion order (a rowid watermark per raw bucket table); the minutes and hours they fall
// in are marked, and a marked period is computed again from its raw rows once it has closed, so that
// late, back-filled, replaced and deleted instances correct the summary they fall into. Rows older
// than the instant before which raw rows may have been removed are added to their summaries instead
// (their neighbours may be gone): exact for every statistic but distinctCount, which is then unknown.

import type BetterSqlite3 from 'better-sqlite3';
import type { BucketCatalogue } from './buckets.js';
import { DISTINCT_KEY, IS_STRING } from './history-sql.js';
import type { RunInTx } from '../transactions.js';
import { seriesClause } from './series-filter.js';
import type { DroppedKey, RollupRepository, RollupRow, RollupTable, RollupTier, SeriesFilter } from './history-types.js';

export const ROLLUP_TIERS: readonly RollupTier[] = ['minute', 'hour'];
/** The length of a tier's period. */
export const TIER_MS: Readonly<Record<RollupTier, number>> = { minute: 60_000, hour: 3_600_000 };
const TIER_CODE: Readonly<Record<RollupTier, number>> = { minute: 0, hour: 1 };
/** The start of the tier's period holding t. */
export const periodStart = (tier: RollupTier, t: number): number => Math.floor(t / TIER_MS[tier]) * TIER_MS[tier];

const TABLE_NAME = /^rollup_(minute_\d{6}|hour_\d{4})$/;
const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** The table of a tier holding instant t: a UTC month of minutes, a UTC year of hours. */
function rollupTableOf(tier: RollupTier, t: number): RollupTable {
  const d = new Date(t);
  const y = d.getUTCFullYear();
  if (!Number.isFinite(t) || y < 0 || y > 9999) throw new RangeError(`rollup instant out of range: ${t}`);
  if (tier === 'hour') return { tier, name: `rollup_hour_${pad(y, 4)}`, startMs: Date.UTC(y, 0, 1), endMs: Date.UTC(y + 1, 0, 1) };
  const m = d.getUTCMonth();
  return { tier, name: `rollup_minute_${pad(y, 4)}${pad(m + 1)}`, startMs: Date.UTC(y, m, 1), endMs: Date.UTC(y, m + 1, 1) };
}

function checkTableName(name: string): string {
  if (!TABLE_NAME.test(name)) throw new Error(`invalid rollup table name: ${name}`);
  return name;
}

function tableOfName(name: string): RollupTable {
  checkTableName(name);
  const digits = name.slice(name.lastIndexOf('_') + 1);
  const tier: RollupTier = name.startsWith('rollup_hour_') ? 'hour' : 'minute';
  const y = Number(digits.slice(0, 4));
  const t = tier === 'hour' ? Date.UTC(y, 0, 1) : Date.UTC(y, Number(digits.slice(4, 6)) - 1, 1);
  return rollupTableOf(tier, t);
}

/**
 * NOTE: WITHOUT ROWID on (series, t): a read of one series over a month or a year is one range of
 * the tree, and a summary computed again replaces its row in place.
 */
const createTableSql = (name: string): string => `
  CREATE TABLE IF NOT EXISTS ${checkTableName(name)} (
    series    INTEGER NOT NULL,
    t         INTEGER NOT NULL,
    n         INTEGER NOT NULL,
    numbers   INTEGER NOT NULL,
    strings   INTEGER NOT NULL,
    distinct_n INTEGER,
    sum       REAL,
    sumsq     REAL,
    min       REAL,
    max       REAL,
    min_s     TEXT,
    max_s     TEXT,
    first_t   INTEGER NOT NULL,
    last_t    INTEGER NOT NULL,
    first_num REAL,
    last_num  REAL,
    PRIMARY KEY (series, t)
  ) WITHOUT ROWID`;

const ROW_COLUMNS = 'series, t, n, numbers, strings, distinct_n, sum, sumsq, min, max, min_s, max_s, first_t, last_t, first_num, last_num';
/** The observed instances that are no deletion: what a summary counts (as aggregated reads do). */
const COUNTED = 'observed_at IS NOT NULL AND (value IS NOT NULL OR num IS NOT NULL)';

/**
 * The summaries of the rows `where` selects in a raw table, per series and period start.
 * NOTE: first and last numbers come from SQLite's bare columns: beside a single min() or max(), a
 * bare column takes its value from the row holding that minimum or maximum.
 */
function summarySql(table: string, where: string, stepMs: number): string {
  const start = `(t - (((t % ${stepMs}) + ${stepMs}) % ${stepMs}))`;
  return `
    WITH r AS (SELECT series, t, value, num FROM ${table} WHERE ${where} AND ${COUNTED}),
    g AS (SELECT series, ${start} AS start, count(*) AS n, count(num) AS numbers,
        count(CASE WHEN ${IS_STRING} THEN 1 END) AS strings, count(DISTINCT ${DISTINCT_KEY}) AS distinct_n,
        sum(num) AS sum, sum(num * num) AS sumsq, min(num) AS min, max(num) AS max,
        min(CASE WHEN ${IS_STRING} THEN json_extract(value, '$.value') END) AS min_s,
        max(CASE WHEN ${IS_STRING} THEN json_extract(value, '$.value') END) AS max_s,
        min(t) AS first_t, max(t) AS last_t
      FROM r GROUP BY series, start),
    f AS (SELECT series, ${start} AS start, min(t), num AS first_num FROM r GROUP BY series, start),
    l AS (SELECT series, ${start} AS start, max(t), num AS last_num FROM r GROUP BY series, start)
    SELECT g.series AS series, g.start AS t, n, numbers, strings, distinct_n, sum, sumsq, min, max, min_s, max_s,
      first_t, last_t, first_num, last_num
    FROM g JOIN f ON f.series = g.series AND f.start = g.start JOIN l ON l.series = g.series AND l.start = g.start`;
}

/** Adds a summary to the one stored (or stores it): every statistic merges but the distinct count. */
const MERGE_SQL = (table: string): string => `
  INSERT INTO ${table} (${ROW_COLUMNS}) VALUES (@series, @t, @n, @numbers, @strings, NULL, @sum, @sumsq, @min, @max, @min_s, @max_s,
    @first_t, @last_t, @first_num, @last_num)
  ON CONFLICT (series, t) DO UPDATE SET
    n = n + excluded.n, numbers = numbers + excluded.numbers, strings = strings + excluded.strings, distinct_n = NULL,
    sum = CASE WHEN sum IS NULL THEN excluded.sum WHEN excluded.sum IS NULL THEN sum ELSE sum + excluded.sum END,
    sumsq = CASE WHEN sumsq IS NULL THEN excluded.sumsq WHEN excluded.sumsq IS NULL THEN sumsq ELSE sumsq + excluded.sumsq END,
    min = CASE WHEN min IS NULL THEN excluded.min WHEN excluded.min IS NULL THEN min ELSE min(min, excluded.min) END,
    max = CASE WHEN max IS NULL THEN excluded.max WHEN excluded.max IS NULL THEN max ELSE max(max, excluded.max) END,
    min_s = CASE WHEN min_s IS NULL THEN excluded.min_s WHEN excluded.min_s IS NULL THEN min_s ELSE min(min_s, excluded.min_s) END,
    max_s = CASE WHEN max_s IS NULL THEN excluded.max_s WHEN excluded.max_s IS NULL THEN max_s ELSE max(max_s, excluded.max_s) END,
    first_num = CASE WHEN excluded.first_t < first_t THEN excluded.first_num ELSE first_num END,
    first_t = min(first_t, excluded.first_t),
    last_num = CASE WHEN excluded.last_t > last_t THEN excluded.last_num ELSE last_num END,
    last_t = max(last_t, excluded.last_t)`;

const REPLACE_SQL = (table: string): string => `INSERT OR REPLACE INTO ${table} (${ROW_COLUMNS}) VALUES (@series, @t, @n, @numbers, @strings,
  @distinct_n, @sum, @sumsq, @min, @max, @min_s, @max_s, @first_t, @last_t, @first_num, @last_num)`;

interface RollupDeps {
  db: BetterSqlite3.Database;
  buckets: BucketCatalogue;
  transaction: RunInTx;
}

/** Prepared statements by their text, forgotten when a table they name is dropped. */
function statementCache(db: BetterSqlite3.Database): { get(sql: string): BetterSqlite3.Statement<unknown[]>; clear(): void } {
  let cache = new Map<string, BetterSqlite3.Statement<unknown[]>>();
  return {
    get(sql) {
      let st = cache.get(sql);
      if (st === undefined) {
        if (cache.size >= 256) cache = new Map();
        st = db.prepare<unknown[]>(sql);
        cache.set(sql, st);
      }
      return st;
    },
    clear: () => void (cache = new Map()),
  };
}

function prepareStatements(db: BetterSqlite3.Database) {
  return {
    progress: db.prepare<[string], number>('SELECT last_rowid FROM rollup_progress WHERE bucket = ?').pluck(),
    setProgress: db.prepare<[string, number]>('INSERT OR REPLACE INTO rollup_progress (bucket, last_rowid) VALUES (?, ?)'),
    forgetProgress: db.prepare<[string]>('DELETE FROM rollup_progress WHERE bucket = ?'),
    mark: db.prepare<[number, number, number]>('INSERT OR IGNORE INTO rollup_dirty (tier, start, series) VALUES (?, ?, ?)'),
    closed: db.prepare<[number, number, number], { start: number; series: number }>(
      'SELECT start, series FROM rollup_dirty WHERE tier = ? AND start <= ? ORDER BY start, series LIMIT CAST(? AS INTEGER)'),
    unmark: db.prepare<[number, number, number]>('DELETE FROM rollup_dirty WHERE tier = ? AND start = ? AND series = ?'),
    earliestDirty: db.prepare<[number], number | null>('SELECT min(start) FROM rollup_dirty WHERE tier = ?').pluck(),
    unmarkSeries: db.prepare<[string]>('DELETE FROM rollup_dirty WHERE series IN (SELECT value FROM json_each(?))'),
    getState: db.prepare<[string], number>('SELECT value FROM rollup_state WHERE key = ?').pluck(),
    setState: db.prepare<[string, number]>('INSERT OR REPLACE INTO rollup_state (key, value) VALUES (?, ?)'),
  };
}

/** What the functions of the repository share: statements and the catalogue of summary tables. */
interface Rollups {
  readonly db: BetterSqlite3.Database;
  readonly buckets: BucketCatalogue;
  readonly sql: ReturnType<typeof statementCache>;
  readonly st: ReturnType<typeof prepareStatements>;
  /** The summary tables that exist, by name. */
  readonly existing: Map<string, RollupTable>;
}

function openRollups(db: BetterSqlite3.Database, buckets: BucketCatalogue): Rollups {
  const existing = new Map<string, RollupTable>();
  for (const { name } of db.prepare<[], { name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rollup\\_%' ESCAPE '\\'`).all()) {
    if (TABLE_NAME.test(name)) existing.set(name, tableOfName(name));
  }
  return { db, buckets, sql: statementCache(db), st: prepareStatements(db), existing };
}

/** The table of a tier holding t, created (in the caller's transaction) when missing. */
function tableFor(r: Rollups, tier: RollupTier, t: number): RollupTable {
  const table = rollupTableOf(tier, t);
  if (!r.existing.has(table.name)) {
    r.db.exec(createTableSql(table.name));
    r.existing.set(table.name, table);
  }
  return table;
}

const tablesOf = (r: Rollups, tier?: RollupTier): RollupTable[] =>
  [...r.existing.values()].filter((t) => tier === undefined || t.tier === tier).sort((a, b) => a.startMs - b.startMs || a.name.localeCompare(b.name));

/** Stores summaries computed from raw rows: each replaces the stored one, or (merge) is added to it. */
function storeSummaries(r: Rollups, rows: readonly RollupRow[], tier: RollupTier, merge: boolean): void {
  for (const row of rows) {
    const { name } = tableFor(r, tier, row.t);
    r.sql.get(merge ? MERGE_SQL(name) : REPLACE_SQL(name)).run(row);
  }
}

function markPeriods(r: Rollups, series: number, t: number): void {
  r.st.mark.run(TIER_CODE.minute, periodStart('minute', t), series);
  r.st.mark.run(TIER_CODE.hour, periodStart('hour', t), series);
}

/** Reads up to `limit` rows of a raw table after its watermark; returns how many. */
function scanBucket(r: Rollups, name: string, limit: number, mergeBefore: number): number {
  const after = r.st.progress.get(name) ?? 0;
  const rows = r.sql.get(`SELECT rowid AS rid, series, t, observed_at IS NOT NULL AS observed FROM ${name}
    WHERE rowid > ? ORDER BY rowid LIMIT CAST(? AS INTEGER)`).raw().all(after, limit) as Array<[number, number, number, number]>;
  if (rows.length === 0) return 0;
  const last = rows[rows.length - 1]![0];
  let merging = false;
  // NOTE: a series' rows mostly come in time order: the minute marked for the row before is not marked again.
  const lastMinute = new Map<number, number>();
  for (const [, series, t, observed] of rows) {
    if (observed === 0) continue;
    if (t < mergeBefore) {
      merging = true;
      continue;
    }
    const minute = periodStart('minute', t);
    if (lastMinute.get(series) === minute) continue;
    lastMinute.set(series, minute);
    markPeriods(r, series, t);
  }
  if (merging) {
    const where = `rowid > ${Number(after)} AND rowid <= ${Number(last)} AND t < ${Number(mergeBefore)}`;
    for (const tier of ROLLUP_TIERS) storeSummaries(r, r.sql.get(summarySql(name, where, TIER_MS[tier])).all() as RollupRow[], tier, true);
  }
  r.st.setProgress.run(name, last);
  return rows.length;
}

/** Computes again up to `limit` marked summaries of the tier closed by `closedBefore`; returns how many. */
function rollTier(r: Rollups, tier: RollupTier, closedBefore: number, limit: number): number {
  const step = TIER_MS[tier];
  const keys = r.st.closed.all(TIER_CODE[tier], closedBefore - step, limit);
  const byStart = new Map<number, number[]>();
  for (const k of keys) {
    const list = byStart.get(k.start);
    if (list === undefined) byStart.set(k.start, [k.series]);
    else list.push(k.series);
  }
  for (const [start, series] of byStart) {
    const raw = r.buckets.existingFor(start);
    const found = raw === undefined ? [] : r.sql.get(summarySql(raw.name,
      `series IN (SELECT value FROM json_each(?)) AND t >= ${Number(start)} AND t < ${Number(start + step)}`, step)).all(JSON.stringify(series)) as RollupRow[];
    storeSummaries(r, found, tier, false);
    const kept = new Set(found.map((x) => x.series));
    const table = rollupTableOf(tier, start);
    for (const s of series) {
      // A period left without instances (deleted ones) has no summary.
      if (!kept.has(s) && r.existing.has(table.name)) r.sql.get(`DELETE FROM ${table.name} WHERE series = ? AND t = ?`).run(s, start);
      r.st.unmark.run(TIER_CODE[tier], start, s);
    }
  }
  return keys.length;
}

function completeBefore(r: Rollups, tier: RollupTier): number {
  let before = r.st.getState.get(`${tier}_rolled_before`) ?? Number.NEGATIVE_INFINITY;
  const dirty = r.st.earliestDirty.get(TIER_CODE[tier]);
  if (dirty !== null && dirty !== undefined) before = Math.min(before, dirty);
  for (const b of r.buckets.list()) {
    const after = r.st.progress.get(b.name) ?? 0;
    const unread = r.sql.get(`SELECT min(t) FROM ${b.name} WHERE rowid > ? AND observed_at IS NOT NULL`).pluck().get(after) as number | null;
    if (unread !== null) before = Math.min(before, periodStart(tier, unread));
  }
  return before;
}

function readRows(r: Rollups, tier: RollupTier, series: readonly number[], lo: number, hi: number): RollupRow[] {
  if (series.length === 0) return [];
  const list = JSON.stringify(series);
  const out: RollupRow[] = [];
  for (const table of tablesOf(r, tier)) {
    if (table.endMs <= lo || table.startMs >= hi) continue;
    out.push(...(r.sql.get(`SELECT ${ROW_COLUMNS} FROM ${table.name} WHERE series IN (SELECT value FROM json_each(?)) AND t >= ? AND t < ?
      ORDER BY series, t`).all(list, lo, hi) as RollupRow[]));
  }
  return out.sort((a, b) => a.series - b.series || a.t - b.t);
}

function pruneTier(r: Rollups, tier: RollupTier, horizon: number, limit: number, filter: SeriesFilter | undefined): number {
  const { clause, params } = seriesClause(filter);
  let removed = 0;
  for (const table of tablesOf(r, tier).filter((t) => t.startMs < horizon)) {
    removed += r.sql.get(`DELETE FROM ${table.name} WHERE (series, t) IN
      (SELECT series, t FROM ${table.name} WHERE t < @horizon ${clause} LIMIT CAST(@limit AS INTEGER))`).run({ ...params, horizon, limit: limit - removed }).changes;
    if (removed >= limit) break;
  }
  return removed;
}

export function createRollupRepository({ db, buckets, transaction }: RollupDeps): RollupRepository {
  const r = openRollups(db, buckets);
  const { st, sql } = r;
  return {
    scan: (limit, mergeBefore) => transaction(() => {
      let read = 0;
      for (const b of buckets.list()) {
        read += scanBucket(r, b.name, limit - read, mergeBefore);
        if (read >= limit) break;
      }
      return read;
    }),
    roll: (tier, closedBefore, limit) => transaction(() => rollTier(r, tier, closedBefore, limit)),
    setRolledBefore: (tier, before) => void st.setState.run(`${tier}_rolled_before`, before),
    markDirty: (series, t) => markPeriods(r, series, t),
    removeSeries(ids) {
      if (ids.length === 0) return;
      const list = JSON.stringify(ids);
      for (const table of r.existing.values()) sql.get(`DELETE FROM ${table.name} WHERE series IN (SELECT value FROM json_each(?))`).run(list);
      st.unmarkSeries.run(list);
    },
    completeBefore: (tier) => completeBefore(r, tier),
    droppedBefore: (key) => st.getState.get(`${key}_dropped_before`),
    noteDropped(key, before) {
      const known = st.getState.get(`${key}_dropped_before`);
      if (known === undefined || before > known) st.setState.run(`${key}_dropped_before`, before);
    },
    rows: (tier, series, lo, hi) => readRows(r, tier, series, lo, hi),
    tables: (tier) => tablesOf(r, tier),
    dropTableBefore: (tier, horizon) => transaction(() => {
      const oldest = tablesOf(r, tier).find((t) => t.endMs <= horizon);
      if (oldest === undefined) return undefined;
      db.exec(`DROP TABLE IF EXISTS ${checkTableName(oldest.name)}`);
      r.existing.delete(oldest.name);
      sql.clear();
      return oldest.name;
    }),
    pruneBefore: (tier, horizon, limit, filter) => transaction(() => pruneTier(r, tier, horizon, limit, filter)),
    count: (tier) => tablesOf(r, tier).reduce((n, t) => n + (sql.get(`SELECT count(*) FROM ${t.name}`).pluck().get() as number), 0),
    forgetBucket: (name) => void st.forgetProgress.run(name),
    rowsDeleted(bucket) {
      const after = st.progress.get(bucket);
      if (after === undefined) return;
      const last = (sql.get(`SELECT max(rowid) FROM ${bucket}`).pluck().get() as number | null) ?? 0;
      if (last < after) st.setProgress.run(bucket, last);
    },
  };
}
