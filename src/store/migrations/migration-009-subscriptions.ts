// Migration 9: NGSI-LD subscriptions (§5.8). The document is the subscriptions module's encoding of
// the model; delivery counters sit in their own columns so a delivery updates one narrow row.
// NOTE: number 8 is the change journal; this one only needs the tables of migration 1.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    CREATE TABLE subscriptions (
      seq               INTEGER PRIMARY KEY,
      tenant            TEXT    NOT NULL,
      id                TEXT    NOT NULL,
      doc               TEXT    NOT NULL,
      created_at        INTEGER NOT NULL,
      modified_at       INTEGER NOT NULL,
      times_sent        INTEGER NOT NULL DEFAULT 0,
      last_notification INTEGER,
      last_success      INTEGER,
      last_failure      INTEGER,
      status            TEXT CHECK (status IN ('ok', 'failed')),
      last_error        TEXT
    );
    CREATE UNIQUE INDEX subscriptions_id ON subscriptions (tenant, id);
  `);
}
