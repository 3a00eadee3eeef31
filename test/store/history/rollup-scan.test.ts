// The rollup scan's own arithmetic agrees with SQLite's, which the raw rows' aggregation uses: string
// order (UTF-8 bytes, not UTF-16 units) and the sum of doubles (Kahan-Babuska-Neumaier), bit for bit;
// and a pass keeps the first and last number of an instant in rowid order, as summarySql's seeks do.

import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareBinary, passOver, summaryOf, type ScanRow } from '../../../src/store/history/rollup-scan.js';
import { fuzzRuns } from '../../helpers/fuzz-runs.js';

const db = new Database(':memory:');

describe('compareBinary', () => {
  it('orders strings as SQLite does, characters beyond U+FFFF after U+E000-U+FFFF', () => {
    const words = ['', 'a', 'b', 'ab', 'Z', '\uE000', '\uFFFD', '\u{1F600}', '\u{10000}', 'é', 'e\u0301', 'a\u{1F600}', 'a\uFFFF'];
    const sqlite = db.prepare(`SELECT x FROM (${words.map(() => 'SELECT ? AS x').join(' UNION ALL ')}) ORDER BY x`).pluck().all(...words);
    expect([...words].sort(compareBinary)).toEqual(sqlite);
    // JavaScript's own order differs there.
    expect('\u{1F600}' < '\uE000').toBe(true);
    expect(compareBinary('\u{1F600}', '\uE000')).toBeGreaterThan(0);
  });

  it('agrees with SQLite on random strings', () => {
    const cmp = db.prepare('SELECT CASE WHEN ? < ? THEN -1 WHEN ? > ? THEN 1 ELSE 0 END').pluck();
    fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
      expect(Math.sign(compareBinary(a, b))).toBe(cmp.get(a, b, a, b));
    }), { numRuns: fuzzRuns(300) });
  });
});

/** A counted row of series 1 at instant t with number num. */
const numberRow = (t: number, num: number): ScanRow => [1, t, 2, num, null];

describe('passOver', () => {
  it('sums doubles as SQLite sum() does, bit for bit', () => {
    const sum = db.prepare('SELECT sum(value), sum(value * value) FROM json_each(?)').raw();
    fc.assert(fc.property(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 }), { minLength: 1, maxLength: 60 }), (nums) => {
      const pass = passOver(nums.map((n, i) => numberRow(i, n)), Number.NEGATIVE_INFINITY, 60_000);
      const row = summaryOf(pass.fresh.get(1)!.get(0)!);
      const [s, sq] = sum.get(JSON.stringify(nums)) as [number, number];
      expect(row.sum).toBe(s);
      expect(row.sumsq).toBe(sq);
    }), { numRuns: fuzzRuns(200) });
  });

  it('takes the first and the last number of an instant in the order written, strings and distinct values apart', () => {
    const rows: ScanRow[] = [
      numberRow(5, 1), numberRow(5, 2), numberRow(9, 3), numberRow(9, 4),
      [1, 7, 3, null, 'open'], [1, 8, 3, null, 'closed'], [1, 8, 2, 1, null],
      // A deletion (not counted), a row without observedAt, a row of a minute not closed yet.
      [1, 6, 1, null, null], [1, 6, 0, 7, null], [1, 61_000, 2, 100, null],
    ];
    const pass = passOver(rows, Number.NEGATIVE_INFINITY, 60_000);
    expect([...pass.touched.get(1)!]).toEqual([0, 60_000]);
    expect([...pass.fresh.get(1)!.keys()]).toEqual([0]);
    expect(summaryOf(pass.fresh.get(1)!.get(0)!)).toEqual({
      series: 1, t: 0, n: 7, numbers: 5, strings: 2, distinct_n: 6, sum: 11, sumsq: 31, min: 1, max: 4, min_s: 'closed', max_s: 'open',
      first_t: 5, last_t: 9, first_num: 1, last_num: 4,
    });
  });

  it('adds up only the rows at or after mergeBefore, and says when some fell before', () => {
    const pass = passOver([numberRow(10, 1), numberRow(30, 2)], 20, 60_000);
    expect(pass.merging).toBe(true);
    expect(summaryOf(pass.fresh.get(1)!.get(0)!)).toMatchObject({ n: 1, sum: 2, first_t: 30 });
  });
});
