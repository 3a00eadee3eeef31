// History time buckets: one table per UTC month or day, created on first write and listed in the
// `history_buckets` catalogue, so retention can drop whole tables instead of deleting rows.

import type BetterSqlite3 from 'better-sqlite3';
import type { CacheGroup } from './tx-cache.js';

export type BucketSize = 'day' | 'month';

export interface BucketRange {
  name: string;
  startMs: number;
  endMs: number;
}

export interface HistoryRow {
  series: number;
  t: number;
  observed_at: number | null;
  created_at: number;
  modified_at: number;
  deleted_at: number | null;
  instance_id: Buffer | string;
  value: string | null;
  num: number | null;
  sub: string | null;
}

/** A stored row together with its insertion order inside its bucket. */
export type StoredHistoryRow = HistoryRow & { rid: number };

export interface BucketTable {
  insert(row: HistoryRow): void;
  /** Rows of the given series ids, ordered by (t, insertion). */
  rowsOfSeries(seriesIds: number[]): StoredHistoryRow[];
}

export interface BucketCatalogue {
  /** The table for instant t, created (in the caller's transaction) when missing. */
  tableFor(t: number): BucketTable;
  /** Existing buckets, oldest first. */
  list(): BucketRange[];
  /** An existing bucket's table. */
  table(name: string): BucketTable;
}

const NAME = /^history_\d{6}(\d{2})?$/;
const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** The bucket holding instant t (UTC). */
export function bucketOf(t: number, size: BucketSize): BucketRange {
  if (!Number.isFinite(t)) throw new RangeError(`history instant is not a finite number: ${t}`);
  const d = new Date(t);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  if (y < 0 || y > 9999) throw new RangeError(`history instant out of range: ${t}`);
  if (size === 'month') {
    return { name: `history_${pad(y, 4)}${pad(m + 1)}`, startMs: Date.UTC(y, m, 1), endMs: Date.UTC(y, m + 1, 1) };
  }
  const day = d.getUTCDate();
  return {
    name: `history_${pad(y, 4)}${pad(m + 1)}${pad(day)}`,
    startMs: Date.UTC(y, m, day),
    endMs: Date.UTC(y, m, day + 1),
  };
}

/**
 * NOTE: a rowid table plus an index on (series, t) rather than WITHOUT ROWID. Rows arrive in time
 * order, so the table grows by appending to its last page (one dirty page per batch), and only the
 * small index entries (series, t, rowid) land inside the tree. A WITHOUT ROWID table clustered on
 * (series, t, ...) would insert whole rows mid-tree, splitting more and larger pages, and would
 * need a random instance_id in its key, losing insertion order for equal t.
 */
function createTableSql(name: string): string {
  return `
    CREATE TABLE IF NOT EXISTS ${name} (
      series      INTEGER NOT NULL REFERENCES series (id),
      t           INTEGER NOT NULL,
      observed_at INTEGER,
      created_at  INTEGER NOT NULL,
      modified_at INTEGER NOT NULL,
      deleted_at  INTEGER,
      instance_id BLOB    NOT NULL,
      value       TEXT,
      num         REAL,
      sub         TEXT
    );
    CREATE INDEX IF NOT EXISTS ${name}_series_t ON ${name} (series, t);`;
}

function prepareTable(db: BetterSqlite3.Database, name: string): BucketTable {
  // Table names cannot be bound parameters; every name is built by bucketOf and checked here.
  if (!NAME.test(name)) throw new Error(`invalid history bucket name: ${name}`);
  const insert = db.prepare<[HistoryRow]>(
    `INSERT INTO ${name} (series, t, observed_at, created_at, modified_at, deleted_at, instance_id, value, num, sub)
     VALUES (@series, @t, @observed_at, @created_at, @modified_at, @deleted_at, @instance_id, @value, @num, @sub)`,
  );
  const select = db.prepare<[string], StoredHistoryRow>(
    `SELECT rowid AS rid, series, t, observed_at, created_at, modified_at, deleted_at, instance_id, value, num, sub
     FROM ${name} WHERE series IN (SELECT value FROM json_each(?)) ORDER BY series, t, rowid`,
  );
  return {
    insert: (row) => {
      insert.run(row);
    },
    rowsOfSeries: (ids) => (ids.length === 0 ? [] : select.all(JSON.stringify(ids))),
  };
}

export function createBucketCatalogue(db: BetterSqlite3.Database, size: BucketSize, caches: CacheGroup): BucketCatalogue {
  // Prepared statements of buckets whose table is known to exist (committed, or created in this transaction).
  const tables = caches.create<string, BucketTable>();
  const exists = db.prepare<[string], number>('SELECT 1 FROM history_buckets WHERE name = ?').pluck();
  const register = db.prepare<[string, number, number]>('INSERT INTO history_buckets (name, start_ms, end_ms) VALUES (?, ?, ?)');
  const listAll = db.prepare<[], { name: string; start_ms: number; end_ms: number }>(
    'SELECT name, start_ms, end_ms FROM history_buckets ORDER BY start_ms, name',
  );

  const table = (name: string): BucketTable => {
    let t = tables.get(name);
    if (!t) {
      t = prepareTable(db, name);
      tables.set(name, t);
    }
    return t;
  };

  return {
    tableFor(t) {
      const range = bucketOf(t, size);
      const known = tables.get(range.name);
      if (known) return known;
      if (exists.get(range.name) === undefined) {
        if (!db.inTransaction) throw new Error('history buckets are created inside a transaction');
        db.exec(createTableSql(range.name));
        register.run(range.name, range.startMs, range.endMs);
      }
      return table(range.name);
    },
    list: () => listAll.all().map((r) => ({ name: r.name, startMs: r.start_ms, endMs: r.end_ms })),
    table,
  };
}
