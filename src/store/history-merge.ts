// A lazy k-way merge of time-ordered history cursors (one per bucket and series): a cursor is opened
// only once its bucket could hold the next row, so a read in time order touches the buckets it needs.

import type { TimeOrder } from './history-types.js';

/** A row as merged: its time, the rank of its bucket (chronological), its insertion order there. */
export interface MergeKey {
  time: number;
  rank: number;
  rid: number;
}

export interface Cursor<T extends MergeKey> {
  /** The current row, undefined when exhausted. */
  peek(): T | undefined;
  advance(): void;
}

export interface MergeSource<T extends MergeKey> {
  /** Inclusive bounds of the times the source can hold. */
  lo: number;
  hi: number;
  open(): Cursor<T>;
}

const compareAsc = (a: MergeKey, b: MergeKey): number => a.time - b.time || a.rank - b.rank || a.rid - b.rid;

/** A binary min-heap of cursors, ordered by their current row. */
class CursorHeap<T extends MergeKey> {
  private readonly items: Cursor<T>[] = [];
  constructor(private readonly before: (a: MergeKey, b: MergeKey) => number) {}

  get size(): number {
    return this.items.length;
  }

  top(): Cursor<T> | undefined {
    return this.items[0];
  }

  private less(i: number, j: number): boolean {
    // Only cursors that have a current row are kept in the heap.
    return this.before(this.items[i]!.peek()!, this.items[j]!.peek()!) < 0;
  }

  private swap(i: number, j: number): void {
    const a = this.items[i]!;
    this.items[i] = this.items[j]!;
    this.items[j] = a;
  }

  push(c: Cursor<T>): void {
    if (c.peek() === undefined) return;
    this.items.push(c);
    let i = this.items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Re-sorts after the top cursor advanced (or dropped it when exhausted). */
  fixTop(): void {
    const top = this.items[0];
    if (!top) return;
    if (top.peek() === undefined) {
      const last = this.items.pop()!;
      if (this.items.length === 0) return;
      this.items[0] = last;
    }
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.items.length && this.less(l, m)) m = l;
      if (r < this.items.length && this.less(r, m)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }
}

/**
 * Rows of all sources in (time, rank, rid) order, or its exact reverse for 'desc': `skip` rows
 * dropped, then at most `limit` returned. Sources are opened lazily in order of their bounds.
 */
export function mergeOrdered<T extends MergeKey>(
  sources: readonly MergeSource<T>[], order: TimeOrder, skip: number, limit: number,
): T[] {
  const asc = order === 'asc';
  const before = asc ? compareAsc : (a: MergeKey, b: MergeKey) => compareAsc(b, a);
  const pending = [...sources].sort(asc ? (a, b) => a.lo - b.lo : (a, b) => b.hi - a.hi);
  const heap = new CursorHeap<T>(before);
  const out: T[] = [];
  let skipped = 0;
  let next = 0;
  const mayHoldNext = (s: MergeSource<T>, head: T | undefined): boolean =>
    head === undefined || (asc ? s.lo <= head.time : s.hi >= head.time);
  while (out.length < limit) {
    while (next < pending.length && mayHoldNext(pending[next]!, heap.top()?.peek())) heap.push(pending[next++]!.open());
    const top = heap.top();
    const row = top?.peek();
    if (!top || row === undefined) break;
    if (skipped < skip) skipped += 1;
    else out.push(row);
    top.advance();
    heap.fixTop();
  }
  return out;
}
