// Migration 17: a version in each entity row. Every write of a row's representation (document,
// dates, soft delete) stores a new number from one sequence that only grows, so a listing can read
// the (rowid, version) pairs of a page, two integers a row, and take each unchanged entity from the
// decoded ones it keeps instead of reading and comparing its whole document again.
// The trigger refuses a write that changes the representation and keeps the version: a writer that
// forgot it would otherwise have listings serve the old entity.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    ALTER TABLE entities ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
    CREATE TRIGGER entities_version_changes BEFORE UPDATE OF tenant, id, doc, created_at, modified_at, deleted_at ON entities
    WHEN new.version <= old.version
    BEGIN SELECT RAISE(ABORT, 'an entity row changed without a new version'); END;
  `);
}
