// A regular-expression SQL function with the compiled patterns cached per connection (patterns are
// bound parameters; values never reach the SQL text).

import type BetterSqlite3 from 'better-sqlite3';
import { createLru } from '../lib/index.js';

const PATTERN_CACHE_SIZE = 256;

/** Registers `name(pattern, value)` → 1 when value matches, 0 otherwise (also for non-strings). */
export function registerRegexpFunction(
  db: BetterSqlite3.Database, name: string, compile: (pattern: string) => { test(value: string): boolean },
): void {
  const patterns = createLru<string, { test(value: string): boolean }>(PATTERN_CACHE_SIZE);
  db.function(name, { deterministic: true }, (pattern: unknown, value: unknown) => {
    if (typeof pattern !== 'string' || typeof value !== 'string') return 0;
    let re = patterns.get(pattern);
    if (!re) {
      re = compile(pattern);
      patterns.set(pattern, re);
    }
    return re.test(value) ? 1 : 0;
  });
}
