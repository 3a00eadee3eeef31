// Migration 5: history indexes and catalogue for temporal queries.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  // TODO: filled in with the feature that needs it.
  void db;
}
