// Migration 23: the downlink's subscription upstream (edge spec §7), kept across restarts so that a
// restart renews the one it made instead of leaving it behind and making another.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- A single row (id 1) once a subscription was asked for: its id upstream, the topic its
    -- notifications arrive on, what it was made for (upstream URL, tenant and selection: another
    -- target makes a new one) and when it expires unless renewed.
    CREATE TABLE federation_downlink (
      id               INTEGER PRIMARY KEY CHECK (id = 1),
      subscription_id  TEXT    NOT NULL,
      topic            TEXT    NOT NULL,
      target           TEXT    NOT NULL,
      expires_at       INTEGER
    );
  `);
}
