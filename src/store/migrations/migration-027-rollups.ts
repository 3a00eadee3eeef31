// Migration 27: the rollups of history (per-minute and per-hour summaries of each series). Their
// tables are made on demand (rollup_minute_YYYYMM, rollup_hour_YYYY); here, what follows the raw
// rows: how far each raw bucket was read, the (series, minute or hour) summaries to compute again,
// and a few instants the tiers keep (before which raw rows were dropped, how far each tier is rolled).

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- The last rowid of each raw bucket table whose row has been taken into account.
    CREATE TABLE rollup_progress (
      bucket     TEXT    PRIMARY KEY,
      last_rowid INTEGER NOT NULL
    ) WITHOUT ROWID;

    -- Summaries to compute again from the raw rows: tier 0 a minute, 1 an hour; start is the
    -- period's first instant. Ordered by start, so that the closed periods are a range.
    CREATE TABLE rollup_dirty (
      tier   INTEGER NOT NULL,
      start  INTEGER NOT NULL,
      series INTEGER NOT NULL,
      PRIMARY KEY (tier, start, series)
    ) WITHOUT ROWID;

    -- Named instants: raw_dropped_before (raw rows before it were removed by retention or the disk
    -- budget), minute_dropped_before, hour_dropped_before.
    CREATE TABLE rollup_state (
      key   TEXT    PRIMARY KEY,
      value INTEGER NOT NULL
    ) WITHOUT ROWID;
  `);
}
