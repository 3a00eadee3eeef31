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

import type { Clock, Logger } from '../lib/index.js';
import type { JsonObject } from '../ngsi/index.js';
import type { QueuedNotification, Store } from '../store/index.js';
import type { KeyValuePair } from './model.js';
import type { SubscriptionRegistry } from './registry.js';
import type { MqttNotificationMessage, MqttSendOptions } from './mqtt-sender.js';
import type { HttpDelivery } from './http-sender.js';
import { failureReason } from './failure-reason.js';

/** What is queued for one notification beside its body: where and how it goes. */
export interface QueuedMessage {
  uri: string;
  /** Milliseconds; absent: the default timeout. */
  timeout?: number;
  notifierInfo?: KeyValuePair[];
  headers: Record<string, string>;
}

export interface DeliveryOptions {
  /** Attempts before a notification is given up (logged and counted). */
  maxAttempts: number;
  /** Delay before the first retry, doubled at each further one up to retryMaxMs, with jitter. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Timeout of an endpoint that names none. */
  timeoutMs: number;
}

/** A notification to deliver, its message decoded. */
export interface PendingNotification {
  /** Its id in the queue (given by the dispatcher, increasing, whether it is written or not). */
  id: number;
  tenant: string;
  subscriptionId: string;
  attempts: number;
  queuedAt: number;
  message: QueuedMessage;
  /** The message as JSON text, as the queue keeps it. */
  messageJson: string;
  /** JSON text, sent as it is. */
  body: string;
  /** Whether it is in the queue; one that is not lives in memory until delivered or written. */
  isQueued: boolean;
  /** The journal change it notifies, while it is only in memory (the notifier's cursor waits for it). */
  seq?: number;
}

export interface DeliveryDeps {
  store: Pick<Store, 'notifications' | 'subscriptions' | 'write'>;
  registry: SubscriptionRegistry;
  sendHttp(delivery: HttpDelivery, timeoutMs: number): Promise<void>;
  sendMqtt(uri: string, message: MqttNotificationMessage, opts: MqttSendOptions): Promise<void>;
  clock: Clock;
  log: Logger;
  options: DeliveryOptions;
  /** Random in [0, 1) for the backoff jitter. */
  random?: () => number;
}

export interface DeliveryStats {
  sent: number;
  failed: number;
  dropped: number;
  /** Waiting for delivery in memory only (not queued). */
  inMemory: number;
}

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
  stats(): DeliveryStats;
  /** Stops the loops once their notifications in flight are answered, and queues what is left in memory. */
  stop(): Promise<void>;
}

const keyOf = (tenant: string, id: string): string => `${tenant}\n${id}`;

/** Most notifications a subscription holds in memory; beyond, it reads them from the queue. */
const MAX_HANDED = 1_024;
/** Most notifications held only in memory, all subscriptions together; beyond, they are queued. */
const MAX_IN_MEMORY = 2_048;
/** Most notifications of one subscription sent ahead of the outcome of the oldest. */
const WINDOW = 64;
/** Deliveries are recorded (counters, queue removals) at most this often. */
const FLUSH_EVERY_MS = 50;

/**
 * The notifications handed over to one subscription, oldest first: every one queued for it since
 * the first of them. Complete: nothing else is pending (after `lastDone`), so the queue need not be
 * read.
 */
interface Lane {
  list: PendingNotification[];
  isComplete: boolean;
  /** Since a failure, until a notification is delivered again. */
  isFailing: boolean;
  /**
   * How many may be sent ahead of the outcome of the oldest: 1 at first and after a failure, one
   * more after each success, up to WINDOW. A failing receiver thus gets its notifications strictly
   * one after the other, in order, and a healthy one as fast as it answers.
   */
  window: number;
}

function pendingOf(row: QueuedNotification): PendingNotification {
  const { id, tenant, subscriptionId, attempts, queuedAt, body } = row;
  // The message was written by the notifier as a QueuedMessage.
  const message = JSON.parse(row.message) as QueuedMessage;
  return { id, tenant, subscriptionId, attempts, queuedAt, message, messageJson: row.message, body, isQueued: true };
}

function rowOf(n: PendingNotification): QueuedNotification {
  const { id, tenant, subscriptionId, attempts, queuedAt, messageJson, body } = n;
  return { id, tenant, subscriptionId, attempts, queuedAt, message: messageJson, body };
}

function mqttOptionsOf(message: QueuedMessage, timeoutMs: number): MqttSendOptions {
  const info = new Map((message.notifierInfo ?? []).map((p) => [p.key, p.value]));
  const qos = Number(info.get('MQTT-QoS') ?? '0');
  const version = info.get('MQTT-Version') === 'mqtt5.0' ? 'mqtt5.0' : 'mqtt3.1.1';
  return { qos: qos === 1 || qos === 2 ? qos : 0, version, timeoutMs };
}

export function createDispatcher(deps: DeliveryDeps): Dispatcher {
  const { store, registry, clock, log, options } = deps;
  const random = deps.random ?? Math.random;
  const loops = new Map<string, Promise<void>>();
  const timers = new Map<string, NodeJS.Timeout>();
  const waiting = new Map<string, () => void>();
  const stats: Omit<DeliveryStats, 'inMemory'> = { sent: 0, failed: 0, dropped: 0 };
  let stopped = false;
  let idleWaiters: Array<() => void> = [];

  const backoff = (attempts: number): number => {
    const exp = Math.min(options.retryMaxMs, options.retryBaseMs * 2 ** Math.max(0, attempts - 1));
    // Full jitter on half of the delay: receivers coming back are not hit by every gateway at once.
    return Math.round(exp / 2 + (random() * exp) / 2);
  };

  /** Sends a queued notification; its body is the JSON text it was queued with. */
  const send = (message: QueuedMessage, body: string, lane: string): Promise<void> => {
    const timeoutMs = message.timeout ?? options.timeoutMs;
    if (/^mqtts?:/i.test(message.uri)) {
      // The body was written by the notifier: a Notification object, as JSON text.
      return deps.sendMqtt(message.uri, { metadata: message.headers, body: undefined, bodyJson: body }, mqttOptionsOf(message, timeoutMs));
    }
    return deps.sendHttp({ uri: message.uri, headers: message.headers, body, lane }, timeoutMs);
  };

  /** Per subscription, the last notification handed over whose removal may not be committed yet. */
  const lastDone = new Map<string, number>();
  /** Per subscription, what was handed over (the queue keeps what is queued until delivered). */
  const lanes = new Map<string, Lane>();
  /**
   * Per subscription, notifications delivered ahead of an older one that failed: skipped when the
   * queue is read again, until their removal is committed.
   */
  const ahead = new Map<string, Set<number>>();
  const aheadOf = (key: string): Set<number> => {
    let set = ahead.get(key);
    if (set === undefined) {
      set = new Set();
      ahead.set(key, set);
    }
    return set;
  };
  /** Removals and counters being committed, awaited on stop. */
  const writes = new Set<Promise<void>>();
  /** Deliveries not recorded yet, per subscription: recorded together, once per loop turn. */
  const delivered = new Map<string, { tenant: string; subscriptionId: string; ids: number[]; count: number; at: number }>();
  let flushScheduled = false;
  let lastFlushAt = Number.NEGATIVE_INFINITY;
  let lastId: number | undefined;

  /**
   * The journal changes with notifications only in memory, and how many each, oldest first (a Map
   * keeps the order of insertion, and changes are handed over in order).
   */
  const held = new Map<number, number>();
  let heldCount = 0;
  const hold = (n: PendingNotification): void => {
    if (n.isQueued || n.seq === undefined) return;
    held.set(n.seq, (held.get(n.seq) ?? 0) + 1);
    heldCount += 1;
  };
  /** The notification is delivered, given up or queued: its change no longer waits for it. */
  const release = (n: PendingNotification): void => {
    const { seq } = n;
    if (seq === undefined) return;
    delete n.seq;
    heldCount -= 1;
    const left = (held.get(seq) ?? 1) - 1;
    if (left > 0) held.set(seq, left);
    else held.delete(seq);
  };

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
        const state = states[i];
        if (state !== undefined) registry.setDelivery(d.tenant, d.subscriptionId, state);
        const key = keyOf(d.tenant, d.subscriptionId);
        const skipped = ahead.get(key);
        if (skipped === undefined) return;
        for (const id of d.ids) skipped.delete(id);
        if (skipped.size === 0) ahead.delete(key);
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
    stats.sent += 1;
    release(row);
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

  /** Writes to the queue those of `items` that are only in memory (joins the transaction it runs in). */
  const queueNow = (items: readonly PendingNotification[]): PendingNotification[] => {
    const todo = items.filter((n) => !n.isQueued);
    store.notifications.persist(todo.map(rowOf));
    return todo;
  };
  /** Once their write is committed: queued, their changes no longer wait for them. */
  const markQueued = (items: readonly PendingNotification[]): void => {
    for (const n of items) {
      n.isQueued = true;
      release(n);
    }
  };

  /**
   * Records a failed attempt of `row` in one transaction: its attempt count, or its removal from
   * the queue when `done` (given up); the subscription's counters; and, so that a failing receiver
   * holds nothing in memory only, `pending` (the notifications after it) written to the queue.
   */
  const recordFailure = (row: PendingNotification, attempts: number, done: boolean, error: string,
    pending: readonly PendingNotification[]): Promise<void> => {
    const at = clock.now();
    if (!done) row.attempts = attempts;
    let written: PendingNotification[] = [];
    return track(store.write(() => {
      if (done && row.isQueued) store.notifications.remove(row.id);
      if (!done && row.isQueued) store.notifications.setAttempts(row.id, attempts);
      written = queueNow(done ? pending : [row, ...pending]);
      return store.subscriptions.recordDelivery(row.tenant, row.subscriptionId, { at, ok: false, error });
    }).then(
      (state) => {
        if (done) release(row);
        markQueued(written);
        if (state !== undefined) registry.setDelivery(row.tenant, row.subscriptionId, state);
      },
      (err: unknown) => log.warn('notification outcome not recorded', { subscriptionId: row.subscriptionId, err }),
    ));
  };

  /** Waits `ms`, or less when the dispatcher stops. */
  const pause = (key: string, ms: number): Promise<void> => new Promise((resolve) => {
    const timer = setTimeout(() => {
      timers.delete(key);
      waiting.delete(key);
      resolve();
    }, ms);
    timer.unref();
    timers.set(key, timer);
    waiting.set(key, resolve);
  });

  const laneOf = (key: string): Lane => {
    let lane = lanes.get(key);
    if (lane === undefined) {
      lane = { list: [], isComplete: false, isFailing: false, window: 1 };
      lanes.set(key, lane);
    }
    return lane;
  };

  /**
   * The next notification of a subscription after the one with id `after`: handed over when its
   * lane is complete, else read from the queue. The lane becomes complete once the queue has nothing
   * older than its first one.
   * NOTE: a lane that is not complete holds nothing that is only in memory (takesInMemory), so the
   * queue has everything it must read.
   */
  const nextOf = (tenant: string, subscriptionId: string, key: string, after: number): PendingNotification | undefined => {
    const lane = laneOf(key);
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
  };

  const hasPending = (tenant: string, subscriptionId: string, key: string): boolean => {
    const lane = lanes.get(key);
    if (lane?.isComplete === true) return lane.list.length > 0;
    return store.notifications.next(tenant, subscriptionId, lastDone.get(key) ?? 0) !== undefined;
  };

  /** A send's outcome: undefined once delivered, else why not (a short reason, see failureReason). */
  const outcomeOf = (row: PendingNotification): Promise<string | undefined> => send(row.message, row.body, keyOf(row.tenant, row.subscriptionId)).then(
    () => undefined,
    (err: unknown) => failureReason(err),
  );

  /** Drops what a deleted subscription had pending, in memory and queued. */
  const forget = async (tenant: string, subscriptionId: string, key: string, inFlight: ReadonlyArray<{ row: PendingNotification }>): Promise<void> => {
    for (const { row } of inFlight) release(row);
    for (const n of lanes.get(key)?.list ?? []) release(n);
    lastDone.delete(key);
    lanes.delete(key);
    await store.write(() => store.notifications.removeForSubscription(tenant, subscriptionId));
  };

  /**
   * Sends the notifications of one subscription in queue order, up to its lane's window ahead of the
   * outcome of the oldest (the HTTP sender pipelines them on one connection, answered in order).
   * Outcomes are taken in order too. When one fails, those sent after it that the receiver took stay
   * delivered (it has them: sending them again would duplicate them), the others go again after
   * the failed one, and the window closes to one until the receiver takes notifications again.
   */
  const loop = async (tenant: string, subscriptionId: string): Promise<void> => {
    const key = keyOf(tenant, subscriptionId);
    const inFlight: Array<{ row: PendingNotification; outcome: Promise<string | undefined> }> = [];
    /** The last notification taken into the window (0: none past `lastDone`). */
    let taken = 0;
    while (!stopped) {
      while (inFlight.length < laneOf(key).window) {
        const row = nextOf(tenant, subscriptionId, key, Math.max(taken, lastDone.get(key) ?? 0));
        if (!row) break;
        if (ahead.get(key)?.has(row.id) === true) {
          taken = row.id;
          continue;
        }
        if (!registry.get(tenant, subscriptionId)) {
          // Deleted meanwhile: what it had pending goes with it.
          inFlight.push({ row, outcome: Promise.resolve(undefined) });
          await forget(tenant, subscriptionId, key, inFlight);
          return;
        }
        taken = row.id;
        inFlight.push({ row, outcome: outcomeOf(row) });
      }
      const head = inFlight.shift();
      if (head === undefined) return;
      const { row } = head;
      const failure = await head.outcome;
      const lane = laneOf(key);
      if (failure === undefined) {
        lastDone.set(key, row.id);
        recordDelivered(row);
        lane.isFailing = false;
        if (lane.window < WINDOW) lane.window += 1;
        continue;
      }
      lane.window = 1;
      lane.isFailing = true;
      stats.failed += 1;
      // Of the later ones in flight, those the receiver took are delivered (ahead of this one); the
      // others go again after it, uncounted.
      const again: PendingNotification[] = [];
      for (const later of inFlight.splice(0)) {
        if (await later.outcome !== undefined) {
          again.push(later.row);
          continue;
        }
        if (later.row.isQueued) aheadOf(key).add(later.row.id);
        recordDelivered(later.row);
      }
      const attempts = row.attempts + 1;
      const done = attempts >= options.maxAttempts;
      log.warn('notification failed', { subscriptionId, tenant, endpoint: row.message.uri, cause: failure, attempts, willRetry: !done });
      // The queue holds every notification of a failing subscription (its attempts counted).
      await recordFailure(row, attempts, done, failure, [...again, ...lane.list]);
      if (done) {
        stats.dropped += 1;
        log.warn('notification given up', { subscriptionId, tenant, attempts, error: failure });
        lastDone.set(key, row.id);
      } else {
        again.unshift(row);
      }
      // A complete lane's list is still all there is: the failed ones go back at its head. Otherwise
      // they are read again from the queue.
      if (lane.isComplete) lane.list.unshift(...again);
      taken = 0;
      if (done) continue;

      await pause(key, backoff(attempts));
    }
    // Stopping: what was already sent is recorded as far as it was delivered in order.
    for (const { row, outcome } of inFlight) {
      if (await outcome !== undefined) break;
      lastDone.set(key, row.id);
      recordDelivered(row);
    }
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
    const run = loop(tenant, subscriptionId)
      .catch((err: unknown) => log.error('notification delivery failed', { subscriptionId, tenant, err }))
      .finally(() => {
        loops.delete(key);
        // Queued while the loop was finishing: go again.
        if (!stopped && hasPending(tenant, subscriptionId, key)) kick(tenant, subscriptionId);
        else settleIdle();
      });
    loops.set(key, run);
  };

  const handOver = (notifications: readonly PendingNotification[]): void => {
    for (const n of notifications) {
      const key = keyOf(n.tenant, n.subscriptionId);
      const lane = laneOf(key);
      const last = lane.list[lane.list.length - 1]?.id ?? lastDone.get(key) ?? 0;
      if (n.id <= last) continue;
      hold(n);
      // A backlog: read from the queue, until its reading reaches what is handed over from now on
      // (once what the lane holds is all queued: the queue must have everything it will read).
      if (lane.list.length >= MAX_HANDED && n.isQueued && lane.list.every((m) => m.isQueued)) {
        lane.list = [];
        lane.isComplete = false;
      }
      lane.list.push(n);
      kick(n.tenant, n.subscriptionId);
    }
  };

  /** Writes every notification held only in memory to the queue. */
  const queueAll = async (): Promise<void> => {
    const all = [...lanes.values()].flatMap((l) => l.list);
    if (all.every((n) => n.isQueued)) return;
    const written = await store.write(() => queueNow(all));
    markQueued(written);
  };

  return {
    nextId: () => {
      lastId ??= store.notifications.lastId();
      lastId += 1;
      return lastId;
    },
    takesInMemory: (tenant, subscriptionId) => {
      const lane = lanes.get(keyOf(tenant, subscriptionId));
      return lane !== undefined && lane.isComplete && !lane.isFailing && lane.list.length < MAX_HANDED && heldCount < MAX_IN_MEMORY && !stopped;
    },
    heldBefore: () => {
      for (const seq of held.keys()) return seq - 1;
      return undefined;
    },
    kick,
    kickAll: () => {
      lastId ??= store.notifications.lastId();
      for (const { tenant, subscriptionId } of store.notifications.subscriptionsWithPending()) kick(tenant, subscriptionId);
    },
    handOver,
    // Rows were dropped: every subscription reads the queue again, once what it holds is queued.
    resync: () => {
      void queueAll().then(() => lanes.clear(), (err: unknown) => log.warn('notifications not queued', { err }));
    },
    idle: async () => {
      if (loops.size > 0) await new Promise<void>((resolve) => idleWaiters.push(resolve));
      flushDelivered();
      await Promise.all(writes);
    },
    stats: () => ({ ...stats, inMemory: heldCount }),
    async stop() {
      stopped = true;
      for (const t of timers.values()) clearTimeout(t);
      for (const wake of waiting.values()) wake();
      timers.clear();
      waiting.clear();
      await Promise.all(loops.values());
      flushDelivered();
      await Promise.all(writes);
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
