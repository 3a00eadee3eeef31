// Counts of what the database holds, for metrics: the history estimate is cheap enough for every
// scrape on a small device; the live-entity count is a scan, taken once at start-up.

import type BetterSqlite3 from 'better-sqlite3';
import type { BucketCatalogue } from './history/buckets.js';

export interface StoreCounts {
  countLiveEntities(): number;
  estimateHistoryRows(): number;
}

export function createStoreCounts(db: BetterSqlite3.Database, buckets: BucketCatalogue): StoreCounts {
  // NOTE: no index knows deleted_at, so this reads the whole entities table.
  const liveEntities = db.prepare<[], number>('SELECT count(*) FROM entities WHERE deleted_at IS NULL').pluck();
  return {
    countLiveEntities: () => liveEntities.get() ?? 0,
    estimateHistoryRows() {
      let rows = 0;
      for (const bucket of buckets.list()) {
        // NOTE: rowids are handed out in insertion order and each bound is one B-tree descent; the two
        // subqueries keep SQLite's min/max shortcut, which a single min() - max() would lose.
        const span = db.prepare<[], number | null>(
          `SELECT (SELECT max(rowid) FROM ${bucket.name}) - (SELECT min(rowid) FROM ${bucket.name}) + 1`,
        ).pluck().get();
        rows += span ?? 0;
      }
      return rows;
    },
  };
}
