// The shapes delivery works with: what a queued notification carries, the notifications pending
// in memory or in the queue, each subscription's lane, and what every part of delivery shares.

import type { Clock, Logger } from '../lib/index.js';
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
  /** Where a subscription is looked up (gone: its notifications go too) and its delivery members kept in step. */
  registry: Pick<SubscriptionRegistry, 'get' | 'setDelivery'>;
  sendHttp(delivery: HttpDelivery, timeoutMs: number): Promise<void>;
  sendMqtt(uri: string, message: MqttNotificationMessage, opts: MqttSendOptions): Promise<void>;
  clock: Clock;
  log: Logger;
  options: DeliveryOptions;
  /** Random in [0, 1) for the backoff jitter. */
  random?: () => number;
  /**
   * Why a notification of this subscription may not be sent now (checked before each send); such a
   * notification is given up at once and the subscription's status records why. Absent: any may.
   */
  refusal?: ((tenant: string, subscriptionId: string, uri: string) => string | undefined) | undefined;
}

export interface DeliveryStats {
  sent: number;
  failed: number;
  dropped: number;
  /** Waiting for delivery in memory only (not queued). */
  inMemory: number;
}

export const keyOf = (tenant: string, id: string): string => `${tenant}\n${id}`;

/** Most notifications a subscription holds in memory; beyond, it reads them from the queue. */
export const MAX_HANDED = 1_024;
/** Most notifications held only in memory, all subscriptions together; beyond, they are queued. */
export const MAX_IN_MEMORY = 2_048;
/** Most notifications of one subscription sent ahead of the outcome of the oldest. */
export const WINDOW = 64;
/** Deliveries are recorded (counters, queue removals) at most this often. */
export const FLUSH_EVERY_MS = 50;

/**
 * The notifications handed over to one subscription, oldest first: every one queued for it since
 * the first of them. Complete: nothing else is pending (after `lastDone`), so the queue need not be
 * read.
 */
export interface Lane {
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

export function pendingOf(row: QueuedNotification): PendingNotification {
  const { id, tenant, subscriptionId, attempts, queuedAt, body } = row;
  // The message was written by the notifier as a QueuedMessage.
  const message = JSON.parse(row.message) as QueuedMessage;
  return { id, tenant, subscriptionId, attempts, queuedAt, message, messageJson: row.message, body, isQueued: true };
}

export function rowOf(n: PendingNotification): QueuedNotification {
  const { id, tenant, subscriptionId, attempts, queuedAt, messageJson, body } = n;
  return { id, tenant, subscriptionId, attempts, queuedAt, message: messageJson, body };
}

export function mqttOptionsOf(message: QueuedMessage, timeoutMs: number): MqttSendOptions {
  const info = new Map((message.notifierInfo ?? []).map((p) => [p.key, p.value]));
  const qos = Number(info.get('MQTT-QoS') ?? '0');
  const version = info.get('MQTT-Version') === 'mqtt5.0' ? 'mqtt5.0' : 'mqtt3.1.1';
  return { qos: qos === 1 || qos === 2 ? qos : 0, version, timeoutMs };
}

/** What the parts of delivery share, per subscription (by keyOf). */
export interface DeliveryLanes {
  /** The last notification handed over whose removal may not be committed yet. */
  lastDone: Map<string, number>;
  /** What was handed over (the queue keeps what is queued until delivered). */
  lanes: Map<string, Lane>;
  /**
   * Notifications delivered ahead of an older one that failed: skipped when the queue is read
   * again, until their removal is committed.
   */
  ahead: Map<string, Set<number>>;
  stats: Omit<DeliveryStats, 'inMemory'>;
}

export function createDeliveryLanes(): DeliveryLanes {
  return { lastDone: new Map(), lanes: new Map(), ahead: new Map(), stats: { sent: 0, failed: 0, dropped: 0 } };
}
