// Which instances a temporal read returns (NGSI-LD §6.3.10): lastN/firstN/offsetN per attribute, and the
// cap; over it every attribute is cut at the same instant, so continuing loses and repeats nothing.

import type { HistoryReader, HistorySeries, HistoryWindow, TimedInstance, TimeOrder } from '../store/index.js';
import type { TemporalQuery, TemporalRange } from './types.js';

/** The instances of one attribute of one entity (every datasetId). */
export interface AttributeGroup {
  key: string;
  series: HistorySeries[];
}

export interface Slice {
  order: TimeOrder;
  skip: number;
  /** lastN or firstN. */
  n: number | undefined;
}

export const sliceOf = (q: TemporalQuery): Slice =>
  ({ order: q.lastN !== undefined ? 'desc' : 'asc', skip: q.offsetN, n: q.lastN ?? q.firstN });

interface Fetched {
  group: AttributeGroup;
  /** In the slice's order. */
  rows: TimedInstance[];
  /** Where this attribute alone would be cut: asc, first time left out; desc, last time kept. */
  cut?: number;
}

/**
 * The cut of one attribute over the cap. Ascending: the time of the first instance left out (all
 * before it kept). Descending: the oldest time whose instances all fit. When more than `cap`
 * instances share the boundary instant they are all kept (never a page without progress).
 */
function cutOf(reader: HistoryReader, f: Fetched, window: HistoryWindow, slice: Slice, cap: number): Fetched {
  const { rows, group } = f;
  const tie = rows[cap]!.time;
  const all = (w: HistoryWindow): TimedInstance[] =>
    reader.read(group.series, w, { order: slice.order, skip: slice.skip, limit: Infinity });
  if (slice.order === 'asc') {
    if (rows[0]!.time !== tie) return { ...f, cut: tie };
    const next = reader.nextTime(group.series, window, tie, 'asc');
    if (next === undefined) return { group, rows: all(window) };
    return { group, rows: all({ ...window, to: next }), cut: next };
  }
  for (let i = cap - 1; i >= 0; i--) if (rows[i]!.time > tie) return { ...f, cut: rows[i]!.time };
  const previous = reader.nextTime(group.series, window, tie, 'desc');
  if (previous === undefined) return { group, rows: all(window) };
  return { group, rows: all({ ...window, from: tie }), cut: tie };
}

/**
 * Reads every group, applying the slice and the cap. Returns the instances of each group oldest
 * first, and the range when the answer was cut (to be sent as Content-Range with a 206). A group
 * with instances in the window is always in the map: a cut can leave it empty, never absent.
 */
export function selectInstances(
  reader: HistoryReader, groups: readonly AttributeGroup[], window: HistoryWindow, slice: Slice, cap: number,
): { instances: Map<string, TimedInstance[]>; range?: TemporalRange } {
  const bounded = slice.n !== undefined && slice.n <= cap;
  const limit = bounded ? slice.n ?? cap : cap + 1;
  const fetched = groups.map((group): Fetched => {
    const f: Fetched = { group, rows: reader.read(group.series, window, { order: slice.order, skip: slice.skip, limit }) };
    return !bounded && f.rows.length > cap ? cutOf(reader, f, window, slice, cap) : f;
  });
  const asc = slice.order === 'asc';
  let cut: number | undefined;
  for (const f of fetched) {
    if (f.cut !== undefined) cut = cut === undefined ? f.cut : asc ? Math.min(cut, f.cut) : Math.max(cut, f.cut);
  }
  const instances = new Map<string, TimedInstance[]>();
  for (const f of fetched) {
    if (f.rows.length === 0) continue;
    const kept = cut === undefined ? f.rows : f.rows.filter((r) => (asc ? r.time < cut : r.time >= cut));
    // Fetched newest first when descending; `kept` is this function's own array, reversed in place.
    instances.set(f.group.key, asc ? kept : kept.reverse());
  }
  if (cut === undefined) return { instances };
  return { instances, range: rangeOf(instances, window, slice, cut) };
}

/**
 * NGSI-LD §6.3.10: the range of the instances returned. Start: the window's bound on the side the
 * read began (timeAt ascending, endTimeAt or the before-timeAt descending), else the first instance
 * returned; end: the last instance returned. Size: lastN or firstN when given, else unknown ('*').
 */
function rangeOf(kept: Map<string, TimedInstance[]>, window: HistoryWindow, slice: Slice, cut: number): TemporalRange {
  const asc = slice.order === 'asc';
  // Lists are oldest first. Ascending: from the earliest instant to the latest; descending, reversed.
  let first: number | undefined;
  let last: number | undefined;
  for (const list of kept.values()) {
    const oldest = list[0]?.time;
    const newest = list[list.length - 1]?.time;
    if (oldest === undefined || newest === undefined) continue;
    first = first === undefined ? (asc ? oldest : newest) : asc ? Math.min(first, oldest) : Math.max(first, newest);
    last = last === undefined ? (asc ? newest : oldest) : asc ? Math.max(last, newest) : Math.min(last, oldest);
  }
  const start = (asc ? window.from : window.to) ?? first ?? cut;
  const range: TemporalRange = { order: slice.order, start, end: last ?? cut };
  if (slice.n !== undefined) range.size = slice.n;
  return range;
}
