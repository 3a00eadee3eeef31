// A bounded map of two generations: the cache of large bounds and hot look-ups (decoded documents,
// committed rows), where a least-recently-used order would cost more than it saves.

export interface Generations<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
  clear(): void;
}

/**
 * At most `max` entries: new entries go to the young generation, and when it holds half the bound the
 * old one is dropped whole and the young one takes its place; a hit in the old one moves to the young
 * one. NOTE: every operation is O(1), and a hit in the young generation is one Map look-up: an LRU
 * order kept by deleting and re-inserting on every hit cost a listing of 100 decoded documents about
 * 4% of its CPU time, and evicting the oldest key of one large Map one at a time is not O(1) (V8 walks
 * over the holes that earlier deletes left at its front).
 */
export function createGenerations<K, V>(max: number): Generations<K, V> {
  const half = Math.max(1, Math.floor(max / 2));
  let young = new Map<K, V>();
  let old = new Map<K, V>();
  const set = (key: K, value: V): void => {
    young.set(key, value);
    if (young.size >= half) {
      old = young;
      young = new Map<K, V>();
    }
  };
  return {
    get(key) {
      const value = young.get(key);
      if (value !== undefined) return value;
      const aged = old.get(key);
      if (aged !== undefined) set(key, aged);
      return aged;
    },
    set,
    clear() {
      young = new Map<K, V>();
      old = new Map<K, V>();
    },
  };
}
