// Migration 6: fewer index pages per write. A reading changes one number; before, that moved an
// entry in three B-trees of the values index and wrote two history indexes no hot read needs. Now
// the values table is clustered on (attr, entity) so a changed number rewrites one leaf in place,
// and history keeps only its (series, t) index (and the partial one of deletion rows). An entity
// row had three indexes on (tenant, id) or tenant; one is enough (see entities.ts).

import type BetterSqlite3 from 'better-sqlite3';
import { checkBucketName } from './buckets.js';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    ALTER TABLE attr_values RENAME TO attr_values_old;
    DROP INDEX attr_values_num;
    DROP INDEX attr_values_str;
    -- A numeric comparison scans the attribute's range of the primary key (entries are small, and
    -- the scan reads no document); a new value for an entity stays in the same leaf page.
    CREATE TABLE attr_values (
      entity INTEGER NOT NULL REFERENCES entities (rowid) ON DELETE CASCADE,
      attr   INTEGER NOT NULL REFERENCES iris (id),
      inst   INTEGER NOT NULL,
      seq    INTEGER NOT NULL,
      typ    INTEGER NOT NULL,
      num    REAL,
      str    TEXT,
      PRIMARY KEY (attr, entity, inst, seq)
    ) WITHOUT ROWID;
    INSERT INTO attr_values SELECT entity, attr, inst, seq, typ, num, str FROM attr_values_old;
    DROP TABLE attr_values_old;
    -- Rows of one entity (diffs, removal, the cascade): written only when rows come or go.
    CREATE INDEX attr_values_entity ON attr_values (entity);
    -- Text equality and ranges; any comparison of str implies str IS NOT NULL, so the planner uses
    -- it, and numbers never enter it.
    CREATE INDEX attr_values_str ON attr_values (attr, str, typ) WHERE str IS NOT NULL;
  `);
  // Live uniqueness is checked by the insert itself, inside the write transaction; creation order
  // is the table's own rowid order.
  db.exec('DROP INDEX entities_live_id; DROP INDEX entities_live_order;');
  for (const name of db.prepare<[], string>('SELECT name FROM history_buckets').pluck().all()) {
    const table = checkBucketName(name);
    db.exec(`DROP INDEX IF EXISTS ${table}_series_created; DROP INDEX IF EXISTS ${table}_series_modified;`);
  }
}
