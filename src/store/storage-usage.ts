// What the database holds on disk, for the disk budget: the bytes of the pages in use (two cheap
// pragmas), the bytes of each table and index by the level of history it belongs to (SQLite's dbstat,
// which walks the object's pages: one object at a time, by a caller that yields in between), the
// bytes written per UTC day (a small table, so that a restart keeps them), and whether writes are
// refused for the budget (hasRoom() is then false).

import type BetterSqlite3 from 'better-sqlite3';

/** What a table or index counts under: raw history buckets, minute or hour summaries, or the rest. */
export type StorageTier = 'raw' | 'minute' | 'hour' | 'other';

/** Bytes of pages by tier. */
export type TierBytes = Record<StorageTier, number>;

/** A table or index of the database, with the tier it counts under. */
export interface StoredObject {
  name: string;
  tier: StorageTier;
}

/** The bytes written on one UTC day. */
export interface DailyWritten {
  /** The day's first instant (epoch ms, UTC). */
  day: number;
  bytes: number;
}

export interface StorageUsage {
  /** Bytes of the pages in use: (page_count − freelist_count) × page_size; excludes the WAL file. */
  usedBytes(): number;
  /** Bytes of the database file's pages (page_count × page_size), free ones included. */
  fileBytes(): number;
  /** Every table and index that has pages (the schema table included), with its tier. */
  objects(): StoredObject[];
  /** Bytes of the pages of one table or index (0 when it is gone). NOTE: walks all its pages. */
  objectBytes(name: string): number;
  /** Adds bytes to a day's figure. */
  addWritten(day: number, bytes: number): void;
  /** The figures of the days from `fromDay` on, oldest first. */
  written(fromDay: number): DailyWritten[];
  /** Forgets the figures of the days before `beforeDay`. */
  forgetWritten(beforeDay: number): void;
  /** Writes are refused (hasRoom() false) while this is set: the database is at its budget. */
  setOverBudget(over: boolean): void;
  isOverBudget(): boolean;
}

const RAW = /^history_\d{6}(\d{2})?$/;
const MINUTE = /^rollup_minute_\d{6}$/;
const HOUR = /^rollup_hour_\d{4}$/;

/** The tier of an object whose table is `table`. */
function tierOf(table: string): StorageTier {
  if (RAW.test(table)) return 'raw';
  if (MINUTE.test(table)) return 'minute';
  if (HOUR.test(table)) return 'hour';
  return 'other';
}

export function createStorageUsage(db: BetterSqlite3.Database): StorageUsage {
  const pageCount = db.prepare<[], number>('PRAGMA page_count').pluck();
  const freelistCount = db.prepare<[], number>('PRAGMA freelist_count').pluck();
  const pageSize = db.prepare<[], number>('PRAGMA page_size').pluck().get() ?? 4096;
  const objects = db.prepare<[], { name: string; tbl: string }>('SELECT name, tbl_name AS tbl FROM sqlite_schema WHERE rootpage > 0 ORDER BY name');
  // NOTE: aggregate=TRUE sums one object's pages in dbstat itself: one row, no page list in memory.
  const objectBytes = db.prepare<[string], number | null>('SELECT pgsize FROM dbstat WHERE name = ? AND aggregate = TRUE').pluck();
  const add = db.prepare<[number, number]>('INSERT INTO storage_daily (day, written) VALUES (?, ?) ON CONFLICT (day) DO UPDATE SET written = written + excluded.written');
  const list = db.prepare<[number], { day: number; bytes: number }>('SELECT day, written AS bytes FROM storage_daily WHERE day >= ? ORDER BY day');
  const forget = db.prepare<[number]>('DELETE FROM storage_daily WHERE day < ?');
  let overBudget = false;
  return {
    usedBytes: () => ((pageCount.get() ?? 0) - (freelistCount.get() ?? 0)) * pageSize,
    fileBytes: () => (pageCount.get() ?? 0) * pageSize,
    objects: () => [{ name: 'sqlite_schema', tier: 'other' as const }, ...objects.all().map((o) => ({ name: o.name, tier: tierOf(o.tbl) }))],
    objectBytes: (name) => objectBytes.get(name) ?? 0,
    addWritten: (day, bytes) => void add.run(day, Math.round(bytes)),
    written: (fromDay) => list.all(fromDay),
    forgetWritten: (beforeDay) => void forget.run(beforeDay),
    setOverBudget: (over) => void (overBudget = over),
    isOverBudget: () => overBudget,
  };
}
