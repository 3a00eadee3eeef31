// In-memory caches of database rows that stay truthful across rollbacks: entries learnt inside a
// transaction become visible to later transactions only after COMMIT.

import type BetterSqlite3 from 'better-sqlite3';

/** What the transaction runner tells every cache. */
export interface TxAware {
  commit(): void;
  /** A transaction or savepoint rolled back: forget everything learnt since the last commit. */
  discard(): void;
}

export interface TxCache<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
}

export interface CacheGroup extends TxAware {
  create<K, V>(): TxCache<K, V>;
}

/**
 * NOTE: discard() drops all pending entries, also those from savepoints that were released; a
 * later lookup then goes back to the database, which still has them. Simple and always correct.
 */
export function createCacheGroup(db: BetterSqlite3.Database): CacheGroup {
  const members: TxAware[] = [];
  return {
    create<K, V>(): TxCache<K, V> {
      const committed = new Map<K, V>();
      const pending = new Map<K, V>();
      members.push({
        commit() {
          for (const [k, v] of pending) committed.set(k, v);
          pending.clear();
        },
        discard() {
          pending.clear();
        },
      });
      return {
        get: (key) => pending.get(key) ?? committed.get(key),
        set(key, value) {
          (db.inTransaction ? pending : committed).set(key, value);
        },
      };
    },
    commit() {
      for (const m of members) m.commit();
    },
    discard() {
      for (const m of members) m.discard();
    },
  };
}
