// Group commit failures outside a fn: a failing COMMIT and a BEGIN that cannot get the lock.

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
