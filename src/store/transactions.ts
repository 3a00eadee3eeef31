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

export function createTxRunner(db: BetterSqlite3.Database, caches: TxAware, log: Logger): TxRunner {
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const savepoints: Savepoint[] = [];
  /** One hook list per open level: [0] the transaction, [n] the n-th nested savepoint. */
  const frames: Hook[][] = [];
  let queue: QueuedWrite[] = [];
  let immediate: NodeJS.Immediate | undefined;
  let microScheduled = false;
  /** Writes taken by the last scheduled flush; turns the pending flush has waited, and the queue then. */
  let lastBatch = 0;
  let lingered = 0;
  let queuedAtLinger = 0;
  let closed = false;
  let held = false;

  const savepointAt = (depth: number): Savepoint => {
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
  };

  const runFn = <T>(fn: (tx: TxContext) => T, frame: Hook[]): T => {
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
  };

  const runHooks = (hooks: Hook[]): void => {
    for (const hook of hooks) {
      try {
        hook();
      } catch (err) {
        // The data is committed; a failing side effect must not turn into a failed write.
        log.error('onCommit hook failed', { err });
      }
    }
  };

  const rollbackAll = (): void => {
    caches.discard();
    // SQLite rolls back by itself on some errors (SQLITE_FULL, IOERR); then there is nothing to do.
    if (db.inTransaction) rollback.run();
  };

  /** Runs fn inside a SAVEPOINT of the open transaction; its hooks join the parent's on success. */
  const runNested = <T>(fn: (tx: TxContext) => T): T => {
    const parent = frames[frames.length - 1];
    if (!parent) throw new Error('no open transaction');
    const sp = savepointAt(frames.length);
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

  const assertOpen = (): void => {
    if (closed) throw new Error('store is closed');
  };

  function transaction<T>(fn: (tx: TxContext) => T): T {
    assertOpen();
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
    runHooks(frame);
    return result;
  }

  /**
   * The fast path of a batch: every write in one transaction without savepoints. Writes fail rarely
   * (input is validated before it is queued), so this is the common case; when one throws, the whole
   * transaction is rolled back and the batch goes the careful way, a savepoint per write. A write
   * alone in its batch fails alone: its error is final.
   */
  const runOptimistic = (batch: QueuedWrite[]): boolean => {
    try {
      transaction((tx) => {
        for (const w of batch) w.run(tx);
      });
    } catch (err) {
      if (batch.length === 1) batch[0]!.fail(err);
      return batch.length === 1;
    }
    for (const w of batch) w.succeed();
    return true;
  };

  const runBatch = (batch: QueuedWrite[]): void => {
    if (runOptimistic(batch)) return;
    try {
      begin.run();
    } catch (err) {
      for (const w of batch) w.fail(err);
      return;
    }
    const frame: Hook[] = [];
    frames.push(frame);
    const failures = new Map<QueuedWrite, unknown>();
    try {
      for (const w of batch) {
        if (!db.inTransaction) throw new Error('SQLite aborted the batch transaction', { cause: [...failures.values()].pop() });
        try {
          runNested((tx) => w.run(tx));
        } catch (err) {
          failures.set(w, err);
        }
      }
      commit.run();
    } catch (err) {
      // COMMIT (or a rollback after a fatal error) failed: nothing of the batch is durable.
      rollbackAll();
      for (const w of batch) w.fail(err);
      return;
    } finally {
      frames.pop();
    }
    caches.commit();
    runHooks(frame);
    for (const w of batch) {
      if (failures.has(w)) w.fail(failures.get(w));
      else w.succeed();
    }
  };

  const flushQueue = (): void => {
    if (frames.length > 0) throw new Error('cannot flush queued writes from inside a transaction');
    if (immediate) clearImmediate(immediate);
    immediate = undefined;
    lingered = 0;
    microScheduled = false;
    // Writes queued by onCommit hooks from here on land in `queue` again: the next batch.
    const taken = queue;
    queue = [];
    for (let i = 0; i < taken.length; i += MAX_BATCH) runBatch(taken.slice(i, i + MAX_BATCH));
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
    if (closed || held) return;
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

  const schedule = (): void => {
    if (queue.length >= MAX_BATCH && !microScheduled) {
      microScheduled = true;
      queueMicrotask(() => {
        if (microScheduled && !closed && !held) flushQueue();
      });
    }
    immediate ??= setImmediate(onImmediate);
  };

  const write = <T>(fn: (tx: TxContext) => T): Promise<T> => {
    if (closed) return Promise.reject(new Error('store is closed'));
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

  const shutdown = (): void => {
    if (closed) return;
    flushQueue();
    closed = true;
  };

  const hold = (): void => {
    held = true;
  };

  const release = (): void => {
    if (!held) return;
    held = false;
    microScheduled = false;
    if (!closed && queue.length > 0) schedule();
  };

  /**
   * For repositories: joins the open transaction as it is (no savepoint: a failure propagates to
   * whoever rolls back, the write or its savepoint), or opens one when none is open.
   */
  function atomic<T>(fn: (tx: TxContext) => T): T {
    const frame = frames[frames.length - 1];
    return frame ? runFn(fn, frame) : transaction(fn);
  }

  return { transaction, atomic, write, flushQueue, shutdown, hold, release };
}
