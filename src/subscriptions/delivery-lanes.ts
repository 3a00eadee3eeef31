// Each subscription's lane: the notifications handed over to it in memory, and the queue read
// when the lane is not complete (a backlog, or what a restart left).

import type { Store } from '../store/index.js';
import { pendingOf, type DeliveryLanes, type Lane, type PendingNotification } from './delivery-types.js';

type Queue = Pick<Store, 'notifications'>;

export function laneOf(state: DeliveryLanes, key: string): Lane {
  let lane = state.lanes.get(key);
  if (lane === undefined) {
    lane = { list: [], isComplete: false, isFailing: false, window: 1 };
    state.lanes.set(key, lane);
  }
  return lane;
}

/**
 * The next notification of a subscription after the one with id `after`: handed over when its
 * lane is complete, else read from the queue. The lane becomes complete once the queue has nothing
 * older than its first one.
 * NOTE: a lane that is not complete holds nothing that is only in memory (takesInMemory), so the
 * queue has everything it must read.
 */
export function nextOf(store: Queue, state: DeliveryLanes, tenant: string, subscriptionId: string, key: string, after: number): PendingNotification | undefined {
  const lane = laneOf(state, key);
  if (lane.isComplete) return lane.list.shift();
  while (lane.list.length > 0 && lane.list[0]!.id <= after) lane.list.shift();
  const row = store.notifications.next(tenant, subscriptionId, after);
  // NOTE: a queued notification is handed over once its enqueueing is committed, so every one
  // handed over is visible to this read, and one it does not find was handed over already.
  if (row === undefined || row.id === lane.list[0]?.id) {
    lane.isComplete = true;
    if (row === undefined) lane.list = [];
    return lane.list.shift();
  }
  return pendingOf(row);
}

export function hasPending(store: Queue, state: DeliveryLanes, tenant: string, subscriptionId: string, key: string): boolean {
  const lane = state.lanes.get(key);
  if (lane?.isComplete === true) return lane.list.length > 0;
  return store.notifications.next(tenant, subscriptionId, state.lastDone.get(key) ?? 0) !== undefined;
}

/** The notifications of a subscription delivered ahead of an older one that failed. */
export function aheadOf(state: DeliveryLanes, key: string): Set<number> {
  let set = state.ahead.get(key);
  if (set === undefined) {
    set = new Set();
    state.ahead.set(key, set);
  }
  return set;
}
