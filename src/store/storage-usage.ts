// What the database holds on disk, for the disk budget: the bytes of the pages in use (two cheap
// pragmas), the bytes of each table and index by the level of history it belongs to (SQLite's dbstat,
// which reads every page it counts: on a thread of its own for a file, usage-worker.ts), the bytes
// written per UTC day (a small table, so that a restart keeps them), and whether writes are refused
// for the budget (hasRoom() is then false).

import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { USAGE_WORKER_SOURCE, type FromUsageWorker, type UsageWorkerData } from './usage-worker.js';

/** What a table or index counts under: raw history buckets, minute or hour summaries, or the rest. */
type StorageTier = 'raw' | 'minute' | 'hour' | 'other';

/** Bytes of pages by tier. */
export type TierBytes = Record<StorageTier, number>;

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
  /**
   * Bytes of the pages of every table and index (the schema table included), by tier. NOTE: reads
   * every page in use: on a thread of its own with a read-only connection for a file, in memory one
   * object per event-loop turn.
   */
  measureTiers(): Promise<TierBytes>;
  /** Ends a measurement under way (the store closes). */
  close(): void;
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

/** Where a measurement runs: the file's path and how long its connection waits for a lock. */
export interface UsageFile {
  path: string;
  busyTimeoutMs: number;
}

const emptyTiers = (): TierBytes => ({ raw: 0, minute: 0, hour: 0, other: 0 });
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Measures the objects of an in-memory database on this thread, one per event-loop turn. */
async function measureHere(db: BetterSqlite3.Database): Promise<TierBytes> {
  const objects = db.prepare<[], { name: string; tbl: string }>('SELECT name, tbl_name AS tbl FROM sqlite_schema WHERE rootpage > 0 ORDER BY name').all();
  // NOTE: aggregate=TRUE sums one object's pages in dbstat itself: one row, no page list in memory.
  const bytesOf = db.prepare<[string], number | null>('SELECT pgsize FROM dbstat WHERE name = ? AND aggregate = TRUE').pluck();
  const tiers = emptyTiers();
  for (const o of [{ name: 'sqlite_schema', tbl: 'sqlite_schema' }, ...objects]) {
    if (!db.open) break;
    tiers[tierOf(o.tbl)] += bytesOf.get(o.name) ?? 0;
    await nextTurn();
  }
  return tiers;
}

/** Measures the objects of a database file on a worker thread. */
function measureOnThread(file: UsageFile, started: (w: Worker) => void): Promise<TierBytes> {
  const workerData: UsageWorkerData = { driverPath: createRequire(import.meta.url).resolve('better-sqlite3'), ...file };
  return new Promise((resolve, reject) => {
    const tiers = emptyTiers();
    const worker = new Worker(USAGE_WORKER_SOURCE, { eval: true, workerData, name: 'edgeld-storage-usage' });
    // The thread must not keep a process alive that forgot to close the store.
    worker.unref();
    started(worker);
    let done = false;
    worker.on('message', (m: FromUsageWorker) => {
      if (m.type === 'object') tiers[tierOf(m.table)] += m.bytes;
      else {
        done = true;
        resolve(tiers);
      }
    });
    worker.on('error', reject);
    worker.on('exit', (code) => {
      if (!done) reject(new Error(`storage measurement thread ended (code ${code})`));
    });
  });
}

export function createStorageUsage(db: BetterSqlite3.Database, file: UsageFile | undefined): StorageUsage {
  const pageCount = db.prepare<[], number>('PRAGMA page_count').pluck();
  const freelistCount = db.prepare<[], number>('PRAGMA freelist_count').pluck();
  const pageSize = db.prepare<[], number>('PRAGMA page_size').pluck().get() ?? 4096;
  const add = db.prepare<[number, number]>('INSERT INTO storage_daily (day, written) VALUES (?, ?) ON CONFLICT (day) DO UPDATE SET written = written + excluded.written');
  const list = db.prepare<[number], { day: number; bytes: number }>('SELECT day, written AS bytes FROM storage_daily WHERE day >= ? ORDER BY day');
  const forget = db.prepare<[number]>('DELETE FROM storage_daily WHERE day < ?');
  let overBudget = false;
  let worker: Worker | undefined;
  return {
    usedBytes: () => ((pageCount.get() ?? 0) - (freelistCount.get() ?? 0)) * pageSize,
    fileBytes: () => (pageCount.get() ?? 0) * pageSize,
    measureTiers: () => (file === undefined ? measureHere(db) : measureOnThread(file, (w) => void (worker = w)).finally(() => {
      worker = undefined;
    })),
    close: () => void worker?.terminate(),
    addWritten: (day, bytes) => void add.run(day, Math.round(bytes)),
    written: (fromDay) => list.all(fromDay),
    forgetWritten: (beforeDay) => void forget.run(beforeDay),
    setOverBudget: (over) => void (overBudget = over),
    isOverBudget: () => overBudget,
  };
}
