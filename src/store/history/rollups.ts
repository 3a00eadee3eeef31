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
import { COUNTED, passOver, scanRowsSql, summaryOf, type ScanPass, type ScanRow } from './rollup-scan.js';
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

/**
 * The summaries of the rows `where` selects in a raw table, per series and period start: one pass
 * over the rows, then the first and last numbers by one seek each on (series, t) per summary (of
 * instances at the same instant, the first and the last written).
 */
function summarySql(table: string, where: string, stepMs: number): string {
  const start = `(t - (((t % ${stepMs}) + ${stepMs}) % ${stepMs}))`;
  const at = (edge: 'first_t' | 'last_t', order: 'ASC' | 'DESC'): string => `(SELECT num FROM ${table} x
    WHERE x.series = g.series AND x.t = g.${edge} AND x.observed_at IS NOT NULL AND (x.value IS NOT NULL OR x.num IS NOT NULL)
    ORDER BY x.rowid ${order} LIMIT 1)`;
  return `
    SELECT g.series AS series, g.start AS t, n, numbers, strings, distinct_n, sum, sumsq, min, max, min_s, max_s, first_t, last_t,
      ${at('first_t', 'ASC')} AS first_num, ${at('last_t', 'DESC')} AS last_num
    FROM (SELECT series, ${start} AS start, count(*) AS n, count(num) AS numbers,
        count(CASE WHEN ${IS_STRING} THEN 1 END) AS strings, count(DISTINCT ${DISTINCT_KEY}) AS distinct_n,
        sum(num) AS sum, sum(num * num) AS sumsq, min(num) AS min, max(num) AS max,
        min(CASE WHEN ${IS_STRING} THEN json_extract(value, '$.value') END) AS min_s,
        max(CASE WHEN ${IS_STRING} THEN json_extract(value, '$.value') END) AS max_s,
        min(t) AS first_t, max(t) AS last_t
      FROM ${table} WHERE ${where} AND ${COUNTED} GROUP BY series, start) g`;
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

/** `count` summaries that are not stored yet, their columns bound by position (an object's names cost more to bind). */
const insertRowsSql = (table: string, count: number): string =>
  `INSERT INTO ${table} (${ROW_COLUMNS}) VALUES ${Array.from({ length: count }, () => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`;

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
    isMarked: db.prepare<[number, number, number], number>('SELECT 1 FROM rollup_dirty WHERE tier = ? AND start = ? AND series = ?').pluck(),
    markedIn: db.prepare<[number, number, number], unknown>('SELECT start, series FROM rollup_dirty WHERE tier = ? AND start >= ? AND start <= ?'),
    closed: db.prepare<[number, number, number], { start: number; series: number }>(
      'SELECT start, series FROM rollup_dirty WHERE tier = ? AND start <= ? ORDER BY start, series LIMIT CAST(? AS INTEGER)'),
    unmarkRange: db.prepare<[number, number, number, string]>(
      'DELETE FROM rollup_dirty WHERE tier = ? AND start >= ? AND start < ? AND series IN (SELECT value FROM json_each(?))'),
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
  /** Marked summaries per statement computing them, by tier (see rollTier). */
  readonly batch: Record<RollupTier, number>;
}

function openRollups(db: BetterSqlite3.Database, buckets: BucketCatalogue): Rollups {
  const existing = new Map<string, RollupTable>();
  for (const { name } of db.prepare<[], { name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rollup\\_%' ESCAPE '\\'`).all()) {
    if (TABLE_NAME.test(name)) existing.set(name, tableOfName(name));
  }
  return { db, buckets, sql: statementCache(db), st: prepareStatements(db), existing, batch: { minute: 64, hour: 8 } };
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

/**
 * Reads up to `limit` rows of a raw table after its watermark (on to the end of the last one's minute);
 * returns how many. One pass over the rows (rollup-scan.ts) tells the minutes they touch and adds up
 * those that closed and that nothing summarized or marked before: their rows are all among those read
 * (a row of theirs read before would have marked or summarized them), so their summaries are stored
 * with no mark and no second reading. A minute split between two reads is summarized from the first
 * and marked by the second: it is then computed again from its raw rows.
 */
function scanBucket(r: Rollups, name: string, limit: number, mergeBefore: number, closedBefore: number): number {
  const after = r.st.progress.get(name) ?? 0;
  const upTo = r.sql.get(`SELECT max(rowid) FROM (SELECT rowid FROM ${name} WHERE rowid > ? ORDER BY rowid LIMIT CAST(? AS INTEGER))`).pluck()
    .get(after, limit) as number | null;
  if (upTo === null) return 0;
  const last = minuteEnd(r, name, upTo, limit);
  const rows = r.sql.get(scanRowsSql(name)).raw().all(after, last) as ScanRow[];
  const closed = Number.isFinite(closedBefore) ? periodStart('minute', closedBefore) : Number.NEGATIVE_INFINITY;
  const pass = passOver(rows, mergeBefore, closed);
  const direct = storeFresh(r, pass);
  for (const [series, minutes] of pass.touched) {
    const done = direct.get(series);
    let hour = Number.NaN;
    for (const m of minutes) {
      if (m < mergeBefore) continue;
      if (done?.has(m) !== true) r.st.mark.run(TIER_CODE.minute, m, series);
      // NOTE: minutes come mostly in order: an hour is marked once per run of its minutes.
      const h = periodStart('hour', m);
      if (h !== hour) r.st.mark.run(TIER_CODE.hour, h, series);
      hour = h;
    }
  }
  if (pass.merging) {
    const where = 'rowid > @after AND rowid <= @last AND t < @mergeBefore';
    for (const tier of ROLLUP_TIERS) {
      storeSummaries(r, r.sql.get(summarySql(name, where, TIER_MS[tier])).all({ after, last, mergeBefore }) as RollupRow[], tier, true);
    }
  }
  r.st.setProgress.run(name, last);
  return rows.length;
}

/**
 * The last rowid of a read that ends at `upTo`, taken on to the end of that row's minute (at most
 * `limit` rows more): rows arrive in time order, so a minute is then mostly read whole, and
 * summarized as it is read rather than marked and read again. One pass over the next rows gives both
 * the first of a later minute and the last of them.
 */
function minuteEnd(r: Rollups, name: string, upTo: number, limit: number): number {
  const t = r.sql.get(`SELECT t FROM ${name} WHERE rowid = ?`).pluck().get(upTo) as number | undefined;
  if (t === undefined) return upTo;
  const [later, lastRead] = r.sql.get(`SELECT min(CASE WHEN t >= @end THEN rowid END), max(rowid)
    FROM (SELECT rowid, t FROM ${name} WHERE rowid > @upTo ORDER BY rowid LIMIT CAST(@limit AS INTEGER))`).raw()
    .get({ upTo, limit, end: periodStart('minute', t) + TIER_MS.minute }) as [number | null, number | null];
  // The rows before the first of a later minute (rowids only grow: any bound below it is as good).
  if (later !== null) return later - 1;
  return lastRead ?? upTo;
}

/**
 * Whether a minute of the pass is marked, or summarized already. NOTE: for a pass whose minutes are
 * close together (the common case: rows arriving in time order), two range reads per scan (the marks
 * of its span of minutes, each series' summaries over it) instead of two look-ups per minute; a pass
 * spanning far more minutes than it holds (late rows among recent ones) looks each one up.
 */
function knownMinutes(r: Rollups, fresh: ScanPass['fresh']): (series: number, m: number) => boolean {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  let count = 0;
  for (const minutes of fresh.values()) {
    for (const m of minutes.keys()) {
      if (m < lo) lo = m;
      if (m > hi) hi = m;
      count++;
    }
  }
  if ((hi - lo) / TIER_MS.minute > 4 * count + 64) {
    return (series, m) => {
      if (r.st.isMarked.get(TIER_CODE.minute, m, series) !== undefined) return true;
      const table = rollupTableOf('minute', m).name;
      return r.existing.has(table) && r.sql.get(`SELECT 1 FROM ${table} WHERE series = ? AND t = ?`).pluck().get(series, m) !== undefined;
    };
  }
  const known = new Set<string>();
  if (count > 0) {
    for (const [start, series] of r.st.markedIn.raw().all(TIER_CODE.minute, lo, hi) as Array<[number, number]>) known.add(`${series} ${start}`);
    for (const table of tablesOf(r, 'minute')) {
      if (table.endMs <= lo || table.startMs > hi) continue;
      const read = r.sql.get(`SELECT t FROM ${table.name} WHERE series = ? AND t >= ? AND t <= ?`).pluck();
      for (const series of fresh.keys()) for (const t of read.all(series, lo, hi) as number[]) known.add(`${series} ${t}`);
    }
  }
  return (series, m) => known.has(`${series} ${m}`);
}

/** Fresh summaries inserted by one statement: a statement's own cost is shared by that many rows. */
const INSERT_ROWS = 16;

/** Stores the summaries of the pass's closed minutes that are neither marked nor summarized yet; returns them by series. */
function storeFresh(r: Rollups, pass: ScanPass): Map<number, Set<number>> {
  const done = new Map<number, Set<number>>();
  const known = knownMinutes(r, pass.fresh);
  const byTable = new Map<string, RollupRow[]>();
  for (const [series, minutes] of pass.fresh) {
    for (const [m, acc] of minutes) {
      if (known(series, m)) continue;
      const table = tableFor(r, 'minute', m).name;
      let rows = byTable.get(table);
      if (rows === undefined) byTable.set(table, (rows = []));
      rows.push(summaryOf(acc));
      let set = done.get(series);
      if (set === undefined) done.set(series, (set = new Set()));
      set.add(m);
    }
  }
  for (const [table, rows] of byTable) {
    for (let at = 0; at < rows.length; at += INSERT_ROWS) {
      const chunk = rows.slice(at, at + INSERT_ROWS);
      const values: Array<number | string | null> = [];
      for (const x of chunk) {
        values.push(x.series, x.t, x.n, x.numbers, x.strings, x.distinct_n, x.sum, x.sumsq, x.min, x.max, x.min_s, x.max_s, x.first_t, x.last_t, x.first_num, x.last_num);
      }
      r.sql.get(insertRowsSql(table, chunk.length)).run(values);
    }
  }
  return done;
}

/** The distinct values of each series over [lo, hi) in a raw table (what an hour's summary takes from the raw rows). */
const distinctSql = (table: string): string => `SELECT series, count(DISTINCT ${DISTINCT_KEY}) AS distinct_n FROM ${table}
  WHERE series IN (SELECT value FROM json_each(?)) AND t >= ? AND t < ? AND ${COUNTED} GROUP BY series`;

/**
 * The summaries of some series over [lo, hi) (whole periods of the tier, in one raw table) from the
 * raw rows. An hour adds up its minutes (computed just before; its raw rows are then read once more
 * only for the distinct count), unless minute summaries were removed there.
 */
function summariesOf(r: Rollups, tier: RollupTier, raw: string, series: readonly number[], lo: number, hi: number): RollupRow[] {
  const step = TIER_MS[tier];
  const minutesDropped = r.st.getState.get('minute_dropped_before');
  if (tier === 'minute' || (minutesDropped !== undefined && minutesDropped > lo)) {
    return r.sql.get(summarySql(raw, 'series IN (SELECT value FROM json_each(@ids)) AND t >= @lo AND t < @hi', step))
      .all({ ids: JSON.stringify(series), lo, hi }) as RollupRow[];
  }
  const hours: RollupRow[] = [];
  for (let h = lo; h < hi; h += step) {
    const inHour = mergeSummaries(readRows(r, 'minute', series, h, h + step), h);
    // NOTE: the distinct count of a dense hour is not kept: reading its rows again would hold the event loop.
    const counted = inHour.filter((x) => x.n <= MAX_DISTINCT_ROWS).map((x) => x.series);
    const distinct = new Map(counted.length === 0 ? [] : (r.sql.get(distinctSql(raw)).all(JSON.stringify(counted), h, h + step) as
      Array<{ series: number; distinct_n: number }>).map((d) => [d.series, d.distinct_n]));
    for (const x of inHour) x.distinct_n = x.n <= MAX_DISTINCT_ROWS ? distinct.get(x.series) ?? 0 : null;
    hours.push(...inHour);
  }
  return hours;
}

/** Instances of an hour beyond which its distinct count is not computed (null: distinctCount then reads the raw rows). */
const MAX_DISTINCT_ROWS = 50_000;

/** Sum, minimum and maximum where null is no value (SQL's aggregates over none). */
const addOrNull = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : a + b);
const lowest = <T extends number | string>(a: T | null, b: T | null): T | null => (a === null ? b : b === null ? a : b < a ? b : a);
const highest = <T extends number | string>(a: T | null, b: T | null): T | null => (a === null ? b : b === null ? a : b > a ? b : a);

/** One summary per series from summaries ordered by series then t, starting at `t` (the distinct count left out). */
function mergeSummaries(rows: readonly RollupRow[], t: number): RollupRow[] {
  const out: RollupRow[] = [];
  let m: RollupRow | undefined;
  for (const x of rows) {
    if (m === undefined || m.series !== x.series) {
      m = { ...x, t, distinct_n: null };
      out.push(m);
      continue;
    }
    addSummary(m, x);
  }
  return out;
}

/** Adds a later summary of the same series into `m` (its distinct count left as it is). */
export function addSummary(m: RollupRow, x: RollupRow): void {
  m.n += x.n;
  m.numbers += x.numbers;
  m.strings += x.strings;
  m.sum = addOrNull(m.sum, x.sum);
  m.sumsq = addOrNull(m.sumsq, x.sumsq);
  m.min = lowest(m.min, x.min);
  m.max = highest(m.max, x.max);
  m.min_s = lowest(m.min_s, x.min_s);
  m.max_s = highest(m.max_s, x.max_s);
  if (x.first_t < m.first_t) [m.first_t, m.first_num] = [x.first_t, x.first_num];
  if (x.last_t >= m.last_t) [m.last_t, m.last_num] = [x.last_t, x.last_num];
}

/** Milliseconds of work one call of roll() may take, statement by statement, before it returns. */
const ROLL_BUDGET_MS = 20;

type DirtyKey = { start: number; series: number };

/**
 * Computes again up to `limit` marked summaries of the tier closed by `closedBefore`, a run of keys
 * at a time, until ROLL_BUDGET_MS is spent; returns how many it computed (0: none is left).
 * NOTE: a run is the keys of consecutive periods in one raw table and one summary table, computed
 * by one statement over their time range; how many keys it takes follows how long the last one took.
 */
function rollTier(r: Rollups, tier: RollupTier, closedBefore: number, limit: number): number {
  const step = TIER_MS[tier];
  const keys: DirtyKey[] = r.st.closed.all(TIER_CODE[tier], closedBefore - step, limit);
  const began = performance.now();
  let done = 0;
  for (let i = 0; i < keys.length;) {
    const first = keys[i]!;
    const raw = r.buckets.existingFor(first.start);
    const table = rollupTableOf(tier, first.start).name;
    let j = i + 1;
    while (j < keys.length && j - i < r.batch[tier] && r.buckets.existingFor(keys[j]!.start) === raw
      && rollupTableOf(tier, keys[j]!.start).name === table) j++;
    const at = performance.now();
    rollRun(r, tier, raw?.name, keys.slice(i, j));
    const took = performance.now() - at;
    r.batch[tier] = Math.max(1, Math.min(2_000, Math.round((j - i) * (took > 0 ? Math.min(4, ROLL_BUDGET_MS / 4 / took) : 4))));
    done += j - i;
    i = j;
    if (performance.now() - began >= ROLL_BUDGET_MS) break;
  }
  return done;
}

/**
 * Computes again every summary of the keys' series over the keys' time range: the summaries there
 * are replaced by those of the raw rows (a period left without instances has none), and the marks
 * of those series in the range are removed.
 */
function rollRun(r: Rollups, tier: RollupTier, raw: string | undefined, keys: readonly DirtyKey[]): void {
  const series = [...new Set(keys.map((k) => k.series))];
  const lo = keys[0]!.start;
  const hi = keys[keys.length - 1]!.start + TIER_MS[tier];
  const found = raw === undefined ? [] : summariesOf(r, tier, raw, series, lo, hi);
  const ids = JSON.stringify(series);
  const table = rollupTableOf(tier, lo);
  if (r.existing.has(table.name)) {
    r.sql.get(`DELETE FROM ${table.name} WHERE series IN (SELECT value FROM json_each(?)) AND t >= ? AND t < ?`).run(ids, lo, hi);
  }
  storeSummaries(r, found, tier, false);
  r.st.unmarkRange.run(TIER_CODE[tier], lo, hi, ids);
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
    scan: (limit, mergeBefore, closedBefore = Number.NEGATIVE_INFINITY) => transaction(() => {
      let read = 0;
      for (const b of buckets.list()) {
        read += scanBucket(r, b.name, limit - read, mergeBefore, closedBefore);
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
