// Migration 7: contexts added by clients (POST /jsonldContexts, NGSI-LD §5.13.2) are stored with
// kind 'Hosted'. SQLite cannot change a CHECK constraint in place: the table is rebuilt.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    CREATE TABLE contexts_v7 (
      id         TEXT    PRIMARY KEY,
      url        TEXT    NOT NULL UNIQUE,
      body       TEXT    NOT NULL,
      kind       TEXT    NOT NULL CHECK (kind IN ('Hosted', 'Cached', 'ImplicitlyCreated')),
      created_at INTEGER NOT NULL
    );
    INSERT INTO contexts_v7 (id, url, body, kind, created_at) SELECT id, url, body, kind, created_at FROM contexts;
    DROP TABLE contexts;
    ALTER TABLE contexts_v7 RENAME TO contexts;
  `);
}
