// What delivery records in the store: deliveries (queue removals and one counter update per
// subscription, at most every FLUSH_EVERY_MS), failed attempts (with the notifications after them
// written to the queue), and notifications held in memory written to the queue.

import type { Store } from '../store/index.js';
import type { DeliveryDeps, DeliveryLanes, PendingNotification } from './delivery-types.js';
import { FLUSH_EVERY_MS, keyOf, rowOf } from './delivery-types.js';
import type { HeldChanges } from './delivery-held.js';

export interface DeliveryRecorder {
  /** A delivered notification: recorded with the others of this loop turn. */
  recordDelivered(row: PendingNotification): void;
  /** Records every delivery not recorded yet (now). */
  flushDelivered(): void;
  /**
   * Records a failed attempt of `row` in one transaction: its attempt count, or its removal from
   * the queue when `done` (given up); the subscription's counters; and `pending` written to the queue.
   */
  recordFailure(row: PendingNotification, attempts: number, done: boolean, error: string, pending: readonly PendingNotification[]): Promise<void>;
  /** Writes to the queue those of `items` that are only in memory (joins the transaction it runs in). */
  queueNow(items: readonly PendingNotification[]): PendingNotification[];
  /** Once their write is committed: queued, their changes no longer wait for them. */
  markQueued(items: readonly PendingNotification[]): void;
  /** Resolves once every write started is committed (or failed). */
  settled(): Promise<void>;
}

/** Writes to the queue those of `items` that are only in memory (joins the transaction it runs in). */
function queueNow(store: Pick<Store, 'notifications'>, items: readonly PendingNotification[]): PendingNotification[] {
  const todo = items.filter((n) => !n.isQueued);
  store.notifications.persist(todo.map(rowOf));
  return todo;
}

/** Once their write is committed: queued, their changes no longer wait for them. */
function markQueued(held: HeldChanges, items: readonly PendingNotification[]): void {
  for (const n of items) {
    n.isQueued = true;
    held.release(n);
  }
}

type RecordFailure = DeliveryRecorder['recordFailure'];

/**
 * Records a failed attempt of `row` in one transaction: its attempt count, or its removal from
 * the queue when `done` (given up); the subscription's counters; and, so that a failing receiver
 * holds nothing in memory only, `pending` (the notifications after it) written to the queue.
 */
function createFailureRecorder(
  deps: Pick<DeliveryDeps, 'store' | 'registry' | 'clock' | 'log'>, held: HeldChanges, track: (write: Promise<void>) => Promise<void>,
): RecordFailure {
  const { store, registry, clock, log } = deps;
  return (row, attempts, done, error, pending) => {
    const at = clock.now();
    if (!done) row.attempts = attempts;
    let written: PendingNotification[] = [];
    return track(store.write(() => {
      if (done && row.isQueued) store.notifications.remove(row.id);
      if (!done && row.isQueued) store.notifications.setAttempts(row.id, attempts);
      written = queueNow(store, done ? pending : [row, ...pending]);
      return store.subscriptions.recordDelivery(row.tenant, row.subscriptionId, { at, ok: false, error });
    }).then(
      (recorded) => {
        if (done) held.release(row);
        markQueued(held, written);
        if (recorded !== undefined) registry.setDelivery(row.tenant, row.subscriptionId, recorded);
      },
      (err: unknown) => log.warn('notification outcome not recorded', { subscriptionId: row.subscriptionId, err }),
    ));
  };
}

export function createDeliveryRecorder(
  deps: Pick<DeliveryDeps, 'store' | 'registry' | 'clock' | 'log'>, state: DeliveryLanes, held: HeldChanges,
): DeliveryRecorder {
  const { store, registry, clock, log } = deps;
  /** Removals and counters being committed, awaited on stop. */
  const writes = new Set<Promise<void>>();
  /** Deliveries not recorded yet, per subscription: recorded together, once per loop turn. */
  const delivered = new Map<string, { tenant: string; subscriptionId: string; ids: number[]; count: number; at: number }>();
  let flushScheduled = false;
  let lastFlushAt = Number.NEGATIVE_INFINITY;

  const track = (write: Promise<void>): Promise<void> => {
    const tracked = write.finally(() => writes.delete(tracked));
    writes.add(tracked);
    return tracked;
  };

  /** Records every delivery since the last flush: removals of what was queued, and one counter update per subscription. */
  const flushDelivered = (): void => {
    flushScheduled = false;
    lastFlushAt = performance.now();
    const batch = [...delivered.values()];
    delivered.clear();
    if (batch.length === 0) return;
    void track(store.write(() => batch.map((d) => {
      store.notifications.removeMany(d.ids);
      return store.subscriptions.recordDelivery(d.tenant, d.subscriptionId, { at: d.at, ok: true, count: d.count });
    })).then(
      (states) => batch.forEach((d, i) => {
        const recorded = states[i];
        if (recorded !== undefined) registry.setDelivery(d.tenant, d.subscriptionId, recorded);
        const key = keyOf(d.tenant, d.subscriptionId);
        const skipped = state.ahead.get(key);
        if (skipped === undefined) return;
        for (const id of d.ids) skipped.delete(id);
        if (skipped.size === 0) state.ahead.delete(key);
      }),
      (err: unknown) => log.warn('notification deliveries not recorded', { err }),
    ));
  };

  /**
   * A delivered notification: its removal (when queued) and the counters go with the others of this
   * loop turn.
   * NOTE: not awaited by the sender loop, so a notification does not wait for the commit of the one
   * before; the loop reads past `lastDone` meanwhile. A crash before that commit sends the
   * notification again after the restart (at least once).
   */
  const recordDelivered = (row: PendingNotification): void => {
    state.stats.sent += 1;
    held.release(row);
    const key = keyOf(row.tenant, row.subscriptionId);
    const d = delivered.get(key) ?? { tenant: row.tenant, subscriptionId: row.subscriptionId, ids: [], count: 0, at: 0 };
    if (row.isQueued) d.ids.push(row.id);
    d.count += 1;
    d.at = clock.now();
    delivered.set(key, d);
    if (!flushScheduled) {
      flushScheduled = true;
      // NOTE: at most one such write every FLUSH_EVERY_MS: under a steady stream each notification
      // would otherwise cost a commit of its own, beside the commit of the write it notifies.
      const wait = lastFlushAt + FLUSH_EVERY_MS - performance.now();
      if (wait <= 0) setImmediate(flushDelivered);
      else setTimeout(flushDelivered, wait).unref();
    }
  };

  const recordFailure = createFailureRecorder(deps, held, track);

  return {
    recordDelivered, flushDelivered, recordFailure,
    queueNow: (items) => queueNow(store, items),
    markQueued: (items) => markQueued(held, items),
    settled: async () => {
      await Promise.all(writes);
    },
  };
}
