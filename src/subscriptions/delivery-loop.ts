// The sender loop of one subscription: its notifications in queue order, a window of them in flight,
// outcomes taken in order; a failure is logged and recorded, and retried after a backoff until given up.

import type { Logger } from '../lib/index.js';
import type { Store } from '../store/index.js';
import type { DeliveryRecorder } from './delivery-records.js';
import type { HeldChanges } from './delivery-held.js';
import { aheadOf, laneOf, nextOf } from './delivery-lanes.js';
import { keyOf, WINDOW, type DeliveryLanes, type Lane, type PendingNotification } from './delivery-types.js';
import type { SubscriptionRegistry } from './registry.js';

export interface LoopContext {
  store: Pick<Store, 'notifications' | 'write'>;
  registry: Pick<SubscriptionRegistry, 'get'>;
  log: Logger;
  maxAttempts: number;
  state: DeliveryLanes;
  held: HeldChanges;
  recorder: DeliveryRecorder;
  /** A send's outcome: undefined once delivered, else why not (a short reason). */
  outcomeOf(row: PendingNotification): Promise<string | undefined>;
  /** Waits `ms`, or less when the dispatcher stops. */
  pause(key: string, ms: number): Promise<void>;
  backoff(attempts: number): number;
  isStopped(): boolean;
}

type InFlight = Array<{ row: PendingNotification; outcome: Promise<string | undefined> }>;

/** Drops what a deleted subscription had pending, in memory and queued. */
async function forget(ctx: LoopContext, tenant: string, subscriptionId: string, key: string, inFlight: ReadonlyArray<{ row: PendingNotification }>): Promise<void> {
  const { state, held } = ctx;
  for (const { row } of inFlight) held.release(row);
  for (const n of state.lanes.get(key)?.list ?? []) held.release(n);
  state.lastDone.delete(key);
  state.lanes.delete(key);
  await ctx.store.write(() => ctx.store.notifications.removeForSubscription(tenant, subscriptionId));
}

/**
 * After the failure of `row` (the oldest in flight): of the later ones in flight, those the receiver
 * took are delivered (ahead of this one); the others go again after it, uncounted. Records the
 * attempt; returns whether the notification is given up.
 */
async function afterFailure(ctx: LoopContext, lane: Lane, row: PendingNotification, failure: string, inFlight: InFlight): Promise<boolean> {
  const { state, recorder, log } = ctx;
  const { tenant, subscriptionId } = row;
  const key = keyOf(tenant, subscriptionId);
  lane.window = 1;
  lane.isFailing = true;
  state.stats.failed += 1;
  const again: PendingNotification[] = [];
  for (const later of inFlight.splice(0)) {
    if (await later.outcome !== undefined) {
      again.push(later.row);
      continue;
    }
    if (later.row.isQueued) aheadOf(state, key).add(later.row.id);
    recorder.recordDelivered(later.row);
  }
  const attempts = row.attempts + 1;
  const done = attempts >= ctx.maxAttempts;
  log.warn('notification failed', { subscriptionId, tenant, endpoint: row.message.uri, cause: failure, attempts, willRetry: !done });
  // The queue holds every notification of a failing subscription (its attempts counted).
  await recorder.recordFailure(row, attempts, done, failure, [...again, ...lane.list]);
  if (done) {
    state.stats.dropped += 1;
    log.warn('notification given up', { subscriptionId, tenant, attempts, error: failure });
    state.lastDone.set(key, row.id);
  } else {
    again.unshift(row);
  }
  // A complete lane's list is still all there is: the failed ones go back at its head. Otherwise
  // they are read again from the queue.
  if (lane.isComplete) lane.list.unshift(...again);
  if (!done) await ctx.pause(key, ctx.backoff(attempts));
  return done;
}

/**
 * Sends the notifications of one subscription in queue order, up to its lane's window ahead of the
 * outcome of the oldest (the HTTP sender pipelines them on one connection, answered in order).
 * Outcomes are taken in order too. When one fails, those sent after it that the receiver took stay
 * delivered (it has them: sending them again would duplicate them), the others go again after
 * the failed one, and the window closes to one until the receiver takes notifications again.
 */
export async function runLoop(ctx: LoopContext, tenant: string, subscriptionId: string): Promise<void> {
  const { state, recorder } = ctx;
  const key = keyOf(tenant, subscriptionId);
  const inFlight: InFlight = [];
  /** The last notification taken into the window (0: none past `lastDone`). */
  let taken = 0;
  while (!ctx.isStopped()) {
    while (inFlight.length < laneOf(state, key).window) {
      const row = nextOf(ctx.store, state, tenant, subscriptionId, key, Math.max(taken, state.lastDone.get(key) ?? 0));
      if (!row) break;
      if (state.ahead.get(key)?.has(row.id) === true) {
        taken = row.id;
        continue;
      }
      if (!ctx.registry.get(tenant, subscriptionId)) {
        // Deleted meanwhile: what it had pending goes with it.
        inFlight.push({ row, outcome: Promise.resolve(undefined) });
        await forget(ctx, tenant, subscriptionId, key, inFlight);
        return;
      }
      taken = row.id;
      inFlight.push({ row, outcome: ctx.outcomeOf(row) });
    }
    const head = inFlight.shift();
    if (head === undefined) return;
    const { row } = head;
    const failure = await head.outcome;
    const lane = laneOf(state, key);
    if (failure === undefined) {
      state.lastDone.set(key, row.id);
      recorder.recordDelivered(row);
      lane.isFailing = false;
      if (lane.window < WINDOW) lane.window += 1;
      continue;
    }
    await afterFailure(ctx, lane, row, failure, inFlight);
    taken = 0;
  }
  // Stopping: what was already sent is recorded as far as it was delivered in order.
  for (const { row, outcome } of inFlight) {
    if (await outcome !== undefined) break;
    state.lastDone.set(key, row.id);
    recorder.recordDelivered(row);
  }
}
