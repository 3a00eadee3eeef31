// WAL checkpoints on a worker thread, so that the main thread never copies the WAL into the
// database inside a commit. See checkpoint-worker.ts for what the worker does.

import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';
import { statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
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

/**
 * A worker that ran no cycle for this long ends: an idle gateway does not keep a second V8 isolate and
 * SQLite connection for nothing. The main thread then looks at the WAL's size every tick (a stat()),
 * and starts a new worker once writes made it outgrow its limit, or a checkpoint is asked for.
 */
const IDLE_END_MS = 30_000;

export interface Checkpointer {
  /** Asks for a passive checkpoint now; false when no worker can run it (the caller checkpoints itself). */
  request(): boolean;
  /** Waits for the worker's last checkpoint, closes its connection and ends the thread. */
  stop(): void;
  /** Whether a worker thread runs now. */
  isThreadRunning(): boolean;
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
  /** Milliseconds without a cycle after which a worker ends (default IDLE_END_MS). */
  idleEndMs?: number;
}

/** One worker thread, and the flag it sets as it ends. */
interface Thread {
  readonly worker: Worker;
  readonly stopped: SharedArrayBuffer;
  /** Told to stop because it was idle: its end is no failure. */
  retired: boolean;
}

/**
 * Watches the WAL and runs checkpoint cycles on a worker thread started when first needed. Expects
 * wal_autocheckpoint = 0 on the main connection; should a worker fail, SQLite's automatic
 * checkpoint is turned back on.
 */
export function startCheckpointer(deps: CheckpointerDeps): Checkpointer {
  const { db, writes, log } = deps;
  const idleEndMs = deps.idleEndMs ?? IDLE_END_MS;
  const driverPath = createRequire(import.meta.url).resolve('better-sqlite3');
  const afterHold = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  let isRunning = true;
  let thread: Thread | undefined;
  /** Retired threads still closing their connection. */
  const retiring = new Set<Thread>();
  let holdTimer: NodeJS.Timeout | undefined;
  /** When the current thread last started a cycle or was asked for one (performance.now()). */
  let lastActive = 0;

  const walBytes = (): number => {
    try {
      return statSync(`${deps.path}-wal`).size;
    } catch {
      return 0;
    }
  };

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
    clearInterval(watch);
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

  const onMessage = (t: Thread, message: FromCheckpointWorker): void => {
    if (!isRunning || !db.open || t !== thread) return;
    switch (message.type) {
      case 'hold':
        lastActive = performance.now();
        writes.hold();
        holdTimer = setTimeout(() => {
          log.warn('checkpoint worker kept writes waiting too long; letting them go', { waitedMs: HOLD_MAX_MS });
          endHold();
        }, HOLD_MAX_MS);
        holdTimer.unref();
        t.worker.postMessage({ type: 'held' } satisfies ToCheckpointWorker);
        break;
      case 'done':
        endHold();
        break;
    }
  };

  const spawn = (): Thread | undefined => {
    const stopped = new SharedArrayBuffer(4);
    const workerData: CheckpointWorkerData = {
      driverPath, path: deps.path, busyTimeoutMs: deps.busyTimeoutMs, walLimitBytes: deps.walLimitBytes, tickMs: TICK_MS, stopped,
    };
    let worker: Worker;
    try {
      worker = new Worker(CHECKPOINT_WORKER_SOURCE, { eval: true, workerData, name: 'edgeld-checkpoint' });
    } catch (err) {
      fail('could not start', err);
      return undefined;
    }
    // The thread must not keep a process alive that forgot to close the store.
    worker.unref();
    const t: Thread = { worker, stopped, retired: false };
    worker.on('message', (message: FromCheckpointWorker) => onMessage(t, message));
    worker.on('error', (err) => {
      if (t.retired) log.warn('checkpoint worker failed while ending', { err });
      else fail('failed', err);
    });
    worker.on('exit', (code) => {
      retiring.delete(t);
      if (!t.retired) fail(`exited (code ${code})`);
    });
    lastActive = performance.now();
    return t;
  };

  const retire = (t: Thread): void => {
    t.retired = true;
    retiring.add(t);
    if (thread === t) thread = undefined;
    t.worker.postMessage({ type: 'stop' } satisfies ToCheckpointWorker);
  };

  /** The WAL's size when the last worker ended: a WAL checkpointed then keeps its size until the next write. */
  let sizeAtRetire = -1;
  const watch = setInterval(() => {
    if (!isRunning) return;
    if (thread === undefined) {
      const size = walBytes();
      if (size > deps.walLimitBytes && size !== sizeAtRetire) thread = spawn();
      return;
    }
    if (holdTimer === undefined && performance.now() - lastActive > idleEndMs) {
      sizeAtRetire = walBytes();
      retire(thread);
    }
  }, TICK_MS);
  watch.unref();

  /** Waits (synchronously) until a thread told to stop has closed its connection. */
  const awaitEnd = (t: Thread): void => {
    // NOTE: close() is synchronous, and the main connection's final checkpoint wants the worker's
    // connection closed first; blocking here is fine at the end of the store's life.
    const outcome = Atomics.wait(new Int32Array(t.stopped), 0, 0, STOP_MAX_MS);
    if (outcome === 'timed-out') log.warn('checkpoint worker did not stop in time; terminating it', { waitedMs: STOP_MAX_MS });
    void t.worker.terminate();
  };

  return {
    request() {
      if (!isRunning) return false;
      thread ??= spawn();
      if (thread === undefined) return false;
      lastActive = performance.now();
      thread.worker.postMessage({ type: 'run' } satisfies ToCheckpointWorker);
      return true;
    },
    stop() {
      const wasRunning = isRunning;
      end();
      const current = thread;
      if (wasRunning && current !== undefined) retire(current);
      for (const t of [...retiring]) awaitEnd(t);
    },
    isThreadRunning: () => thread !== undefined,
  };
}

function restoreAutocheckpoint(db: BetterSqlite3.Database, log: Logger, err?: unknown): void {
  db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  log.warn('WAL checkpoints run in commits on the main thread again', err === undefined ? {} : { err });
}
