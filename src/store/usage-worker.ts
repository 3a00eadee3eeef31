// The body of the thread that measures the bytes of each table and index of a database file with
// SQLite's dbstat: dbstat reads every page it counts (about 3 ms a MB from the page cache here, more
// from an SD card), so a bucket table of a gigabyte would stall the event loop for seconds. The thread
// has a read-only connection of its own; in WAL mode it never blocks the main connection.

/** Data the thread starts with. */
export interface UsageWorkerData {
  /** Resolved path of better-sqlite3, so the thread loads the same driver whatever its directory. */
  readonly driverPath: string;
  readonly path: string;
  readonly busyTimeoutMs: number;
}

/** thread → main: each object with pages (its name and its table's), then the end. */
export type FromUsageWorker = { type: 'object'; name: string; table: string; bytes: number } | { type: 'done' };

/**
 * NOTE: a source string run with `eval: true`, as the checkpoint worker is (same reasons: the text
 * runs from dist/ and from the TypeScript sources under vitest). One statement per object: each is
 * its own short read transaction, so the walk never holds a snapshot that keeps a checkpoint from
 * restarting the WAL for longer than one object takes. Errors are not caught: they end the thread
 * with an error event, which the main thread logs.
 */
export const USAGE_WORKER_SOURCE = String.raw`'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driverPath);

const db = new Database(workerData.path, { readonly: true, fileMustExist: true, timeout: workerData.busyTimeoutMs });
try {
  const objects = db.prepare("SELECT name, tbl_name AS tbl FROM sqlite_schema WHERE rootpage > 0 ORDER BY name").all();
  objects.unshift({ name: 'sqlite_schema', tbl: 'sqlite_schema' });
  const bytes = db.prepare('SELECT pgsize FROM dbstat WHERE name = ? AND aggregate = TRUE').pluck();
  for (const o of objects) parentPort.postMessage({ type: 'object', name: o.name, table: o.tbl, bytes: bytes.get(o.name) || 0 });
} finally {
  db.close();
}
parentPort.postMessage({ type: 'done' });
`;
