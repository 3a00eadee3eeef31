// Transactions with onCommit hooks, SAVEPOINT nesting, and the group-commit write queue that lets
// many small writes share one COMMIT (one fsync-worthy WAL append instead of many on SD cards).

import type BetterSqlite3 from 'better-sqlite3';
import type { Logger } from '../lib/index.js';
import type { TxAware } from './tx-cache.js';
import type { TxContext } from './tx-context.js';

/**
 * Largest number of queued writes committed together: a batch operation of the default maximum size
 * (1,000 entities, one write each) commits once, as every commit rewrites the pages it touched.
 */
export const MAX_BATCH = 1_000;

/** Most loop turns a flush waits for the writers of the last batch (see onImmediate). */
const MAX_LINGER = 4;

type Hook = () => void;
export type RunInTx = <T>(fn: (tx: TxContext) => T) => T;

interface QueuedWrite {
  run(tx: TxContext): void;
  succeed(): void;
  fail(err: unknown): void;
}

interface Savepoint {
  open: BetterSqlite3.Statement;
  release: BetterSqlite3.Statement;
  rollbackTo: BetterSqlite3.Statement;
}

export interface TxRunner {
  transaction: RunInTx;
  /** Joins the open transaction without a savepoint, or opens one. */
  atomic: RunInTx;
  write<T>(fn: (tx: TxContext) => T): Promise<T>;
  /** Runs every queued write now, synchronously. */
  flushQueue(): void;
  /** Commits what is queued, then refuses further work. */
  shutdown(): void;
  /**
   * Holds queued writes: they keep queueing but none commits until release(). Direct transactions
   * and flushQueue() are not held. For the checkpointer, which needs a moment without commits.
   */
  hold(): void;
  release(): void;
}

function isThenable(x: unknown): boolean {
  return typeof x === 'object' && x !== null && typeof Reflect.get(x, 'then') === 'function';
}

/** The state the transaction core and the write queue share. */
interface RunnerState {
  closed: boolean;
}

/** The transaction machinery under the write queue: open levels, savepoints and their hooks. */
interface TxCore {
  transaction: RunInTx;
  atomic: RunInTx;
  /** Runs fn inside a SAVEPOINT of the open transaction; its hooks join the parent's on success. */
  runNested: RunInTx;
  /** Opens a transaction (BEGIN IMMEDIATE) and its hook frame. */
  beginFrame(): Hook[];
  /** Closes the frame beginFrame opened, committed or not. */
  endFrame(): void;
  commit(): void;
  rollbackAll(): void;
  /** After a commit: makes the caches' writes visible and runs the hooks. */
  afterCommit(frame: Hook[]): void;
  isInTransaction(): boolean;
  /** Whether a transaction function is running (queued writes cannot be flushed from one). */
  isBusy(): boolean;
}

function savepointAt(db: BetterSqlite3.Database, savepoints: Savepoint[], depth: number): Savepoint {
  let sp = savepoints[depth];
  if (!sp) {
    // Savepoint names cannot be bound parameters; `depth` is an integer we own.
    sp = {
      open: db.prepare(`SAVEPOINT sp${depth}`),
      release: db.prepare(`RELEASE sp${depth}`),
      rollbackTo: db.prepare(`ROLLBACK TO sp${depth}`),
    };
    savepoints[depth] = sp;
  }
  return sp;
}

function runFn<T>(fn: (tx: TxContext) => T, frame: Hook[]): T {
  let open = true;
  const tx: TxContext = {
    onCommit(hook) {
      if (!open) throw new Error('onCommit called after the transaction function returned');
      frame.push(hook);
    },
  };
  try {
    const result = fn(tx);
    if (isThenable(result)) throw new Error('a transaction function must be synchronous (it returned a Promise)');
    return result;
  } finally {
    open = false;
  }
}

function runHooks(hooks: Hook[], log: Logger): void {
  for (const hook of hooks) {
    try {
      hook();
    } catch (err) {
      // The data is committed; a failing side effect must not turn into a failed write.
      log.error('onCommit hook failed', { err });
    }
  }
}

function createTxCore(db: BetterSqlite3.Database, caches: TxAware, log: Logger, state: RunnerState): TxCore {
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const savepoints: Savepoint[] = [];
  /** One hook list per open level: [0] the transaction, [n] the n-th nested savepoint. */
  const frames: Hook[][] = [];

  const rollbackAll = (): void => {
    caches.discard();
    // SQLite rolls back by itself on some errors (SQLITE_FULL, IOERR); then there is nothing to do.
    if (db.inTransaction) rollback.run();
  };

  const runNested = <T>(fn: (tx: TxContext) => T): T => {
    const parent = frames[frames.length - 1];
    if (!parent) throw new Error('no open transaction');
    const sp = savepointAt(db, savepoints, frames.length);
    sp.open.run();
    const frame: Hook[] = [];
    frames.push(frame);
    try {
      const result = runFn(fn, frame);
      sp.release.run();
      parent.push(...frame);
      return result;
    } catch (err) {
      caches.discard();
      if (db.inTransaction) {
        sp.rollbackTo.run();
        sp.release.run();
      }
      throw err;
    } finally {
      frames.pop();
    }
  };

  function transaction<T>(fn: (tx: TxContext) => T): T {
    if (state.closed) throw new Error('store is closed');
    if (frames.length > 0) return runNested(fn);
    const frame: Hook[] = [];
    begin.run();
    frames.push(frame);
    let result: T;
    try {
      result = runFn(fn, frame);
      commit.run();
    } catch (err) {
      rollbackAll();
      throw err;
    } finally {
      frames.pop();
    }
    caches.commit();
    runHooks(frame, log);
    return result;
  }

  /**
   * For repositories: joins the open transaction as it is (no savepoint: a failure propagates to
   * whoever rolls back, the write or its savepoint), or opens one when none is open.
   */
  function atomic<T>(fn: (tx: TxContext) => T): T {
    const frame = frames[frames.length - 1];
    return frame ? runFn(fn, frame) : transaction(fn);
  }

  return {
    transaction,
    atomic,
    runNested,
    beginFrame() {
      begin.run();
      const frame: Hook[] = [];
      frames.push(frame);
      return frame;
    },
    endFrame() {
      frames.pop();
    },
    commit() {
      commit.run();
    },
    rollbackAll,
    afterCommit(frame) {
      caches.commit();
      runHooks(frame, log);
    },
    isInTransaction: () => db.inTransaction,
    isBusy: () => frames.length > 0,
  };
}

/**
 * The fast path of a batch: every write in one transaction without savepoints. Writes fail rarely
 * (input is validated before it is queued), so this is the common case; when one throws, the whole
 * transaction is rolled back and the batch goes the careful way, a savepoint per write. A write
 * alone in its batch fails alone: its error is final.
 */
function runOptimistic(core: TxCore, batch: QueuedWrite[]): boolean {
  try {
    core.transaction((tx) => {
      for (const w of batch) w.run(tx);
    });
  } catch (err) {
    if (batch.length === 1) batch[0]!.fail(err);
    return batch.length === 1;
  }
  for (const w of batch) w.succeed();
  return true;
}

/** Runs a batch of queued writes in one transaction, each in its own savepoint when one fails. */
function runBatch(core: TxCore, batch: QueuedWrite[]): void {
  if (runOptimistic(core, batch)) return;
  let frame: Hook[];
  try {
    frame = core.beginFrame();
  } catch (err) {
    for (const w of batch) w.fail(err);
    return;
  }
  const failures = new Map<QueuedWrite, unknown>();
  try {
    for (const w of batch) {
      if (!core.isInTransaction()) throw new Error('SQLite aborted the batch transaction', { cause: [...failures.values()].pop() });
      try {
        core.runNested((tx) => w.run(tx));
      } catch (err) {
        failures.set(w, err);
      }
    }
    core.commit();
  } catch (err) {
    // COMMIT (or a rollback after a fatal error) failed: nothing of the batch is durable.
    core.rollbackAll();
    for (const w of batch) w.fail(err);
    return;
  } finally {
    core.endFrame();
  }
  core.afterCommit(frame);
  for (const w of batch) {
    if (failures.has(w)) w.fail(failures.get(w));
    else w.succeed();
  }
}

/**
 * `commitWindowMs`: how long the first write queued waits for others to share its commit (0: the
 * commit follows in the next turn of the event loop, lingering a few turns while writers keep coming).
 * NOTE: writes arriving one at a time (measurements spread over the second) each commit alone, and a
 * commit writes every page it touched to the WAL: a window shares those pages, paid in latency.
 */
export function createTxRunner(db: BetterSqlite3.Database, caches: TxAware, log: Logger, commitWindowMs = 0): TxRunner {
  const state: RunnerState = { closed: false };
  const core = createTxCore(db, caches, log, state);
  let queue: QueuedWrite[] = [];
  let immediate: NodeJS.Immediate | undefined;
  let windowTimer: NodeJS.Timeout | undefined;
  let microScheduled = false;
  /** Writes taken by the last scheduled flush; turns the pending flush has waited, and the queue then. */
  let lastBatch = 0;
  let lingered = 0;
  let queuedAtLinger = 0;
  let held = false;

  const flushQueue = (): void => {
    if (core.isBusy()) throw new Error('cannot flush queued writes from inside a transaction');
    if (immediate) clearImmediate(immediate);
    immediate = undefined;
    if (windowTimer) clearTimeout(windowTimer);
    windowTimer = undefined;
    lingered = 0;
    microScheduled = false;
    // Writes queued by onCommit hooks from here on land in `queue` again: the next batch.
    const taken = queue;
    queue = [];
    for (let i = 0; i < taken.length; i += MAX_BATCH) runBatch(core, taken.slice(i, i + MAX_BATCH));
  };

  /**
   * NOTE: when fewer writes are queued than the last flush committed, the writers of the last batch
   * are probably still sending: the flush waits another loop turn, so a batch keeps its size instead
   * of splitting into several commits (each commit writes every B-tree page its batch touched). It
   * waits at most MAX_LINGER turns, and after the first only while writes keep arriving. A lone
   * writer (last batch of one) never waits.
   */
  const onImmediate = (): void => {
    immediate = undefined;
    if (state.closed || held) return;
    if (queue.length < lastBatch && lingered < MAX_LINGER && (lingered === 0 || queue.length > queuedAtLinger)) {
      lingered += 1;
      queuedAtLinger = queue.length;
      immediate = setImmediate(onImmediate);
      return;
    }
    lingered = 0;
    lastBatch = queue.length;
    flushQueue();
  };

  const onWindow = (): void => {
    windowTimer = undefined;
    if (!state.closed && !held) flushQueue();
  };
  const schedule = (): void => {
    if (queue.length >= MAX_BATCH && !microScheduled) {
      microScheduled = true;
      queueMicrotask(() => {
        if (microScheduled && !state.closed && !held) flushQueue();
      });
    }
    if (commitWindowMs === 0) immediate ??= setImmediate(onImmediate);
    else windowTimer ??= setTimeout(onWindow, commitWindowMs);
  };

  const write = <T>(fn: (tx: TxContext) => T): Promise<T> => {
    if (state.closed) return Promise.reject(new Error('store is closed'));
    return new Promise<T>((resolve, reject) => {
      let result: T;
      queue.push({
        run: (tx) => {
          result = fn(tx);
          if (isThenable(result)) throw new Error('a write function must be synchronous (it returned a Promise)');
        },
        succeed: () => resolve(result),
        fail: reject,
      });
      schedule();
    });
  };

  return {
    transaction: core.transaction,
    atomic: core.atomic,
    write,
    flushQueue,
    shutdown() {
      if (state.closed) return;
      flushQueue();
      state.closed = true;
    },
    hold() {
      held = true;
    },
    release() {
      if (!held) return;
      held = false;
      microScheduled = false;
      if (!state.closed && queue.length > 0) schedule();
    },
  };
}
