// Migration 4: attribute kinds per entity, for discovery.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  // TODO: filled in with the feature that needs it.
  void db;
}
