// Migration 28: the bytes the database grew by on each UTC day (the disk budget's figures), kept
// across restarts for the rate shown by GET /edgeld/v1/storage and /metrics.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- day: the first instant of a UTC day (epoch ms); written: the increase of the database's pages
    -- in use seen over that day's checks (decreases not subtracted), in bytes.
    CREATE TABLE storage_daily (
      day     INTEGER PRIMARY KEY,
      written INTEGER NOT NULL
    );
  `);
}
