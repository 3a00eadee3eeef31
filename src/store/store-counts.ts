// Cheap counts of what the database holds, for metrics scraped every few seconds on a small device:
// each is an index or B-tree edge look-up, never a scan of the history.

import type BetterSqlite3 from 'better-sqlite3';
import type { BucketCatalogue } from './buckets.js';
import type { StoreCounts } from './types.js';

export function createStoreCounts(db: BetterSqlite3.Database, buckets: BucketCatalogue): () => StoreCounts {
  // NOTE: answered from the partial index entities_live_order (a few bytes per live entity).
  const liveEntities = db.prepare<[], number>('SELECT count(*) FROM entities WHERE deleted_at IS NULL').pluck();
  return () => {
    let historyRows = 0;
    for (const bucket of buckets.list()) {
      // NOTE: rowids are handed out in insertion order and each bound is one B-tree descent; the two
      // subqueries keep SQLite's min/max shortcut, which a single min() - max() would lose.
      const span = db.prepare<[], number | null>(
        `SELECT (SELECT max(rowid) FROM ${bucket.name}) - (SELECT min(rowid) FROM ${bucket.name}) + 1`,
      ).pluck().get();
      historyRows += span ?? 0;
    }
    return { liveEntities: liveEntities.get() ?? 0, historyRows };
  };
}
