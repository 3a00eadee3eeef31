// Notifications waiting for delivery, in order per subscription. The message (endpoint, headers,
// body) is opaque here: the notifier builds it and reads it back.

import type BetterSqlite3 from 'better-sqlite3';
import type { RunInTx } from '../transactions.js';

export interface QueuedNotification {
  id: number;
  tenant: string;
  subscriptionId: string;
  queuedAt: number;
  attempts: number;
  /** JSON text, as enqueued: how and where the notification goes. */
  message: string;
  /** The notification's body, JSON text sent as it is. */
  body: string;
}

export type NewNotification = Omit<QueuedNotification, 'id' | 'attempts'>;

export interface NotificationQueue {
  /** Appends in order (joins the open transaction, or opens one); returns their ids, in that order. */
  enqueue(items: readonly NewNotification[]): number[];
  /**
   * Writes notifications whose ids the caller gave (above lastId(), increasing), with their attempts
   * so far (joins the open transaction, or opens one).
   */
  persist(items: readonly QueuedNotification[]): void;
  /** The highest id ever queued (0: none yet). */
  lastId(): number;
  /** The oldest pending notification of a subscription queued after `afterId` (0: the oldest of all). */
  next(tenant: string, subscriptionId: string, afterId?: number): QueuedNotification | undefined;
  /** Subscriptions with something pending, each once. */
  subscriptionsWithPending(): Array<{ tenant: string; subscriptionId: string }>;
  remove(id: number): void;
  /** Removes these notifications (delivered, or given up). */
  removeMany(ids: readonly number[]): void;
  setAttempts(id: number, attempts: number): void;
  /** Drops whatever a subscription had pending; returns how many. */
  removeForSubscription(tenant: string, subscriptionId: string): number;
  /** Drops the oldest notifications beyond `max`; returns how many went. */
  trimTo(max: number): number;
  size(): number;
}

type Row = [id: number, tenant: string, subscriptionId: string, queuedAt: number, attempts: number, message: string, body: string];

const toQueued = ([id, tenant, subscriptionId, queuedAt, attempts, message, body]: Row): QueuedNotification =>
  ({ id, tenant, subscriptionId, queuedAt, attempts, message, body });

export function createNotificationQueue(db: BetterSqlite3.Database, atomic: RunInTx): NotificationQueue {
  const insert = db.prepare<[string, string, number, string, string]>(
    'INSERT INTO notification_queue (tenant, subscription_id, queued_at, message, body) VALUES (?, ?, ?, ?, ?)',
  );
  const insertWithId = db.prepare<[number, string, string, number, number, string, string]>(
    'INSERT INTO notification_queue (id, tenant, subscription_id, queued_at, attempts, message, body) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  // AUTOINCREMENT keeps the highest id ever given in sqlite_sequence, even once the queue is empty.
  const lastId = db.prepare<[], { n: number | null }>(
    "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'notification_queue'), 0), coalesce((SELECT max(id) FROM notification_queue), 0)) AS n",
  );
  const next = db.prepare<[string, string, number], Row>(
    `SELECT id, tenant, subscription_id, queued_at, attempts, message, body FROM notification_queue
     WHERE tenant = ? AND subscription_id = ? AND id > ? ORDER BY id LIMIT 1`,
  ).raw(true);
  const pendingSubs = db.prepare<[], { tenant: string; subscription_id: string }>(
    'SELECT DISTINCT tenant, subscription_id FROM notification_queue',
  );
  const remove = db.prepare<[number]>('DELETE FROM notification_queue WHERE id = ?');
  const removeMany = db.prepare<[string]>('DELETE FROM notification_queue WHERE id IN (SELECT value FROM json_each(?))');
  const setAttempts = db.prepare<[number, number]>('UPDATE notification_queue SET attempts = ? WHERE id = ?');
  const removeSub = db.prepare<[string, string]>('DELETE FROM notification_queue WHERE tenant = ? AND subscription_id = ?');
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM notification_queue');
  // Each bound alone, so that SQLite reads it off an end of the primary key.
  const span = db.prepare<[], { n: number | null }>(
    'SELECT (SELECT max(id) FROM notification_queue) - (SELECT min(id) FROM notification_queue) + 1 AS n',
  );
  const trim = db.prepare<[number]>(
    'DELETE FROM notification_queue WHERE id IN (SELECT id FROM notification_queue ORDER BY id LIMIT CAST(? AS INTEGER))',
  );

  return {
    enqueue: (items) => {
      if (items.length === 0) return [];
      return atomic(() => items.map((i) => Number(insert.run(i.tenant, i.subscriptionId, i.queuedAt, i.message, i.body).lastInsertRowid)));
    },
    persist: (items) => {
      if (items.length === 0) return;
      atomic(() => {
        for (const i of items) insertWithId.run(i.id, i.tenant, i.subscriptionId, i.queuedAt, i.attempts, i.message, i.body);
      });
    },
    lastId: () => lastId.get()?.n ?? 0,
    next: (tenant, subscriptionId, afterId = 0) => {
      const row = next.get(tenant, subscriptionId, afterId);
      return row && toQueued(row);
    },
    subscriptionsWithPending: () => pendingSubs.all().map((r) => ({ tenant: r.tenant, subscriptionId: r.subscription_id })),
    remove: (id) => {
      atomic(() => remove.run(id));
    },
    removeMany: (ids) => {
      if (ids.length > 0) atomic(() => removeMany.run(JSON.stringify(ids)));
    },
    setAttempts: (id, attempts) => {
      atomic(() => setAttempts.run(attempts, id));
    },
    removeForSubscription: (tenant, subscriptionId) => atomic(() => removeSub.run(tenant, subscriptionId).changes),
    trimTo: (max) => atomic(() => {
      // NOTE: ids only grow, so the span of ids bounds the count: two index look-ups instead of a
      // scan of the whole queue, the common case after every enqueue.
      if ((span.get()?.n ?? 0) <= max) return 0;
      const excess = (count.get()?.n ?? 0) - max;
      return excess > 0 ? trim.run(excess).changes : 0;
    }),
    size: () => count.get()?.n ?? 0,
  };
}
