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
 * Committed entries live in two generations rather than one LRU map: new entries go to the young
 * one, and when it holds half the bound the old one is dropped whole and the young one takes its
 * place (a hit in the old one moves to the young one). Every operation is O(1); evicting the
 * oldest key of one large Map one at a time is not (V8 walks over the holes that earlier deletes
 * left at its front), and cost most of a large batch once a cache was full.
 */
export function createCacheGroup(db: BetterSqlite3.Database): CacheGroup {
  const members: TxAware[] = [];
  return {
    create<K, V>(max = DEFAULT_MAX_ENTRIES): TxCache<K, V> {
      const half = Math.max(1, Math.floor(max / 2));
      let young = new Map<K, V>();
      let old = new Map<K, V>();
      const pending = new Map<K, V>();
      const keep = (k: K, v: V): void => {
        young.set(k, v);
        if (young.size >= half) {
          old = young;
          young = new Map<K, V>();
        }
      };
      const committed = (k: K): V | undefined => {
        const v = young.get(k);
        if (v !== undefined) return v;
        const aged = old.get(k);
        if (aged !== undefined) keep(k, aged);
        return aged;
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
        // NOTE: most look-ups happen with nothing pending: one probe of the pending Map saved.
        get: (key) => (pending.size === 0 ? committed(key) : pending.get(key) ?? committed(key)),
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
