// Delivery of notifications (behaviour §7): one sender loop per subscription, in order; a failure
// is recorded and retried with exponential backoff and jitter, a bounded number of times; a slow or
// dead receiver holds only its own subscription's notifications.
//
// NOTE: a notification of a subscription whose receiver keeps up is handed over in memory and never
// written: its durability is the journal's (the notifier's saved cursor stays before its change
// until it is delivered, and a restart notifies that change again: at least once). Writing each one
// to the queue and removing it once delivered cost about a tenth of the update rate with a
// subscription notified of every update. What is not delivered at once (the receiver failed, or
// its subscription has a backlog) is written to the queue, read back after a restart.

import { createHeldChanges, type HeldChanges } from './delivery-held.js';
import { hasPending, laneOf } from './delivery-lanes.js';
import { runLoop, type LoopContext } from './delivery-loop.js';
import { createDeliveryRecorder } from './delivery-records.js';
import {
  createDeliveryLanes, keyOf, MAX_HANDED, MAX_IN_MEMORY, mqttOptionsOf, type DeliveryDeps, type DeliveryLanes, type DeliveryStats, type PendingNotification,
  type QueuedMessage,
} from './delivery-types.js';
import { failureReason } from './failure-reason.js';

export type { DeliveryDeps, DeliveryOptions, DeliveryStats, PendingNotification, QueuedMessage } from './delivery-types.js';

export interface Dispatcher {
  /** The id of the next notification (above every one ever queued). */
  nextId(): number;
  /**
   * Whether a notification of this subscription may be handed over in memory only: its receiver
   * keeps up (nothing failing, no backlog, nothing pending in the queue before it).
   */
  takesInMemory(tenant: string, subscriptionId: string): boolean;
  /** The highest journal sequence before every change with a notification only in memory; undefined: none. */
  heldBefore(): number | undefined;
  /** Something was queued for this subscription (or may be pending since a restart). */
  kick(tenant: string, subscriptionId: string): void;
  /** Kicks every subscription with something pending (at start). */
  kickAll(): void;
  /**
   * Notifications in queue order, queued (their enqueueing committed) or in memory only (when
   * takesInMemory said so): a subscription whose pending notifications are all in memory gets them
   * without reading the queue; every one is kicked.
   */
  handOver(notifications: readonly PendingNotification[]): void;
  /** Forgets what was handed over: every subscription reads the queue again (rows were dropped). */
  resync(): void;
  /** Resolves when no loop is sending (retries waiting count as idle only once given up or done). */
  idle(): Promise<void>;
  /** Records the deliveries answered so far now; resolves once committed. */
  settled(): Promise<void>;
  stats(): DeliveryStats;
  /** Stops the loops once their notifications in flight are answered, and queues what is left in memory. */
  stop(): Promise<void>;
}

/** Sends a queued notification; its body is the JSON text it was queued with. */
function sendOf(deps: DeliveryDeps): (message: QueuedMessage, body: string, lane: string) => Promise<void> {
  return (message, body, lane) => {
    const timeoutMs = message.timeout ?? deps.options.timeoutMs;
    if (/^mqtts?:/i.test(message.uri)) {
      // The body was written by the notifier: a Notification object, as JSON text.
      return deps.sendMqtt(message.uri, { metadata: message.headers, body: undefined, bodyJson: body }, mqttOptionsOf(message, timeoutMs));
    }
    return deps.sendHttp({ uri: message.uri, headers: message.headers, body, lane }, timeoutMs);
  };
}

/** A send's outcome: undefined once delivered, else why not; a notification refused before sending is not sent. */
function outcomeOf(deps: DeliveryDeps, send: ReturnType<typeof sendOf>): LoopContext['outcomeOf'] {
  return (row) => {
    const refused = deps.refusal?.(row.tenant, row.subscriptionId, row.message.uri);
    if (refused !== undefined) {
      // NOTE: a refusal is final (the owner's rights decide it, not the receiver): given up at its first attempt.
      row.attempts = Math.max(row.attempts, deps.options.maxAttempts - 1);
      return Promise.resolve(refused);
    }
    return send(row.message, row.body, keyOf(row.tenant, row.subscriptionId)).then(() => undefined, (err: unknown) => failureReason(err));
  };
}

/** Pauses of the sender loops (their retry backoff), cut short when the dispatcher stops. */
function createPauses(): { pause(key: string, ms: number): Promise<void>; wakeAll(): void } {
  const timers = new Map<string, NodeJS.Timeout>();
  const waiting = new Map<string, () => void>();
  return {
    pause: (key, ms) => new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(key);
        waiting.delete(key);
        resolve();
      }, ms);
      timer.unref();
      timers.set(key, timer);
      waiting.set(key, resolve);
    }),
    wakeAll() {
      for (const t of timers.values()) clearTimeout(t);
      for (const wake of waiting.values()) wake();
      timers.clear();
      waiting.clear();
    },
  };
}

/** The wait before retrying a notification after `attempts` failed ones. */
function backoff(options: DeliveryDeps['options'], random: () => number, attempts: number): number {
  const exp = Math.min(options.retryMaxMs, options.retryBaseMs * 2 ** Math.max(0, attempts - 1));
  // Full jitter on half of the delay: receivers coming back are not hit by every gateway at once.
  return Math.round(exp / 2 + (random() * exp) / 2);
}

/** Hands notifications over to their subscriptions' lanes, in queue order, and kicks their loops. */
function handOver(state: DeliveryLanes, held: HeldChanges, kick: (tenant: string, subscriptionId: string) => void,
  notifications: readonly PendingNotification[]): void {
  for (const n of notifications) {
    const key = keyOf(n.tenant, n.subscriptionId);
    const lane = laneOf(state, key);
    const last = lane.list[lane.list.length - 1]?.id ?? state.lastDone.get(key) ?? 0;
    if (n.id <= last) continue;
    held.hold(n);
    // A backlog: read from the queue, until its reading reaches what is handed over from now on
    // (once what the lane holds is all queued: the queue must have everything it will read).
    if (lane.list.length >= MAX_HANDED && n.isQueued && lane.list.every((m) => m.isQueued)) {
      lane.list = [];
      lane.isComplete = false;
    }
    lane.list.push(n);
    kick(n.tenant, n.subscriptionId);
  }
}

export function createDispatcher(deps: DeliveryDeps): Dispatcher {
  const { store, log, options } = deps;
  const random = deps.random ?? Math.random;
  const loops = new Map<string, Promise<void>>();
  const state = createDeliveryLanes();
  const held = createHeldChanges();
  const recorder = createDeliveryRecorder(deps, state, held);
  const pauses = createPauses();
  const send = sendOf(deps);
  let stopped = false;
  let idleWaiters: Array<() => void> = [];
  let lastId: number | undefined;

  const ctx: LoopContext = {
    store, registry: deps.registry, log, maxAttempts: options.maxAttempts, state, held, recorder,
    outcomeOf: outcomeOf(deps, send),
    pause: pauses.pause,
    backoff: (attempts) => backoff(options, random, attempts),
    isStopped: () => stopped,
  };

  const settleIdle = (): void => {
    if (loops.size > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const w of waiters) w();
  };

  const kick = (tenant: string, subscriptionId: string): void => {
    if (stopped) return;
    const key = keyOf(tenant, subscriptionId);
    if (loops.has(key)) return;
    const run = runLoop(ctx, tenant, subscriptionId)
      .catch((err: unknown) => log.error('notification delivery failed', { subscriptionId, tenant, err }))
      .finally(() => {
        loops.delete(key);
        // Queued while the loop was finishing: go again.
        if (!stopped && hasPending(store, state, tenant, subscriptionId, key)) kick(tenant, subscriptionId);
        else settleIdle();
      });
    loops.set(key, run);
  };

  /** Writes every notification held only in memory to the queue. */
  const queueAll = async (): Promise<void> => {
    const all = [...state.lanes.values()].flatMap((l) => l.list);
    if (all.every((n) => n.isQueued)) return;
    const written = await store.write(() => recorder.queueNow(all));
    recorder.markQueued(written);
  };

  return {
    nextId: () => {
      lastId ??= store.notifications.lastId();
      lastId += 1;
      return lastId;
    },
    takesInMemory: (tenant, subscriptionId) => {
      const lane = state.lanes.get(keyOf(tenant, subscriptionId));
      return lane !== undefined && lane.isComplete && !lane.isFailing && lane.list.length < MAX_HANDED && held.count() < MAX_IN_MEMORY && !stopped;
    },
    heldBefore: held.before,
    kick,
    kickAll: () => {
      lastId ??= store.notifications.lastId();
      for (const { tenant, subscriptionId } of store.notifications.subscriptionsWithPending()) kick(tenant, subscriptionId);
    },
    handOver: (notifications) => handOver(state, held, kick, notifications),
    // Rows were dropped: every subscription reads the queue again, once what it holds is queued.
    resync: () => {
      void queueAll().then(() => state.lanes.clear(), (err: unknown) => log.warn('notifications not queued', { err }));
    },
    idle: async () => {
      if (loops.size > 0) await new Promise<void>((resolve) => idleWaiters.push(resolve));
      recorder.flushDelivered();
      await recorder.settled();
    },
    settled: async () => {
      recorder.flushDelivered();
      await recorder.settled();
    },
    stats: () => ({ ...state.stats, inMemory: held.count() }),
    async stop() {
      stopped = true;
      pauses.wakeAll();
      await Promise.all(loops.values());
      recorder.flushDelivered();
      await recorder.settled();
      // What is left in memory is queued: the next start delivers it as it was built.
      try {
        await queueAll();
      } catch (err) {
        log.warn('notifications left in memory not queued; the next start notifies their changes again', { err });
      }
      settleIdle();
    },
  };
}
