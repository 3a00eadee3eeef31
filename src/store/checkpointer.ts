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

/** A checkpointer's parts and state, shared by the functions below. */
interface CheckpointerContext {
  readonly deps: CheckpointerDeps;
  readonly idleEndMs: number;
  readonly driverPath: string;
  readonly afterHold: BetterSqlite3.Statement;
  isRunning: boolean;
  thread: Thread | undefined;
  /** Retired threads still closing their connection. */
  readonly retiring: Set<Thread>;
  holdTimer: NodeJS.Timeout | undefined;
  /** When the current thread last started a cycle or was asked for one (performance.now()). */
  lastActive: number;
  /** The WAL's size when the last worker ended: a WAL checkpointed then keeps its size until the next write. */
  sizeAtRetire: number;
  watch: NodeJS.Timeout | undefined;
}

function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

function endHold(c: CheckpointerContext): void {
  if (c.holdTimer === undefined) return;
  clearTimeout(c.holdTimer);
  c.holdTimer = undefined;
  // NOTE: a no-op (about 15 µs) when the worker copied everything; it copies the few frames that
  // direct transactions (not held) committed meanwhile, so that the next write restarts the WAL.
  try {
    if (c.isRunning && c.deps.db.open) c.afterHold.get();
  } catch (err) {
    c.deps.log.warn('checkpoint after a hold failed', { err });
  }
  c.deps.writes.release();
}

/** No more cycles: a hold in progress lets the writes go. */
function endCycles(c: CheckpointerContext): void {
  c.isRunning = false;
  clearInterval(c.watch);
  if (c.holdTimer === undefined) return;
  clearTimeout(c.holdTimer);
  c.holdTimer = undefined;
  c.deps.writes.release();
}

function fail(c: CheckpointerContext, reason: string, err?: unknown): void {
  if (!c.isRunning) return;
  endCycles(c);
  c.deps.log.error(`checkpoint worker ${reason}`, err === undefined ? {} : { err });
  if (c.deps.db.open) restoreAutocheckpoint(c.deps.db, c.deps.log);
}

function onMessage(c: CheckpointerContext, t: Thread, message: FromCheckpointWorker): void {
  if (!c.isRunning || !c.deps.db.open || t !== c.thread) return;
  switch (message.type) {
    case 'hold':
      c.lastActive = performance.now();
      c.deps.writes.hold();
      c.holdTimer = setTimeout(() => {
        c.deps.log.warn('checkpoint worker kept writes waiting too long; letting them go', { waitedMs: HOLD_MAX_MS });
        endHold(c);
      }, HOLD_MAX_MS);
      c.holdTimer.unref();
      t.worker.postMessage({ type: 'held' } satisfies ToCheckpointWorker);
      break;
    case 'done':
      endHold(c);
      break;
  }
}

function spawn(c: CheckpointerContext): Thread | undefined {
  const { deps } = c;
  const stopped = new SharedArrayBuffer(4);
  const workerData: CheckpointWorkerData = {
    driverPath: c.driverPath, path: deps.path, busyTimeoutMs: deps.busyTimeoutMs, walLimitBytes: deps.walLimitBytes, tickMs: TICK_MS, stopped,
  };
  let worker: Worker;
  try {
    worker = new Worker(CHECKPOINT_WORKER_SOURCE, { eval: true, workerData, name: 'edgeld-checkpoint' });
  } catch (err) {
    fail(c, 'could not start', err);
    return undefined;
  }
  // The thread must not keep a process alive that forgot to close the store.
  worker.unref();
  const t: Thread = { worker, stopped, retired: false };
  worker.on('message', (message: FromCheckpointWorker) => onMessage(c, t, message));
  worker.on('error', (err) => {
    if (t.retired) deps.log.warn('checkpoint worker failed while ending', { err });
    else fail(c, 'failed', err);
  });
  worker.on('exit', (code) => {
    c.retiring.delete(t);
    if (!t.retired) fail(c, `exited (code ${code})`);
  });
  c.lastActive = performance.now();
  return t;
}

function retire(c: CheckpointerContext, t: Thread): void {
  t.retired = true;
  c.retiring.add(t);
  if (c.thread === t) c.thread = undefined;
  t.worker.postMessage({ type: 'stop' } satisfies ToCheckpointWorker);
}

/** A look at the WAL: starts a worker when it outgrew its limit, retires an idle one. */
function tick(c: CheckpointerContext): void {
  if (!c.isRunning) return;
  if (c.thread === undefined) {
    const size = walBytes(c.deps.path);
    if (size > c.deps.walLimitBytes && size !== c.sizeAtRetire) c.thread = spawn(c);
    return;
  }
  if (c.holdTimer === undefined && performance.now() - c.lastActive > c.idleEndMs) {
    c.sizeAtRetire = walBytes(c.deps.path);
    retire(c, c.thread);
  }
}

/** Waits (synchronously) until a thread told to stop has closed its connection. */
function awaitEnd(t: Thread, log: Logger): void {
  // NOTE: close() is synchronous, and the main connection's final checkpoint wants the worker's
  // connection closed first; blocking here is fine at the end of the store's life.
  const outcome = Atomics.wait(new Int32Array(t.stopped), 0, 0, STOP_MAX_MS);
  if (outcome === 'timed-out') log.warn('checkpoint worker did not stop in time; terminating it', { waitedMs: STOP_MAX_MS });
  void t.worker.terminate();
}

/**
 * Watches the WAL and runs checkpoint cycles on a worker thread started when first needed. Expects
 * wal_autocheckpoint = 0 on the main connection; should a worker fail, SQLite's automatic
 * checkpoint is turned back on.
 */
export function startCheckpointer(deps: CheckpointerDeps): Checkpointer {
  const c: CheckpointerContext = {
    deps,
    idleEndMs: deps.idleEndMs ?? IDLE_END_MS,
    driverPath: createRequire(import.meta.url).resolve('better-sqlite3'),
    afterHold: deps.db.prepare('PRAGMA wal_checkpoint(PASSIVE)'),
    isRunning: true,
    thread: undefined,
    retiring: new Set(),
    holdTimer: undefined,
    lastActive: 0,
    sizeAtRetire: -1,
    watch: undefined,
  };
  c.watch = setInterval(() => tick(c), TICK_MS);
  c.watch.unref();

  return {
    request() {
      if (!c.isRunning) return false;
      c.thread ??= spawn(c);
      if (c.thread === undefined) return false;
      c.lastActive = performance.now();
      c.thread.worker.postMessage({ type: 'run' } satisfies ToCheckpointWorker);
      return true;
    },
    stop() {
      const wasRunning = c.isRunning;
      endCycles(c);
      const current = c.thread;
      if (wasRunning && current !== undefined) retire(c, current);
      for (const t of [...c.retiring]) awaitEnd(t, deps.log);
    },
    isThreadRunning: () => c.thread !== undefined,
  };
}

function restoreAutocheckpoint(db: BetterSqlite3.Database, log: Logger, err?: unknown): void {
  db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  log.warn('WAL checkpoints run in commits on the main thread again', err === undefined ? {} : { err });
}
