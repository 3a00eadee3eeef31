// Migration 22: commands to devices (edge.md §6). A device record declares its commands; each
// command issued is a row of its own, from the write that issued it to its answer or expiry.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- A JSON array of { name, expires } (expires: an ISO 8601 duration).
    ALTER TABLE devices ADD COLUMN commands TEXT NOT NULL DEFAULT '[]';

    -- state: PENDING, DELIVERED, OK, ERROR or EXPIRED; value is JSON; attr the expanded name of the
    -- command attribute on the device's entity.
    CREATE TABLE commands (
      id         TEXT    PRIMARY KEY,
      tenant     TEXT    NOT NULL,
      device_id  TEXT    NOT NULL,
      entity_id  TEXT    NOT NULL,
      name       TEXT    NOT NULL,
      attr       TEXT    NOT NULL,
      value      TEXT    NOT NULL,
      issued_at  INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      state      TEXT    NOT NULL,
      answered_at INTEGER
    ) WITHOUT ROWID;
    -- The commands still open (pending or delivered): what a device gets again and what expires.
    CREATE INDEX commands_open ON commands (expires_at) WHERE state IN ('PENDING', 'DELIVERED');
  `);
}
