// Migration 2: R*Tree bounding boxes of GeoProperty values, for the geo-query prefilter.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  // TODO: filled in with the feature that needs it.
  void db;
}
