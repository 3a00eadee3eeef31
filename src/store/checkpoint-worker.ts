// The body of the checkpoint worker thread: its own connection to the database file, which copies
// the WAL into the database with passive checkpoints while the main connection keeps writing.

/** Data the worker starts with. */
export interface CheckpointWorkerData {
  /** Resolved path of better-sqlite3, so the worker loads the same driver whatever its directory. */
  readonly driverPath: string;
  readonly path: string;
  readonly busyTimeoutMs: number;
  /** WAL size in bytes beyond which the worker checkpoints (the store's journal_size_limit). */
  readonly walLimitBytes: number;
  readonly tickMs: number;
  /** One Int32 the worker sets to 1 as it ends (its connection closed), for a synchronous close(). */
  readonly stopped: SharedArrayBuffer;
}

/** main → worker: `run` asks for a checkpoint now, `held` answers `hold`, `stop` ends the thread. */
export type ToCheckpointWorker = { type: 'run' } | { type: 'held' } | { type: 'stop' };
/** worker → main: `hold` asks for a moment without commits, `done` ends it. */
export type FromCheckpointWorker = { type: 'hold' } | { type: 'done' };

/**
 * NOTE: the worker is a source string run with `eval: true` rather than a file: the same text runs
 * from dist/ and from the TypeScript sources under vitest, and there is no build step to copy a
 * plain .js file next to the compiled modules. It is CommonJS (an eval'd worker is a script).
 *
 * How a cycle goes: once the WAL file is larger than journal_size_limit, or when asked, the worker
 * runs passive checkpoints. (A restarted WAL is overwritten from its start and trimmed to that limit,
 * so the file only outgrows it once about 1,000 frames of 4 KiB were written since, what SQLite's
 * automatic checkpoint waits for; a stat() tells, where counting frames would take a checkpoint.)
 * The first pass copies the bulk, each next one what was committed during the previous one. A
 * passive checkpoint never waits for or blocks the main connection, but the WAL only starts over
 * (and journal_size_limit trims it) when a write transaction begins with every frame copied, which a
 * steady stream of commits never leaves room for: the WAL would grow without end. So when a pass
 * copies few frames, the worker asks the main thread to hold its queued writes (`hold`), copies the
 * rest (`held`) and lets them go (`done`); the next write then restarts the WAL from its beginning.
 * The event loop keeps running meanwhile; only queued writes wait, for about one small checkpoint.
 * A stat() every tick is all an idle database costs. Errors are not caught: they end the thread,
 * and the store falls back to SQLite's automatic checkpoint.
 */
export const CHECKPOINT_WORKER_SOURCE = String.raw`'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.driverPath);

// A pass that copied this few frames is about as short as a checkpoint gets (its two fsyncs
// dominate), so the next one is the final one, under a hold. So is the next one when a pass copied
// more than half of what the one before it did: commits come about as fast as passes copy them, and
// more passes would only let the WAL grow.
const SMALL_PASS_FRAMES = 64;
const MAX_PASSES = 4;

const stopped = new Int32Array(workerData.stopped);
// Whatever ends the thread, a stop or an error, must not leave close() waiting for it.
process.on('exit', () => {
  Atomics.store(stopped, 0, 1);
  Atomics.notify(stopped, 0);
});

const db = new Database(workerData.path, { timeout: workerData.busyTimeoutMs });
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const wal = workerData.path + '-wal';
let requested = false;
let holding = false;

const walBytes = () => {
  try {
    return statSync(wal).size;
  } catch {
    return 0;
  }
};

// { busy, log, checkpointed }: busy 1 when another checkpoint runs; checkpointed < log when a reader
// still needs older frames.
const checkpoint = () => passive.get();

const cycle = () => {
  let last = checkpoint();
  let copied = last.log;
  for (let i = 1; i < MAX_PASSES; i++) {
    if (last.busy !== 0 || last.checkpointed < last.log) return;
    const next = checkpoint();
    // Nothing committed during the last pass (or the WAL restarted): the next write restarts it.
    if (next.log <= last.log) return;
    const before = copied;
    copied = next.log - last.log;
    last = next;
    if (copied <= SMALL_PASS_FRAMES || copied > before / 2) break;
  }
  if (last.busy !== 0 || last.checkpointed < last.log) return;
  holding = true;
  parentPort.postMessage({ type: 'hold' });
};

const tick = () => {
  if (holding) return;
  if (!requested && walBytes() <= workerData.walLimitBytes) return;
  requested = false;
  cycle();
};

const timer = setInterval(tick, workerData.tickMs);

parentPort.on('message', (message) => {
  switch (message.type) {
    case 'run':
      requested = true;
      tick();
      break;
    case 'held':
      holding = false;
      checkpoint();
      parentPort.postMessage({ type: 'done' });
      break;
    case 'stop':
      clearInterval(timer);
      db.close();
      // Nothing is left to keep the thread alive: it ends, and its exit handler wakes close().
      parentPort.close();
      break;
  }
});
`;
