// Migration 24: reading the commands of one entity (GET /edgeld/v1/commands?entity=…): its latest
// commands, newest first, and the device whose entity it is.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- The latest commands of an entity, newest first, without a scan of every command.
    CREATE INDEX commands_entity ON commands (tenant, entity_id, issued_at);
    -- The device whose entity an entity id is.
    CREATE INDEX devices_entity ON devices (tenant, entity_id);
  `);
}
