// Group commit failures outside a fn (a failing COMMIT, a BEGIN that cannot get the lock), and the commit window.

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/lib/index.js';
import { createTxRunner } from '../../src/store/transactions.js';
import { createCacheGroup } from '../../src/store/tx-cache.js';
import { fileStore, tempDir } from './helpers.js';

describe('store transaction runner: failures at BEGIN and COMMIT', () => {
  it('rejects every write of the batch when COMMIT fails, and runs no hook', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE c (p INTEGER REFERENCES p (id) DEFERRABLE INITIALLY DEFERRED); PRAGMA foreign_keys = ON');
    const runner = createTxRunner(db, createCacheGroup(db), silentLogger);
    const hooks: number[] = [];
    const ok = runner.write((tx) => {
      db.prepare('INSERT INTO p (id) VALUES (1)').run();
      tx.onCommit(() => hooks.push(1));
    });
    // A deferred foreign key is only checked at COMMIT.
    const breaksCommit = runner.write(() => {
      db.prepare('INSERT INTO c (p) VALUES (99)').run();
    });
    const results = await Promise.allSettled([ok, breaksCommit]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(results[0]).toMatchObject({ reason: { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' } });
    expect(hooks).toEqual([]);
    expect(db.inTransaction).toBe(false);
    expect(db.prepare('SELECT count(*) FROM p').pluck().get()).toBe(0);
    runner.shutdown();
    db.close();
  });
});

describe('store.write when the database is locked', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.cleanup());

  it('rejects the whole batch when BEGIN IMMEDIATE times out, and recovers after', async () => {
    const store = fileStore(tmp.file, { busyTimeoutMs: 10 });
    const other = new Database(tmp.file);
    other.exec('BEGIN IMMEDIATE');
    const results = await Promise.allSettled([store.write(() => 1), store.write(() => 2)]);
    expect(results).toMatchObject([
      { status: 'rejected', reason: { code: 'SQLITE_BUSY' } },
      { status: 'rejected', reason: { code: 'SQLITE_BUSY' } },
    ]);
    other.exec('ROLLBACK');
    other.close();
    await expect(store.write(() => 3)).resolves.toBe(3);
    store.close();
  });
});

describe('store transaction runner: the commit window', () => {
  /** A runner over an in-memory table, counting its COMMITs. */
  function counted(windowMs: number) {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (v INTEGER)');
    let commits = 0;
    const prepare = db.prepare.bind(db);
    // NOTE: the runner prepares its COMMIT once; the statement it gets counts its runs.
    (db as { prepare: typeof db.prepare }).prepare = ((sql: string) => {
      const st = prepare(sql);
      if (sql !== 'COMMIT') return st;
      const run = st.run.bind(st);
      return Object.assign(st, { run: () => (commits++, run()) });
    }) as typeof db.prepare;
    const runner = createTxRunner(db, createCacheGroup(db), silentLogger, windowMs);
    const insert = prepare('INSERT INTO t (v) VALUES (?)');
    return { db, runner, write: (v: number) => runner.write(() => insert.run(v)), commits: () => commits };
  }

  afterEach(() => vi.useRealTimers());

  it('with a window, writes arriving apart within it share one commit, acknowledged when it is done', async () => {
    vi.useFakeTimers();
    const { db, runner, write, commits } = counted(50);
    const done: number[] = [];
    const writes = [write(1).then(() => done.push(1))];
    await vi.advanceTimersByTimeAsync(20);
    writes.push(write(2).then(() => done.push(2)));
    await vi.advanceTimersByTimeAsync(20);
    writes.push(write(3).then(() => done.push(3)));
    expect(done).toEqual([]);
    expect(commits()).toBe(0);
    await vi.advanceTimersByTimeAsync(10);
    await Promise.all(writes);
    expect(commits()).toBe(1);
    expect(done).toEqual([1, 2, 3]);
    // The next write opens a window of its own.
    const later = write(4);
    await vi.advanceTimersByTimeAsync(49);
    expect(commits()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await later;
    expect(commits()).toBe(2);
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(4);
    runner.shutdown();
    db.close();
  });

  it('without one, writes arriving apart commit each in its own turn', async () => {
    vi.useFakeTimers();
    const { db, runner, write, commits } = counted(0);
    for (let v = 1; v <= 3; v++) {
      const w = write(v);
      await vi.advanceTimersByTimeAsync(20);
      await w;
    }
    expect(commits()).toBe(3);
    runner.shutdown();
    db.close();
  });

  it('a full batch does not wait for the window, and shutdown commits what waits', async () => {
    vi.useFakeTimers();
    const { db, runner, write, commits } = counted(1_000);
    const batch = Array.from({ length: 1_000 }, (_, i) => write(i));
    await vi.advanceTimersByTimeAsync(0);
    await Promise.all(batch);
    expect(commits()).toBe(1);
    const waiting = write(-1);
    runner.shutdown();
    await waiting;
    expect(commits()).toBe(2);
    db.close();
  });
});
