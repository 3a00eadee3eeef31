// Migration 16: the owner of an entity id in the entity's row. The `own` permission a create grants
// (interface 2.6 rule 4) was a permissions row with three indexes: four more B-trees written by every
// create with authentication on. In the row the create writes anyway it costs one index, which the
// read filter of a subject and the cascade of a deleted user search by owner.
// `owned_at` dates the permission and keeps its id unique if a row id is ever used again.
// Own permissions granted before stay in `permissions`; both are read as one.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    ALTER TABLE entities ADD COLUMN owner TEXT;
    ALTER TABLE entities ADD COLUMN owned_at INTEGER;
    CREATE INDEX entities_owner ON entities (owner, tenant) WHERE owner IS NOT NULL;
  `);
}
