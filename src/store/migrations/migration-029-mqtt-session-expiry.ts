// Migration 29: the Session Expiry Interval of MQTT 5 clients' stored sessions, so that the expiry still
// counts across a restart (a kill -9 included). interval_s: seconds, as the client last set it;
// expires_at: milliseconds since the epoch, NULL while the client is connected (a restart starts the
// count of those). No row: the session never expires (MQTT 3.1.1, or an interval of 0xFFFFFFFF).

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    CREATE TABLE mqtt_session_expiry (
      client_id  TEXT    PRIMARY KEY,
      interval_s INTEGER NOT NULL,
      expires_at INTEGER
    ) WITHOUT ROWID;
    CREATE INDEX mqtt_session_expiry_at ON mqtt_session_expiry (expires_at);
  `);
}
