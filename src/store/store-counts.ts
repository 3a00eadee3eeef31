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
  // authentication), so this reads the table twice, whatever it holds: the live rows without an
  // owner, less those whose id is owned all the same, by an earlier life of it (its owner stays on
  // that deleted row) or by an `own` permission kept from before migration 16; those are few, and
  // only their ids are looked up. (Probing the id of every row without an owner cost about five
  // table reads on 100,000 of them.)
  const ownerless = db.prepare<[], number>(
    `SELECT (SELECT count(*) FROM entities WHERE deleted_at IS NULL AND owner IS NULL)
       - (SELECT count(*) FROM (
            SELECT DISTINCT tenant, id FROM (
              SELECT tenant, id FROM entities NOT INDEXED WHERE owner IS NOT NULL AND deleted_at IS NOT NULL
              UNION ALL SELECT tenant, target_id FROM permissions NOT INDEXED WHERE action = 3 AND target_id IS NOT NULL)) s
          JOIN entities e INDEXED BY entities_tenant_id ON e.tenant = s.tenant AND e.id = s.id
          WHERE e.deleted_at IS NULL AND e.owner IS NULL)`,
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
