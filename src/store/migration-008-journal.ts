// Migration 8: the change journal. Every write appends one row per entity it changed in its own
// transaction; readers (notifier, federation) follow it by sequence with their persisted cursors.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- AUTOINCREMENT: a sequence is never reused, even once every row has been pruned, so a
    -- reader's cursor can never skip a new row.
    CREATE TABLE journal (
      seq       INTEGER PRIMARY KEY AUTOINCREMENT,
      tenant    TEXT    NOT NULL,
      kind      INTEGER NOT NULL,
      entity_id TEXT    NOT NULL,
      at        INTEGER NOT NULL,
      subject   TEXT,
      payload   TEXT    NOT NULL
    );
    CREATE TABLE journal_cursors (
      reader TEXT    PRIMARY KEY,
      seq    INTEGER NOT NULL
    ) WITHOUT ROWID;
  `);
}
