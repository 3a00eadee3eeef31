// Migration 10: notifications waiting for delivery. A notification is queued in the same
// transaction that moves the notifier's journal cursor past its change, and leaves the queue once
// delivered (or given up), so a restart, kill -9 included, delivers what was pending.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- AUTOINCREMENT: an id is never given twice, even once the queue has emptied, so the sender
    -- can read past the last one it handed over while its removal is still being committed.
    CREATE TABLE notification_queue (
      id              INTEGER PRIMARY KEY AUTOINCREMENT,
      tenant          TEXT    NOT NULL,
      subscription_id TEXT    NOT NULL,
      queued_at       INTEGER NOT NULL,
      attempts        INTEGER NOT NULL DEFAULT 0,
      message         TEXT    NOT NULL,
      body            TEXT    NOT NULL
    );
    -- Delivery order per subscription.
    CREATE INDEX notification_queue_subscription ON notification_queue (tenant, subscription_id, id);
  `);
}
