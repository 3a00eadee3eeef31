// A lazy k-way merge of time-ordered history cursors (one per bucket and series): a cursor is opened
// only once its bucket could hold the next row, so a read in time order touches the buckets it needs.

import type { TimeOrder } from './history-types.js';

/** Where a row sorts: its time, then the rank of its bucket (chronological), then its insertion order there. */
export interface MergeKey<T> {
  time(row: T): number;
  rid(row: T): number;
}

export interface MergeCursor<T> {
  /** The rank of the cursor's bucket. */
  readonly rank: number;
  /** The current row, undefined when exhausted. */
  peek(): T | undefined;
  advance(): void;
}

export interface MergeSource<T> {
  /** Inclusive bounds of the times the source can hold. */
  lo: number;
  hi: number;
  open(): MergeCursor<T>;
}

/** A binary min-heap of cursors, ordered by their current row. */
class CursorHeap<T> {
  private readonly items: MergeCursor<T>[] = [];
  constructor(private readonly before: (a: MergeCursor<T>, b: MergeCursor<T>) => number) {}

  get size(): number {
    return this.items.length;
  }

  top(): MergeCursor<T> | undefined {
    return this.items[0];
  }

  private less(i: number, j: number): boolean {
    return this.before(this.items[i]!, this.items[j]!) < 0;
  }

  private swap(i: number, j: number): void {
    const a = this.items[i]!;
    this.items[i] = this.items[j]!;
    this.items[j] = a;
  }

  push(c: MergeCursor<T>): void {
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
export function mergeOrdered<T>(
  sources: readonly MergeSource<T>[], key: MergeKey<T>, order: TimeOrder, skip: number, limit: number,
): T[] {
  const asc = order === 'asc';
  // Only cursors that have a current row are kept in the heap.
  const compareAsc = (a: MergeCursor<T>, b: MergeCursor<T>): number => {
    const x = a.peek()!;
    const y = b.peek()!;
    return key.time(x) - key.time(y) || a.rank - b.rank || key.rid(x) - key.rid(y);
  };
  const before = asc ? compareAsc : (a: MergeCursor<T>, b: MergeCursor<T>) => compareAsc(b, a);
  const pending = [...sources].sort(asc ? (a, b) => a.lo - b.lo : (a, b) => b.hi - a.hi);
  const heap = new CursorHeap<T>(before);
  const out: T[] = [];
  let skipped = 0;
  let next = 0;
  const mayHoldNext = (s: MergeSource<T>, head: T | undefined): boolean =>
    head === undefined || (asc ? s.lo <= key.time(head) : s.hi >= key.time(head));
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
