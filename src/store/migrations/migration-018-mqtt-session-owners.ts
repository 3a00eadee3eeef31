// Migration 18: the principal each MQTT client id's session belongs to, so that a stored session is
// never handed to another principal, across restarts too. owner: `device:<tenant>/<deviceId>` or
// `subject:<sub>`.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    CREATE TABLE mqtt_session_owners (
      client_id TEXT PRIMARY KEY,
      owner     TEXT NOT NULL
    ) WITHOUT ROWID;
  `);
}
