// Delivery of queued notifications (behaviour §7): one sender loop per subscription, in queue
// order; a failure is recorded and retried with exponential backoff and jitter, a bounded number of
// times; a slow or dead receiver holds only its own subscription's queue. What is queued is also
// handed to its subscription in memory once committed: the queue is read back only after a
// restart, a failure or a backlog.

import type { Clock, Logger } from '../lib/index.js';
import type { JsonObject } from '../ngsi/index.js';
import type { QueuedNotification, Store } from '../store/index.js';
import type { KeyValuePair } from './model.js';
import type { SubscriptionRegistry } from './registry.js';
import type { MqttNotificationMessage, MqttSendOptions } from './mqtt-sender.js';
import type { HttpDelivery } from './http-sender.js';

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

/** A queued notification to deliver, its message decoded. */
export interface PendingNotification {
  /** Its id in the queue. */
  id: number;
  tenant: string;
  subscriptionId: string;
  attempts: number;
  message: QueuedMessage;
  /** JSON text, sent as it is. */
  body: string;
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
}

export interface Dispatcher {
  /** Something was queued for this subscription (or may be pending since a restart). */
  kick(tenant: string, subscriptionId: string): void;
  /** Kicks every subscription with something pending (at start). */
  kickAll(): void;
  /**
   * Notifications whose enqueueing is committed, in queue order: a subscription whose pending
   * notifications are all in memory gets them without reading the queue; every one is kicked.
   */
  handOver(notifications: readonly PendingNotification[]): void;
  /** Forgets what was handed over: every subscription reads the queue again (rows were dropped). */
  resync(): void;
  /** Resolves when no loop is sending (retries waiting count as idle only once given up or done). */
  idle(): Promise<void>;
  stats(): DeliveryStats;
  stop(): Promise<void>;
}

const keyOf = (tenant: string, id: string): string => `${tenant}\n${id}`;

/** Most notifications a subscription holds in memory; beyond, it reads them from the queue. */
const MAX_HANDED = 32;

/**
 * The notifications handed over to one subscription, oldest first: every one queued for it since
 * the first of them. Complete: nothing else is pending (after `lastDone`), so the queue need not be
 * read.
 */
interface Lane {
  list: PendingNotification[];
  isComplete: boolean;
}

function pendingOf(row: QueuedNotification): PendingNotification {
  const { id, tenant, subscriptionId, attempts, body } = row;
  // The message was written by the notifier as a QueuedMessage.
  return { id, tenant, subscriptionId, attempts, message: JSON.parse(row.message) as QueuedMessage, body };
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
  const stats: DeliveryStats = { sent: 0, failed: 0, dropped: 0 };
  let stopped = false;
  let idleWaiters: Array<() => void> = [];

  const backoff = (attempts: number): number => {
    const exp = Math.min(options.retryMaxMs, options.retryBaseMs * 2 ** Math.max(0, attempts - 1));
    // Full jitter on half of the delay: receivers coming back are not hit by every gateway at once.
    return Math.round(exp / 2 + (random() * exp) / 2);
  };

  /** Sends a queued notification; its body is the JSON text it was queued with. */
  const send = (message: QueuedMessage, body: string): Promise<void> => {
    const timeoutMs = message.timeout ?? options.timeoutMs;
    if (/^mqtts?:/i.test(message.uri)) {
      // The body was written by the notifier: a Notification object.
      const notification: unknown = JSON.parse(body);
      return deps.sendMqtt(message.uri, { metadata: message.headers, body: notification }, mqttOptionsOf(message, timeoutMs));
    }
    return deps.sendHttp({ uri: message.uri, headers: message.headers, body }, timeoutMs);
  };

  /** Per subscription, the last notification handed over whose removal may not be committed yet. */
  const lastDone = new Map<string, number>();
  /** Per subscription, what was handed over (the queue keeps every notification until delivered). */
  const lanes = new Map<string, Lane>();
  /** Removals and counters being committed, awaited on stop. */
  const writes = new Set<Promise<void>>();
  /** Deliveries not recorded yet, per subscription: recorded together, once per loop turn. */
  const delivered = new Map<string, { tenant: string; subscriptionId: string; ids: number[]; at: number }>();
  let flushScheduled = false;

  const track = (write: Promise<void>): Promise<void> => {
    const tracked = write.finally(() => writes.delete(tracked));
    writes.add(tracked);
    return tracked;
  };

  /** Records every delivery since the last flush: one removal and one counter update per subscription. */
  const flushDelivered = (): void => {
    flushScheduled = false;
    const batch = [...delivered.values()];
    delivered.clear();
    if (batch.length === 0) return;
    void track(store.write(() => batch.map((d) => {
      store.notifications.removeMany(d.ids);
      return store.subscriptions.recordDelivery(d.tenant, d.subscriptionId, { at: d.at, ok: true, count: d.ids.length });
    })).then(
      (states) => batch.forEach((d, i) => {
        const state = states[i];
        if (state !== undefined) registry.setDelivery(d.tenant, d.subscriptionId, state);
      }),
      (err: unknown) => log.warn('notification deliveries not recorded', { err }),
    ));
  };

  /**
   * A delivered notification: its removal and the counters go with the others of this loop turn.
   * NOTE: not awaited by the sender loop, so a notification does not wait for the commit of the one
   * before; the loop reads past `lastDone` meanwhile. A crash before that commit sends the
   * notification again after the restart (at least once).
   */
  const recordDelivered = (row: PendingNotification): void => {
    const key = keyOf(row.tenant, row.subscriptionId);
    const d = delivered.get(key) ?? { tenant: row.tenant, subscriptionId: row.subscriptionId, ids: [], at: 0 };
    d.ids.push(row.id);
    d.at = clock.now();
    delivered.set(key, d);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flushDelivered);
    }
  };

  /**
   * Records a failed attempt in one transaction: the notification's attempt count, or its removal
   * from the queue when `done` (given up), and the subscription's counters.
   */
  const recordFailure = (row: PendingNotification, attempts: number, done: boolean, error: string): Promise<void> => {
    const at = clock.now();
    return track(store.write(() => {
      if (done) store.notifications.remove(row.id);
      else store.notifications.setAttempts(row.id, attempts);
      return store.subscriptions.recordDelivery(row.tenant, row.subscriptionId, { at, ok: false, error });
    }).then(
      (state) => {
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
      lane = { list: [], isComplete: false };
      lanes.set(key, lane);
    }
    return lane;
  };

  /**
   * The next notification of a subscription: handed over when its lane is complete, else read from
   * the queue. The lane becomes complete once the queue has nothing older than its first one.
   */
  const nextOf = (tenant: string, subscriptionId: string, key: string): PendingNotification | undefined => {
    const lane = laneOf(key);
    if (lane.isComplete) return lane.list.shift();
    const done = lastDone.get(key) ?? 0;
    while (lane.list.length > 0 && lane.list[0]!.id <= done) lane.list.shift();
    const row = store.notifications.next(tenant, subscriptionId, done);
    // NOTE: a notification is handed over once its enqueueing is committed, so every one handed
    // over is visible to this read, and one it does not find was handed over already.
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

  const loop = async (tenant: string, subscriptionId: string): Promise<void> => {
    const key = keyOf(tenant, subscriptionId);
    while (!stopped) {
      const row = nextOf(tenant, subscriptionId, key);
      if (!row) return;
      if (!registry.get(tenant, subscriptionId)) {
        // Deleted meanwhile: what it had pending goes with it.
        await store.write(() => store.notifications.removeForSubscription(tenant, subscriptionId));
        lastDone.delete(key);
        lanes.delete(key);
        return;
      }
      let failure: string | undefined;
      try {
        await send(row.message, row.body);
      } catch (err) {
        failure = err instanceof Error ? err.message : String(err);
      }
      if (failure === undefined) {
        stats.sent += 1;
        lastDone.set(key, row.id);
        recordDelivered(row);
        continue;
      }
      // Retries are read from the queue, which counts the attempts.
      laneOf(key).isComplete = false;
      stats.failed += 1;
      const attempts = row.attempts + 1;
      if (attempts >= options.maxAttempts) {
        stats.dropped += 1;
        log.warn('notification given up', { subscriptionId, tenant, attempts, error: failure });
        lastDone.set(key, row.id);
        void recordFailure(row, attempts, true, failure);
        continue;
      }
      await recordFailure(row, attempts, false, failure);
      log.debug('notification failed; retrying', { subscriptionId, tenant, attempts, error: failure });
      await pause(key, backoff(attempts));
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
      if (lane.list.length >= MAX_HANDED) {
        // A backlog: read from the queue, until its reading reaches what is handed over from now on.
        lane.list = [];
        lane.isComplete = false;
      }
      lane.list.push(n);
      kick(n.tenant, n.subscriptionId);
    }
  };

  return {
    kick,
    kickAll: () => {
      for (const { tenant, subscriptionId } of store.notifications.subscriptionsWithPending()) kick(tenant, subscriptionId);
    },
    handOver,
    resync: () => lanes.clear(),
    idle: async () => {
      if (loops.size > 0) await new Promise<void>((resolve) => idleWaiters.push(resolve));
      flushDelivered();
      await Promise.all(writes);
    },
    stats: () => ({ ...stats }),
    async stop() {
      stopped = true;
      for (const t of timers.values()) clearTimeout(t);
      for (const wake of waiting.values()) wake();
      timers.clear();
      waiting.clear();
      await Promise.all(loops.values());
      flushDelivered();
      await Promise.all(writes);
      settleIdle();
    },
  };
}
