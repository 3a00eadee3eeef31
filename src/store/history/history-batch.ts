// History instances on their way into bucket tables, written several rows to a statement and with
// no row object per instance: the path of bulk writes (temporal ingest, batches, measurements).

import { ROWS_PER_INSERT, type BucketCatalogue, type BucketTable } from './buckets.js';
import { ROW_COLUMNS, encodeInstanceColumns, instantOf } from './history-codec.js';
import type { HistoryInstance } from '../types.js';

/** Rows a batch gathers before it writes them: a bound on what it holds. */
const BATCH_ROWS = ROWS_PER_INSERT * 64;

export interface RowBatch {
  /** Adds the row of an instance of a series; rows go in in the order they were added. */
  add(series: number, inst: HistoryInstance): void;
  /** Whether a row added since the last flush is of the series at instant t or later. */
  holdsUpTo(series: number, t: number): boolean;
  /** Writes the rows added since the last flush. */
  flush(): void;
}

/**
 * NOTE: a class, not an object of closures: a batch is made per write, and closures made per write
 * are new call targets each time, which throws the optimised code of the loop calling them away
 * (a deoptimisation per bulk write, then thousands of instances run in the interpreter).
 */
class BucketRowBatch implements RowBatch {
  #table: BucketTable | undefined;
  readonly #values: unknown[] = [];
  #count = 0;
  /** The latest instant added per series since the last flush. */
  readonly #latest = new Map<number, number>();

  constructor(private readonly buckets: BucketCatalogue) {}

  add(series: number, inst: HistoryInstance): void {
    const t = instantOf(inst);
    const target = this.buckets.tableFor(t);
    if (target !== this.#table) {
      this.flush();
      this.#table = target;
    }
    encodeInstanceColumns(this.#values, this.#count * ROW_COLUMNS, series, inst);
    this.#count += 1;
    const known = this.#latest.get(series);
    if (known === undefined || t > known) this.#latest.set(series, t);
    if (this.#count >= BATCH_ROWS) this.flush();
  }

  holdsUpTo(series: number, t: number): boolean {
    const known = this.#latest.get(series);
    return known !== undefined && t <= known;
  }

  flush(): void {
    if (this.#table && this.#count > 0) this.#table.insertMany(this.#values, this.#count);
    this.#count = 0;
    this.#latest.clear();
  }
}

export function createRowBatch(buckets: BucketCatalogue): RowBatch {
  return new BucketRowBatch(buckets);
}
