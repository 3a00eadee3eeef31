// SQL building blocks of temporal reads: a statement cache that forgets dropped buckets, compound
// SELECTs over many bucket tables, the mapping of instants to aggregation periods, and the
// per-period statistics computing only what an aggregation asks for.

import type BetterSqlite3 from 'better-sqlite3';
import { createLru } from '../../lib/index.js';
import type { BucketCatalogue } from './buckets.js';
import { checkBucketName } from './buckets.js';
import type { PeriodGrid, PeriodStats, TimeOrder } from './history-types.js';

const STATEMENT_CACHE_SIZE = 256;
/** SQLite refuses more than 500 terms in one compound SELECT; nested groups stay well below it. */
const UNION_GROUP = 200;

export interface StatementCache {
  /** The prepared statement of `sql` (bucket names inside it checked by the caller). */
  get<R>(sql: string): BetterSqlite3.Statement<[Record<string, unknown>], R>;
  /** The same, returning rows as arrays in column order (no object per row: reads of many rows). */
  raw<R extends unknown[]>(sql: string): BetterSqlite3.Statement<[Record<string, unknown>], R>;
}

/** Prepared statements by SQL text; all forgotten when a bucket table was dropped since. */
export function createStatementCache(db: BetterSqlite3.Database, buckets: BucketCatalogue): StatementCache {
  // Keyed by mode and text: a statement's raw mode is a setting of the statement itself.
  const cache = createLru<string, BetterSqlite3.Statement<[Record<string, unknown>], unknown>>(STATEMENT_CACHE_SIZE);
  let generation = buckets.generation();
  const prepared = (sql: string, raw: boolean): BetterSqlite3.Statement<[Record<string, unknown>], unknown> => {
    if (generation !== buckets.generation()) {
      cache.clear();
      generation = buckets.generation();
    }
    const key = (raw ? 'r' : 'o') + sql;
    let stmt = cache.get(key);
    if (!stmt) {
      stmt = db.prepare<[Record<string, unknown>], unknown>(sql);
      if (raw) stmt.raw(true);
      cache.set(key, stmt);
    }
    return stmt;
  };
  return {
    get<R>(sql: string) {
      // NOTE: the caller states the row shape its SQL selects; the cache only keys statements by text.
      return prepared(sql, false) as BetterSqlite3.Statement<[Record<string, unknown>], R>;
    },
    raw<R extends unknown[]>(sql: string) {
      // NOTE: as above, the row being the selected columns in order.
      return prepared(sql, true) as BetterSqlite3.Statement<[Record<string, unknown>], R>;
    },
  };
}

/** `UNION ALL` of one SELECT per bucket table, nested in groups so any number of buckets fits. */
export function unionOfBuckets(tables: readonly string[], select: (table: string) => string): string {
  const terms = tables.map((t) => select(checkBucketName(t)));
  if (terms.length <= UNION_GROUP) return terms.join('\nUNION ALL\n');
  const groups: string[] = [];
  for (let i = 0; i < terms.length; i += UNION_GROUP) {
    groups.push(`SELECT * FROM (${terms.slice(i, i + UNION_GROUP).join('\nUNION ALL\n')})`);
  }
  return groups.join('\nUNION ALL\n');
}

const PERIOD_FUNCTION = 'edgeld_history_period';

/** The period index of `time` (an INTEGER column named time) under a grid, as SQL. */
function periodExpression(grid: PeriodGrid): string {
  switch (grid.kind) {
    case 'whole': return '0';
    // Integer division: CAST because bound JavaScript numbers arrive as REAL.
    case 'fixed': return '(time - CAST(@origin AS INTEGER)) / CAST(@ms AS INTEGER)';
    case 'calendar': return `${PERIOD_FUNCTION}(time, @starts)`;
  }
}

/** Index of the last start <= time in ascending starts, or -1 before the first. */
function periodIndex(starts: readonly number[], time: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (starts[mid]! <= time) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** Registers the calendar-period function (month and year periods have no fixed length). */
export function registerPeriodFunction(db: BetterSqlite3.Database): void {
  const parsed = new Map<string, number[]>();
  db.function(PERIOD_FUNCTION, { deterministic: true }, (time: unknown, starts: unknown) => {
    if (typeof time !== 'number' || typeof starts !== 'string') return null;
    let list = parsed.get(starts);
    if (!list) {
      // Bound by aggregate() from a number[] it serialised itself.
      list = JSON.parse(starts) as number[];
      if (parsed.size >= 16) parsed.clear();
      parsed.set(starts, list);
    }
    return periodIndex(list, time);
  });
}

/** A Property value that is a string (what string min/max and the kind checks look at). */
export const IS_STRING = `num IS NULL AND json_type(value, '$.value') = 'text'`;
/** What tells values apart for distinctCount: the number, else the payload member of any kind. */
export const DISTINCT_KEY = `coalesce(num, ${['value', 'object', 'languageMap', 'vocab', 'json', 'valueList', 'objectList']
  .map((m) => `json_extract(value, '$.${m}')`).join(', ')})`;

export interface AggregateSqlOptions {
  /** A SELECT of the (series, time, value, num) rows to aggregate. */
  source: string;
  grid: PeriodGrid;
  /** The optional statistics to compute (undefined: all); the others are NULL. */
  stats: ReadonlySet<keyof PeriodStats> | undefined;
  /** Whether to count strings and take their min and max: without, `strings` is 0 (right when every value is a number). */
  strings: boolean;
  /** Numbers the periods of each series in this order and keeps those in (@skip, @end]; undefined keeps all. */
  ranked: TimeOrder | undefined;
}

/** A row of aggregateSql: the members of PeriodStats in declaration order. */
export type AggregateRow = [
  series: number, period: number, count: number, numbers: number, strings: number, distinct: number | null, sum: number | null,
  sumsq: number | null, min: number | null, max: number | null, minString: string | null, maxString: string | null,
  first: number | null, last: number | null,
];

/**
 * Statistics per series and period, ordered by series then ascending period. Only what is asked for
 * is computed: each aggregate widens the rows SQLite sorts into groups.
 */
export function aggregateSql(o: AggregateSqlOptions): string {
  const stat = (member: keyof PeriodStats, expr: string): string => (o.stats === undefined || o.stats.has(member) ? expr : 'NULL');
  const stringStat = (member: keyof PeriodStats, fn: 'min' | 'max'): string =>
    (o.strings ? stat(member, `${fn}(CASE WHEN ${IS_STRING} THEN json_extract(value, '$.value') END)`) : 'NULL');
  const grouped = `SELECT series, ${periodExpression(o.grid)} AS period, count(*) AS n, count(num) AS numbers,
      ${o.strings ? `count(CASE WHEN ${IS_STRING} THEN 1 END)` : '0'} AS strings,
      ${stat('distinct', `count(DISTINCT ${DISTINCT_KEY})`)} AS distinct_n, ${stat('sum', 'sum(num)')} AS sum,
      ${stat('sumsq', 'sum(num * num)')} AS sumsq, ${stat('min', 'min(num)')} AS min, ${stat('max', 'max(num)')} AS max,
      ${stringStat('minString', 'min')} AS min_s, ${stringStat('maxString', 'max')} AS max_s,
      ${stat('first', 'min(time)')} AS first, ${stat('last', 'max(time)')} AS last
    FROM (${o.source}) GROUP BY series, period`;
  if (o.ranked === undefined) return `${grouped} ORDER BY series, period`;
  return `SELECT series, period, n, numbers, strings, distinct_n, sum, sumsq, min, max, min_s, max_s, first, last FROM (
      SELECT g.*, row_number() OVER (PARTITION BY series ORDER BY period ${o.ranked === 'asc' ? 'ASC' : 'DESC'}) AS rn FROM (${grouped}) g)
    WHERE rn > @skip AND rn <= @end ORDER BY series, period`;
}
