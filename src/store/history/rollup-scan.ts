// One pass of the rollup job over the raw rows written since its last read: the rows come in rowid
// order as flat tuples, and the summaries of the minutes they hold are added up in JavaScript as
// they come (what summarySql computes per series and minute, without the sort its GROUP BY needs and
// without reading the rows a second time to know which periods they touch).

import { DISTINCT_KEY } from './history-sql.js';
import type { RollupRow } from './history-types.js';

/** The observed instances that are no deletion: what a summary counts (as aggregated reads do). */
export const COUNTED = 'observed_at IS NOT NULL AND (value IS NOT NULL OR num IS NOT NULL)';

/** What a raw row is to a summary: not observed, observed but no value (a deletion), counted, counted string. */
const ROW_STATE = { unobserved: 0, deletion: 1, counted: 2, countedString: 3 } as const;
type RowState = (typeof ROW_STATE)[keyof typeof ROW_STATE];

/**
 * A raw row as the scan reads it: its series, instant, state, number, and for a value that is no
 * number what tells it apart for distinctCount (a string Property's: the string; a number's is the
 * number). NOTE: five columns: turning a row into a JavaScript array costs more than SQLite's reading
 * of it, by the column.
 */
export type ScanRow = [series: number, t: number, state: RowState, num: number | null, key: number | string | null];

/** The rows (after, last] of a raw table, in rowid order, as ScanRows (the statement runs in raw mode). */
export const scanRowsSql = (table: string): string => `SELECT series, t,
  CASE WHEN observed_at IS NULL THEN 0 WHEN num IS NOT NULL THEN 2 WHEN value IS NULL THEN 1 WHEN json_type(value, '$.value') = 'text' THEN 3 ELSE 2 END,
  num, CASE WHEN num IS NULL THEN ${DISTINCT_KEY} END
  FROM ${table} WHERE rowid > ? AND rowid <= ? ORDER BY rowid`;

const MINUTE_MS = 60_000;
/** The start of the minute holding t (t may be negative). */
const minuteOf = (t: number): number => t - (((t % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);

/**
 * SQLite's BINARY order of two strings (their UTF-8 bytes, that is their code points), which a
 * summary's string minimum and maximum follow: JavaScript's `<` compares UTF-16 units, which puts a
 * character beyond U+FFFF (a surrogate pair) before U+E000-U+FFFF.
 */
export function compareBinary(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/**
 * A sum as SQLite's sum() takes it over doubles (Kahan-Babuska-Neumaier, since SQLite 3.43): the same
 * rows added in the same order give the same result as the raw rows' aggregation.
 */
interface Kbn { sum: number; err: number }
function kbnAdd(k: Kbn, x: number): void {
  const t = k.sum + x;
  if (Math.abs(k.sum) >= Math.abs(x)) k.err += (k.sum - t) + x;
  else k.err += (x - t) + k.sum;
  k.sum = t;
}

/** A minute's summary being added up: the row, the exact sums, and the values seen for the distinct count. */
export interface MinuteAcc {
  readonly row: RollupRow;
  readonly sum: Kbn;
  readonly sumsq: Kbn;
  readonly distinct: Set<number | string>;
}

function newAcc(series: number, minute: number, t: number): MinuteAcc {
  return {
    row: {
      series, t: minute, n: 0, numbers: 0, strings: 0, distinct_n: 0, sum: null, sumsq: null, min: null, max: null, min_s: null, max_s: null,
      first_t: t, last_t: t, first_num: null, last_num: null,
    },
    sum: { sum: 0, err: 0 },
    sumsq: { sum: 0, err: 0 },
    distinct: new Set(),
  };
}

/** Adds a counted row (rows come in rowid order: of rows at the same instant, the first and the last written). */
function addRow(acc: MinuteAcc, t: number, num: number | null, text: string | null, key: number | string | null): void {
  const r = acc.row;
  if (r.n === 0 || t < r.first_t) {
    r.first_t = t;
    r.first_num = num;
  }
  if (r.n === 0 || t >= r.last_t) {
    r.last_t = t;
    r.last_num = num;
  }
  r.n++;
  if (num !== null) {
    r.numbers++;
    kbnAdd(acc.sum, num);
    kbnAdd(acc.sumsq, num * num);
    if (r.min === null || num < r.min) r.min = num;
    if (r.max === null || num > r.max) r.max = num;
  }
  if (text !== null) {
    r.strings++;
    if (r.min_s === null || compareBinary(text, r.min_s) < 0) r.min_s = text;
    if (r.max_s === null || compareBinary(text, r.max_s) > 0) r.max_s = text;
  }
  const k = num ?? key;
  if (k !== null) acc.distinct.add(k);
}

/** The summary a finished accumulator stands for. */
export function summaryOf(acc: MinuteAcc): RollupRow {
  const r = acc.row;
  if (r.numbers > 0) {
    r.sum = acc.sum.sum + acc.sum.err;
    r.sumsq = acc.sumsq.sum + acc.sumsq.err;
  }
  r.distinct_n = acc.distinct.size;
  return r;
}

/** What one pass over the rows found. */
export interface ScanPass {
  /** The minutes touched by an observed row, by series (a minute before `mergeBefore` included). */
  readonly touched: Map<number, Set<number>>;
  /** Whether a row fell in a minute before `mergeBefore`: those are merged into their summaries. */
  readonly merging: boolean;
  /** Summaries of the closed minutes from the rows read at or after `mergeBefore`, by series then minute. */
  readonly fresh: Map<number, Map<number, MinuteAcc>>;
}

/**
 * One pass over the rows (in rowid order). `closed`: the start of the first minute not closed yet;
 * only the rows of closed minutes at or after `mergeBefore` are added up (what summarySql's
 * `t >= mergeBefore AND t < closed` selects).
 */
export function passOver(rows: readonly ScanRow[], mergeBefore: number, closed: number): ScanPass {
  const touched = new Map<number, Set<number>>();
  const fresh = new Map<number, Map<number, MinuteAcc>>();
  let merging = false;
  // NOTE: rows of one series mostly come minute after minute: its last minute is kept at hand.
  let lastSeries = Number.NaN;
  let lastMinute = Number.NaN;
  let lastAcc: MinuteAcc | undefined;
  for (let i = 0; i < rows.length; i++) {
    const [series, t, state, num, key] = rows[i]!;
    if (state === ROW_STATE.unobserved) continue;
    const minute = minuteOf(t);
    if (minute < mergeBefore) merging = true;
    if (series !== lastSeries || minute !== lastMinute) {
      let minutes = touched.get(series);
      if (minutes === undefined) touched.set(series, (minutes = new Set()));
      minutes.add(minute);
      lastSeries = series;
      lastMinute = minute;
      lastAcc = undefined;
    }
    if (state === ROW_STATE.deletion || t < mergeBefore || t >= closed) continue;
    if (lastAcc === undefined) {
      let bySeries = fresh.get(series);
      if (bySeries === undefined) fresh.set(series, (bySeries = new Map()));
      lastAcc = bySeries.get(minute);
      if (lastAcc === undefined) bySeries.set(minute, (lastAcc = newAcc(series, minute, t)));
    }
    addRow(lastAcc, t, num, state === ROW_STATE.countedString ? (key as string) : null, key);
  }
  return { touched, merging, fresh };
}
