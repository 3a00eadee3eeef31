// A bounded memo of a pure function: each key's value is made once and handed out again. NOTE: for
// hot paths that see the same few keys over and over (topics, devices, tenants): a hit is one Map
// look-up, with none of an LRU's recency bookkeeping; when the bound is reached the memo starts over.

/** `make` memoized over at most `max` keys; an undefined result is not kept (made again next time). */
export function boundedMemo<K, V>(max: number, make: (key: K) => V): (key: K) => V {
  const values = new Map<K, V>();
  return (key) => {
    let value = values.get(key);
    if (value === undefined) {
      value = make(key);
      if (value === undefined) return value;
      if (values.size >= max) values.clear();
      values.set(key, value);
    }
    return value;
  };
}
