// Migration 26: transient entities (NGSI-LD §4.22). A live entity's expiresAt in a column of its row,
// indexed only where set, so that the expiry job finds the entities due with a range scan and a
// write of an entity without expiresAt writes no index entry. The column is cleared when the entity
// is deleted: a deleted row never stays in the index.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    ALTER TABLE entities ADD COLUMN expires_at INTEGER;
    CREATE INDEX entities_expiry ON entities (expires_at) WHERE expires_at IS NOT NULL;
  `);
}
