// SQL building blocks of temporal reads: a statement cache that forgets dropped buckets, compound
// SELECTs over many bucket tables, and the mapping of instants to aggregation periods.

import type BetterSqlite3 from 'better-sqlite3';
import type { BucketCatalogue } from './buckets.js';
import { checkBucketName } from './buckets.js';
import type { PeriodGrid } from './history-types.js';

const STATEMENT_CACHE_SIZE = 256;
/** SQLite refuses more than 500 terms in one compound SELECT; nested groups stay well below it. */
const UNION_GROUP = 200;

export interface StatementCache {
  /** The prepared statement of `sql` (bucket names inside it checked by the caller). */
  get<R>(sql: string): BetterSqlite3.Statement<[Record<string, unknown>], R>;
}

/** Prepared statements by SQL text; all forgotten when a bucket table was dropped since. */
export function createStatementCache(db: BetterSqlite3.Database, buckets: BucketCatalogue): StatementCache {
  const cache = new Map<string, BetterSqlite3.Statement<[Record<string, unknown>], unknown>>();
  let generation = buckets.generation();
  return {
    get<R>(sql: string) {
      if (generation !== buckets.generation()) {
        cache.clear();
        generation = buckets.generation();
      }
      let stmt = cache.get(sql);
      if (!stmt) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value ?? '');
        stmt = db.prepare<[Record<string, unknown>], unknown>(sql);
        cache.set(sql, stmt);
      }
      // NOTE: the caller states the row shape its SQL selects; the cache only keys statements by text.
      return stmt as BetterSqlite3.Statement<[Record<string, unknown>], R>;
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
export function periodExpression(grid: PeriodGrid): string {
  switch (grid.kind) {
    case 'whole': return '0';
    // Integer division: CAST because bound JavaScript numbers arrive as REAL.
    case 'fixed': return '(time - CAST(@origin AS INTEGER)) / CAST(@ms AS INTEGER)';
    case 'calendar': return `${PERIOD_FUNCTION}(time, @starts)`;
  }
}

/** Index of the last start <= time in ascending starts, or -1 before the first. */
export function periodIndex(starts: readonly number[], time: number): number {
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
