// WAL checkpoints on a worker thread: the main connection never checkpoints in a commit, the worker
// keeps the WAL small under sustained writes, close() stops it, and a failing worker falls back.

import Database from 'better-sqlite3';
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger, silentLogger } from '../../src/lib/index.js';
import { startCheckpointer } from '../../src/store/checkpointer.js';
import { createTxRunner } from '../../src/store/transactions.js';
import { createCacheGroup } from '../../src/store/tx-cache.js';
import type { Store } from '../../src/store/index.js';
import { entity, fileStore, memoryStore, NS, property, tempDir } from './helpers.js';

const workers = vi.hoisted(() => ({ started: [] as Array<{ threadId: number; once(event: 'exit', fn: () => void): void }> }));

vi.mock('node:worker_threads', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:worker_threads')>();
  class RecordedWorker extends real.Worker {
    constructor(...args: ConstructorParameters<typeof real.Worker>) {
      super(...args);
      workers.started.push(this);
    }
  }
  return { ...real, Worker: RecordedWorker };
});

const WAL_LIMIT = 4 * 1024 * 1024;
const PAYLOAD = 'x'.repeat(3000);

const walBytes = (file: string): number => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);

/** The WAL header's checkpoint sequence number: it goes up each time a writer restarts the WAL. */
function walSequence(file: string): number {
  const fd = openSync(`${file}-wal`, 'r');
  try {
    const header = Buffer.alloc(16);
    readSync(fd, header, 0, 16, 0);
    return header.readUInt32BE(12);
  } finally {
    closeSync(fd);
  }
}

let written = 0;
/** One queued write of an entity with a 3 KB attribute: a few WAL frames. */
const writeOne = (store: Store): Promise<void> => {
  const id = `urn:ngsi-ld:Sensor:${written++}`;
  return store.write(() => store.entities.insert('', entity(id, [NS + 'Sensor'], { [NS + 'blob']: [property(PAYLOAD)] })));
};

async function writeMany(store: Store, n: number): Promise<void> {
  await Promise.all(Array.from({ length: n }, () => writeOne(store)));
}

/** Writes until the WAL restarts past `before` (every write yields to the event loop, where the worker's requests are answered). */
async function waitForRestart(store: Store, file: string, before: number): Promise<void> {
  await vi.waitFor(async () => {
    await writeOne(store);
    expect(walSequence(file)).toBeGreaterThan(before);
  }, { timeout: 10_000, interval: 5 });
}

describe('WAL checkpoints on a worker thread', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
    workers.started.length = 0;
    return tmp.cleanup;
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('turns the automatic checkpoint off on the main connection of a file database', () => {
    const pragma = vi.spyOn(Database.prototype, 'pragma');
    const store = fileStore(tmp.file);
    const index = pragma.mock.calls.findIndex(([source]) => source === 'wal_autocheckpoint = 0');
    expect(index).toBeGreaterThanOrEqual(0);
    // The connection that received the pragma is the store's own.
    const main = pragma.mock.contexts[index] as Database.Database; // a spy on a prototype method records its `this`
    pragma.mockRestore();
    expect(main.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    // No thread until the WAL outgrows its limit or a checkpoint is asked for.
    expect(workers.started).toHaveLength(0);
    store.close();
  });

  it('starts no worker for an in-memory database', () => {
    const store = memoryStore();
    expect(workers.started).toHaveLength(0);
    store.checkpoint('PASSIVE');
    store.close();
  });

  it('checkpoints once the WAL outgrows its limit, so that it restarts and is trimmed back', async () => {
    const store = fileStore(tmp.file);
    for (let round = 0; round < 3; round++) {
      while (walBytes(tmp.file) <= WAL_LIMIT + 1024 * 1024) await writeMany(store, 200);
      const before = walSequence(tmp.file);
      await waitForRestart(store, tmp.file, before);
      expect(walBytes(tmp.file)).toBeLessThanOrEqual(WAL_LIMIT);
    }
    store.close();
  });

  it('follows the configured WAL limit (storage.wal-limit-bytes) for the checkpoint and the trim', async () => {
    const limit = 2 * 1024 * 1024;
    const pragma = vi.spyOn(Database.prototype, 'pragma');
    const store = fileStore(tmp.file, { walLimitBytes: limit });
    expect(pragma.mock.calls.map(([source]) => source)).toContain(`journal_size_limit = ${limit}`);
    pragma.mockRestore();
    while (walBytes(tmp.file) <= limit + 512 * 1024) await writeMany(store, 100);
    // Past 2 MiB but below the default 4 MiB: only the configured limit sets off this checkpoint.
    expect(walBytes(tmp.file)).toBeLessThan(WAL_LIMIT);
    const before = walSequence(tmp.file);
    await waitForRestart(store, tmp.file, before);
    expect(walBytes(tmp.file)).toBeLessThanOrEqual(limit);
    store.close();
  });

  it('lets the WAL grow to a larger configured limit before any checkpoint', async () => {
    const store = fileStore(tmp.file, { walLimitBytes: 16 * 1024 * 1024 });
    await writeMany(store, 20);
    const before = walSequence(tmp.file);
    while (walBytes(tmp.file) <= WAL_LIMIT + 1024 * 1024) await writeMany(store, 200);
    // Past the default limit, below the configured one: no thread was started, the WAL never restarted.
    expect(workers.started).toHaveLength(0);
    expect(walSequence(tmp.file)).toBe(before);
    store.close();
  });

  it('restarts and trims the WAL under a steady stream of commits', async () => {
    const store = fileStore(tmp.file);
    let isWriting = true;
    const writer = async (): Promise<void> => {
      while (isWriting) await writeOne(store);
    };
    const writers = [writer(), writer(), writer(), writer()];
    let restarts = 0;
    let trims = 0;
    let sequence = -1;
    let size = 0;
    try {
      await vi.waitFor(() => {
        const now = walSequence(tmp.file);
        if (sequence >= 0 && now !== sequence) restarts++;
        sequence = now;
        const next = walBytes(tmp.file);
        if (size > WAL_LIMIT && next <= WAL_LIMIT) trims++;
        size = next;
        expect(Math.min(restarts, trims)).toBeGreaterThanOrEqual(5);
      }, { timeout: 15_000, interval: 5 });
    } finally {
      isWriting = false;
      await Promise.all(writers);
    }
    store.close();
  });

  it('checkpoints a small WAL when asked (the periodic job)', async () => {
    const store = fileStore(tmp.file);
    await writeMany(store, 20);
    const before = walSequence(tmp.file);
    store.checkpoint('PASSIVE');
    await waitForRestart(store, tmp.file, before);
    store.close();
  });

  it('stops the worker at close, before the final checkpoint empties the WAL', async () => {
    const store = fileStore(tmp.file);
    await writeMany(store, 1500);
    await vi.waitFor(() => expect(workers.started).toHaveLength(1), { timeout: 5_000 });
    const [worker] = workers.started;
    const exited = new Promise<void>((resolve) => worker?.once('exit', resolve));
    store.close();
    expect(existsSync(`${tmp.file}-wal`)).toBe(false);
    await exited;
    expect(worker?.threadId).toBe(-1);
  });

  it('falls back to the automatic checkpoint when the worker fails', async () => {
    const lines: string[] = [];
    const db = new Database(join(tmp.dir, 'main.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    const writes = { hold: vi.fn(), release: vi.fn() };
    // The worker cannot open a database in a directory that does not exist.
    const checkpointer = startCheckpointer({
      db, path: join(tmp.dir, 'missing', 'x.db'), busyTimeoutMs: 100, walLimitBytes: WAL_LIMIT, writes,
      log: createLogger('warn', 'store', (line) => lines.push(line)),
    });
    expect(checkpointer.isThreadRunning()).toBe(false);
    expect(checkpointer.request()).toBe(true);
    await vi.waitFor(() => expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000), { timeout: 10_000 });
    expect(lines.map((l) => JSON.parse(l) as { level: string; msg: string })).toEqual([
      expect.objectContaining({ level: 'error', msg: 'checkpoint worker failed' }),
      expect.objectContaining({ level: 'warn', msg: 'WAL checkpoints run in commits on the main thread again' }),
    ]);
    expect(checkpointer.request()).toBe(false);
    checkpointer.stop();
    db.close();
  });

  it('ends an idle worker, and starts another once the WAL outgrows its limit again', async () => {
    const limit = 64 * 1024;
    const db = new Database(join(tmp.dir, 'idle.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.pragma(`journal_size_limit = ${limit}`);
    db.exec('CREATE TABLE t (x TEXT)');
    const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
    const lines: string[] = [];
    const checkpointer = startCheckpointer({
      db, path: join(tmp.dir, 'idle.db'), busyTimeoutMs: 100, walLimitBytes: limit, writes: { hold: () => {}, release: () => {} },
      log: createLogger('warn', 'store', (line) => lines.push(line)), idleEndMs: 300,
    });
    const grow = (): void => {
      for (let i = 0; i < 40; i++) insert.run(PAYLOAD);
    };
    try {
      for (let round = 1; round <= 2; round++) {
        grow();
        await vi.waitFor(() => expect(workers.started).toHaveLength(round), { timeout: 5_000 });
        expect(checkpointer.isThreadRunning()).toBe(true);
        // Checkpointed: the next write restarts the WAL and trims it back to the limit.
        await vi.waitFor(() => {
          insert.run('x');
          expect(walBytes(join(tmp.dir, 'idle.db'))).toBeLessThanOrEqual(limit);
        }, { timeout: 5_000, interval: 20 });
        const worker = workers.started[round - 1];
        const exited = new Promise<void>((resolve) => worker?.once('exit', resolve));
        await exited;
        expect(checkpointer.isThreadRunning()).toBe(false);
      }
      expect(lines).toEqual([]);
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    } finally {
      checkpointer.stop();
      db.close();
    }
  });
});

describe('queued writes held for the checkpointer', () => {
  it('queue while held and commit on release; direct transactions and flushes are not held', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (n INTEGER)');
    const runner = createTxRunner(db, createCacheGroup(db), silentLogger);
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const count = (): unknown => db.prepare('SELECT count(*) FROM t').pluck().get();
    runner.hold();
    let done = 0;
    const queued = [1, 2, 3].map((n) => runner.write(() => insert.run(n)).then(() => done++));
    // Several loop turns pass without a commit.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(0);
    runner.transaction(() => insert.run(4));
    expect(count()).toBe(1);
    runner.release();
    await Promise.all(queued);
    expect(count()).toBe(4);

    runner.hold();
    const flushed = runner.write(() => insert.run(5));
    runner.flushQueue();
    await flushed;
    expect(count()).toBe(5);
    runner.release();
    runner.shutdown();
    db.close();
  });
});
