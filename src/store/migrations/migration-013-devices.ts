// Migration 13: the device registry. Per MQTT device of a tenant, the entity its measurements write,
// how they map to attributes, and its secret, kept only as a salted scrypt hash.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- renames, unit_codes and static_attributes are JSON objects; context is JSON (NULL: the core context).
    CREATE TABLE devices (
      seq               INTEGER PRIMARY KEY,
      tenant            TEXT    NOT NULL,
      device_id         TEXT    NOT NULL,
      entity_id         TEXT    NOT NULL,
      entity_type       TEXT    NOT NULL,
      renames           TEXT    NOT NULL DEFAULT '{}',
      unit_codes        TEXT    NOT NULL DEFAULT '{}',
      static_attributes TEXT    NOT NULL DEFAULT '{}',
      context           TEXT,
      secret_hash       TEXT    NOT NULL,
      created_at        INTEGER NOT NULL,
      modified_at       INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX devices_id ON devices (tenant, device_id);
  `);
}
