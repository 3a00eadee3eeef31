// LIMIT and OFFSET operands bound at run time. SQLite (3.4x and later) reads a bare bound parameter of
// LIMIT while it plans a statement and then marks the statement to be prepared again whenever that
// parameter is bound anew, which better-sqlite3 does at every run: each execution was parsed and
// planned again. Wrapped in CAST(… AS INTEGER) the operand is read only when the statement runs.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

describe('LIMIT and OFFSET parameters', () => {
  it('are never bare bound parameters in the sources (each would make SQLite prepare its statement at every run)', () => {
    const bare = /\b(LIMIT|OFFSET)\s+[?@:$]/;
    const offenders = sources(join(ROOT, 'src')).flatMap((file) =>
      readFileSync(file, 'utf8').split('\n').flatMap((line, i) => (bare.test(line) ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [])));
    expect(offenders).toEqual([]);
  });

  it('take each run’s values through one prepared statement', () => {
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY)');
      const insert = db.prepare<[number]>('INSERT INTO t (k) VALUES (?)');
      for (let k = 1; k <= 50; k++) insert.run(k);
      const page = db.prepare<[number, number], number>('SELECT k FROM t ORDER BY k LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)').pluck();
      expect(page.all(3, 0)).toEqual([1, 2, 3]);
      expect(page.all(2, 10)).toEqual([11, 12]);
      expect(page.all(5, 47)).toEqual([48, 49, 50]);
      // A negative limit is no limit, as with a bare parameter.
      expect(page.all(-1, 45)).toEqual([46, 47, 48, 49, 50]);
      const named = db.prepare('SELECT group_concat(k) FROM (SELECT k FROM t ORDER BY k LIMIT CAST(@limit AS INTEGER))').pluck();
      expect(named.get({ limit: 4 })).toBe('1,2,3,4');
      expect(named.get({ limit: 1 })).toBe('1');
    } finally {
      db.close();
    }
  });
});
