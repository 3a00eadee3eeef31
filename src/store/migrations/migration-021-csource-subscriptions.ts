// Migration 21: context source registration subscriptions (NGSI-LD §5.11) live beside entity
// subscriptions (same documents, delivery counters and notification queue), marked so that each
// resource lists only its own.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    ALTER TABLE subscriptions ADD COLUMN csource INTEGER NOT NULL DEFAULT 0 CHECK (csource IN (0, 1));
    CREATE INDEX subscriptions_kind ON subscriptions (tenant, csource, seq);
  `);
}
