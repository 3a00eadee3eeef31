// A bounded map that evicts the least recently used entry: caches of contexts, term look-ups, stats.

export interface Lru<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
  delete(key: K): boolean;
  clear(): void;
  readonly size: number;
}

/**
 * NOTE: for bounds of a few thousand entries. Evicting takes the first key of a Map whose front is
 * full of holes left by deletes, and V8 walks them: fine at 4,096 (under a microsecond a set), not
 * at 50,000 (over ten). Large caches use two generations instead (store/tx-cache.ts).
 */
export function createLru<K, V>(max: number): Lru<K, V> {
  const entries = new Map<K, V>();
  return {
    get(key) {
      const value = entries.get(key);
      if (value !== undefined) {
        // Re-insert so Map order is recency order.
        entries.delete(key);
        entries.set(key, value);
      }
      return value;
    },
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      if (entries.size > max) {
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
    },
    delete: (key) => entries.delete(key),
    clear: () => entries.clear(),
    get size() {
      return entries.size;
    },
  };
}
