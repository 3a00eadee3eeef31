// In-memory caches of database rows that stay truthful across rollbacks: entries learnt inside a
// transaction become visible to later transactions only after COMMIT.

import type BetterSqlite3 from 'better-sqlite3';
import { createGenerations } from '../lib/index.js';

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
 * Committed entries live in two generations (lib/generations.ts) rather than an LRU order.
 */
export function createCacheGroup(db: BetterSqlite3.Database): CacheGroup {
  const members: TxAware[] = [];
  return {
    create<K, V>(max = DEFAULT_MAX_ENTRIES): TxCache<K, V> {
      const committed = createGenerations<K, V>(max);
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
        // NOTE: most look-ups happen with nothing pending: one probe of the pending Map saved.
        get: (key) => (pending.size === 0 ? committed.get(key) : pending.get(key) ?? committed.get(key)),
        set(key, value) {
          if (db.inTransaction) pending.set(key, value);
          else committed.set(key, value);
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
