// Migration 3: attribute values indexed for q queries.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  // TODO: filled in with the feature that needs it.
  void db;
}
