// Migration 8: the change journal. Every write appends one row per entity it changed in its own
// transaction; readers (notifier, federation) follow it by sequence with their persisted cursors.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- seq is the rowid: a new row gets max(seq) + 1. Pruning always keeps the newest row, so a
    -- sequence is never given twice and a reader's cursor can never skip a new row. (AUTOINCREMENT
    -- would do the same at the cost of a write to sqlite_sequence with every change.)
    CREATE TABLE journal (
      seq       INTEGER PRIMARY KEY,
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
