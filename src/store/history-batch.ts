// History instances on their way into bucket tables, written several rows to a statement and with
// no row object per instance: the path of bulk writes (temporal ingest, batches, measurements).

import { ROWS_PER_INSERT, ROW_COLUMNS, type BucketCatalogue, type BucketTable } from './buckets.js';
import { encodeInstanceColumns, instantOf } from './history-codec.js';
import type { HistoryInstance } from './types.js';

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

export function createRowBatch(buckets: BucketCatalogue): RowBatch {
  let table: BucketTable | undefined;
  const values: unknown[] = [];
  let count = 0;
  /** The latest instant added per series since the last flush. */
  const latest = new Map<number, number>();
  const flush = (): void => {
    if (table && count > 0) table.insertMany(values, count);
    count = 0;
    latest.clear();
  };
  return {
    add(series, inst) {
      const t = instantOf(inst);
      const target = buckets.tableFor(t);
      if (target !== table) {
        flush();
        table = target;
      }
      encodeInstanceColumns(values, count * ROW_COLUMNS, series, inst);
      count += 1;
      const known = latest.get(series);
      if (known === undefined || t > known) latest.set(series, t);
      if (count >= BATCH_ROWS) flush();
    },
    holdsUpTo(series, t) {
      const known = latest.get(series);
      return known !== undefined && t <= known;
    },
    flush,
  };
}
