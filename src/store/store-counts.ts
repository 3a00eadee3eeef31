// Counts of what the database holds, for metrics: the history estimate is cheap enough for every
// scrape on a small device; the live-entity count is a scan, taken once at start-up, and so is the
// count of entities without an owner (with authentication on).

import type BetterSqlite3 from 'better-sqlite3';
import type { BucketCatalogue } from './history/buckets.js';

export interface StoreCounts {
  countLiveEntities(): number;
  countOwnerlessEntities(): number;
  estimateHistoryRows(): number;
}

export function createStoreCounts(db: BetterSqlite3.Database, buckets: BucketCatalogue): StoreCounts {
  // NOTE: no index knows deleted_at, so this reads the whole entities table.
  const liveEntities = db.prepare<[], number>('SELECT count(*) FROM entities WHERE deleted_at IS NULL').pluck();
  // NOTE: no index knows the rows without an owner (one would cost every write made without
  // authentication), so this reads the table once, as the live count does; an id owned by an earlier
  // life of it (its owner stays on that row) or by an `own` permission kept from before migration 16
  // is owned: one index probe each, for the rows without an owner only.
  const ownerless = db.prepare<[], number>(
    `SELECT count(*) FROM entities e WHERE e.deleted_at IS NULL AND e.owner IS NULL
       AND NOT EXISTS (SELECT 1 FROM entities o INDEXED BY entities_tenant_id WHERE o.tenant = e.tenant AND o.id = e.id AND o.owner IS NOT NULL)
       AND NOT EXISTS (SELECT 1 FROM permissions p WHERE p.tenant = e.tenant AND p.target_id = e.id AND p.action = 3)`,
  ).pluck();
  return {
    countLiveEntities: () => liveEntities.get() ?? 0,
    countOwnerlessEntities: () => ownerless.get() ?? 0,
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
