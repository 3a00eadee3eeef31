// WAL checkpoints on a worker thread, so that the main thread never copies the WAL into the
// database inside a commit. See checkpoint-worker.ts for what the worker does.

import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../lib/index.js';
import { CHECKPOINT_WORKER_SOURCE, type CheckpointWorkerData, type FromCheckpointWorker, type ToCheckpointWorker } from './checkpoint-worker.js';

/** SQLite's default automatic checkpoint, restored on the main connection when the worker fails. */
const AUTOCHECKPOINT_PAGES = 1000;

/**
 * NOTE: 100 ms between looks at the WAL's size. The first commit after the WAL restarts trims the
 * file back to journal_size_limit on the main thread, and that costs about 0.3 ms per MiB cut off, so
 * the WAL should not grow far past the limit before a cycle starts: at 1,000 updates/s it grows
 * about 0.7 MiB in 100 ms (at 250 ms, restart commits took 3-4 ms; at 100 ms mostly under 1 ms).
 * Looking more often only adds cycles, each with its fixed cost (a hold, an fsync of the new WAL
 * header). A stat() ten times a second costs nothing when idle.
 */
const TICK_MS = 100;

/**
 * Longest that queued writes wait for the worker's final checkpoint of a cycle (two fsyncs and a few
 * pages; 1-4 ms on an SSD, tens of ms on slow flash). Past it they go on, and that cycle leaves the
 * WAL as it is: a stuck worker cannot stall writes for longer.
 */
const HOLD_MAX_MS = 500;

/** Longest that close() waits for the worker to finish its checkpoint and close its connection. */
const STOP_MAX_MS = 10_000;

export interface Checkpointer {
  /** Asks for a passive checkpoint now; false when no worker runs (the caller checkpoints itself). */
  request(): boolean;
  /** Waits for the worker's last checkpoint, closes its connection and ends the thread. */
  stop(): void;
}

export interface CheckpointerDeps {
  /** The main connection: written to only when the worker fails, and checkpointed after a hold. */
  db: BetterSqlite3.Database;
  path: string;
  busyTimeoutMs: number;
  walLimitBytes: number;
  /** Holds and releases the queued writes (the transaction runner). */
  writes: { hold(): void; release(): void };
  log: Logger;
}

/**
 * Starts the worker, or returns undefined (and leaves SQLite's automatic checkpoint on) when it
 * cannot start. Expects wal_autocheckpoint = 0 on the main connection.
 */
export function startCheckpointer(deps: CheckpointerDeps): Checkpointer | undefined {
  const { db, writes, log } = deps;
  const stopped = new SharedArrayBuffer(4);
  const workerData: CheckpointWorkerData = {
    driverPath: createRequire(import.meta.url).resolve('better-sqlite3'),
    path: deps.path,
    busyTimeoutMs: deps.busyTimeoutMs,
    walLimitBytes: deps.walLimitBytes,
    tickMs: TICK_MS,
    stopped,
  };
  let worker: Worker;
  try {
    worker = new Worker(CHECKPOINT_WORKER_SOURCE, { eval: true, workerData, name: 'edgeld-checkpoint' });
  } catch (err) {
    restoreAutocheckpoint(db, log, err);
    return undefined;
  }
  // The thread must not keep a process alive that forgot to close the store.
  worker.unref();
  const afterHold = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  let isRunning = true;
  let holdTimer: NodeJS.Timeout | undefined;

  const send = (message: ToCheckpointWorker): void => worker.postMessage(message);

  const endHold = (): void => {
    if (holdTimer === undefined) return;
    clearTimeout(holdTimer);
    holdTimer = undefined;
    // NOTE: a no-op (about 15 µs) when the worker copied everything; it copies the few frames that
    // direct transactions (not held) committed meanwhile, so that the next write restarts the WAL.
    try {
      if (isRunning && db.open) afterHold.get();
    } catch (err) {
      log.warn('checkpoint after a hold failed', { err });
    }
    writes.release();
  };

  /** No more cycles: a hold in progress lets the writes go. */
  const end = (): void => {
    isRunning = false;
    if (holdTimer === undefined) return;
    clearTimeout(holdTimer);
    holdTimer = undefined;
    writes.release();
  };

  const fail = (reason: string, err?: unknown): void => {
    if (!isRunning) return;
    end();
    log.error(`checkpoint worker ${reason}`, err === undefined ? {} : { err });
    if (db.open) restoreAutocheckpoint(db, log);
  };

  worker.on('message', (message: FromCheckpointWorker) => {
    if (!isRunning || !db.open) return;
    switch (message.type) {
      case 'hold':
        writes.hold();
        holdTimer = setTimeout(() => {
          log.warn('checkpoint worker kept writes waiting too long; letting them go', { waitedMs: HOLD_MAX_MS });
          endHold();
        }, HOLD_MAX_MS);
        holdTimer.unref();
        send({ type: 'held' });
        break;
      case 'done':
        endHold();
        break;
    }
  });
  worker.on('error', (err) => fail('failed', err));
  worker.on('exit', (code) => fail(`exited (code ${code})`));

  return {
    request() {
      if (!isRunning) return false;
      send({ type: 'run' });
      return true;
    },
    stop() {
      if (!isRunning) return;
      end();
      send({ type: 'stop' });
      // NOTE: close() is synchronous, and the main connection's final checkpoint wants the worker's
      // connection closed first; blocking here is fine at the end of the store's life.
      const outcome = Atomics.wait(new Int32Array(stopped), 0, 0, STOP_MAX_MS);
      if (outcome === 'timed-out') log.warn('checkpoint worker did not stop in time; terminating it', { waitedMs: STOP_MAX_MS });
      void worker.terminate();
    },
  };
}

function restoreAutocheckpoint(db: BetterSqlite3.Database, log: Logger, err?: unknown): void {
  db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  log.warn('WAL checkpoints run in commits on the main thread again', err === undefined ? {} : { err });
}
