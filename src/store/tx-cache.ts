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
  /** A cache of at most `max` committed entries (the oldest are forgotten first). */
  create<K, V>(max?: number): TxCache<K, V>;
}

/** Bounds memory on a gateway with many entities; a forgotten entry is read again when needed. */
const DEFAULT_MAX_ENTRIES = 50_000;

/**
 * NOTE: discard() drops all pending entries, also those from savepoints that were released; a
 * later lookup then goes back to the database, which still has them. Simple and always correct.
 */
export function createCacheGroup(db: BetterSqlite3.Database): CacheGroup {
  const members: TxAware[] = [];
  return {
    create<K, V>(max = DEFAULT_MAX_ENTRIES): TxCache<K, V> {
      const committed = new Map<K, V>();
      const pending = new Map<K, V>();
      const keep = (k: K, v: V): void => {
        // Re-inserting moves the key to the young end; the oldest sits first.
        if (!committed.delete(k) && committed.size >= max) committed.delete(committed.keys().next().value as K); // NOTE: size >= max > 0, so a first key exists
        committed.set(k, v);
      };
      members.push({
        commit() {
          for (const [k, v] of pending) keep(k, v);
          pending.clear();
        },
        discard() {
          pending.clear();
        },
      });
      return {
        // NOTE: most look-ups happen with nothing pending: one Map probe instead of two.
        get: (key) => (pending.size === 0 ? committed.get(key) : pending.get(key) ?? committed.get(key)),
        set(key, value) {
          if (db.inTransaction) pending.set(key, value);
          else keep(key, value);
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
