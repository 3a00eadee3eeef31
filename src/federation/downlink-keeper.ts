// The downlink's subscription upstream (edge spec §7, NGSI-LD §5.8): created on the cloud broker for
// the attributes of federation.downlink, renewed before it expires (§5.8.2 Update Subscription),
// created again when the cloud forgot it (404 on renewal or on the periodic check, §5.8.3), and kept
// in the store (id, topic) so that a restart renews the same one instead of leaving it behind.
// A tick on the clock drives every step; failures back off.

import type { Clock, Logger } from '../lib/index.js';
import { formatDateTime, contextLinkValue, type JsonObject } from '../ngsi/index.js';
import type { DownlinkRecord, Store } from '../store/index.js';
import { recordFailure, type RetryState } from './backoff.js';
import type { UpstreamClient, UpstreamReply } from './client.js';
import { UpstreamError } from './errors.js';
import { describeReply } from './replies.js';

const SUBSCRIPTIONS = '/ngsi-ld/v1/subscriptions';
const TICK_MS = 250;

/** Where the cloud broker sends the notifications. */
export type DownlinkTarget =
  | { kind: 'mqtt'; /** mqtt[s]://[user:pass@]host:port, as given to the cloud. */ url: string }
  | { kind: 'http'; /** The route's URL on this gateway. */ url: string; token: string };

export interface DownlinkKeeperOptions {
  /** Type and attribute names as the upstream context names them. */
  types: readonly string[];
  attributes: readonly string[];
  idPattern: string;
  target: DownlinkTarget;
  /** The topic option ('' : edgeld/downlink/<the subscription's random part>). */
  topic: string;
  /** What the subscription is made for: another value makes a new one. */
  targetKey: string;
  lifetimeMs: number;
  renewBeforeMs: number;
  checkIntervalMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

export interface DownlinkKeeperDeps {
  client: UpstreamClient;
  store: Pick<Store, 'federation' | 'write'>;
  /** The URL of the upstream context (the Link of every request). */
  linkUrl(): Promise<string>;
  options: DownlinkKeeperOptions;
  clock: Clock;
  log: Logger;
  newId: () => string;
  random?: () => number;
}

/** What the status shows of the subscription upstream. */
export interface DownlinkSubscriptionStatus {
  id: string;
  topic: string;
  /** Whether the upstream holds it, as far as the last answer said. */
  subscribed: boolean;
  expiresAt: number | undefined;
  lastError: { at: number; message: string } | undefined;
  failures: number;
}

export interface DownlinkKeeper {
  /** The subscription's id and topic (made and stored at once when none is kept). */
  readonly record: DownlinkRecord;
  start(): void;
  status(): DownlinkSubscriptionStatus;
  stop(): Promise<void>;
}

const isOk = (status: number): boolean => status >= 200 && status < 300;

/** The subscription body (NGSI-LD §5.2.12): the selected attributes of the selected entities, normalized, with system attributes. */
function subscriptionBody(record: DownlinkRecord, options: DownlinkKeeperOptions, expiresAt: number): JsonObject {
  const { target } = options;
  const endpoint: JsonObject = target.kind === 'mqtt'
    ? { uri: `${target.url.replace(/\/+$/, '')}/${record.topic}`, accept: 'application/json', notifierInfo: [{ key: 'MQTT-QoS', value: '1' }] }
    : { uri: target.url, accept: 'application/json', receiverInfo: [{ key: 'Authorization', value: `Bearer ${target.token}` }] };
  return {
    id: record.subscriptionId, type: 'Subscription', subscriptionName: `edgeld downlink ${record.topic}`,
    entities: options.types.map((type) => (options.idPattern === '' ? { type } : { type, idPattern: options.idPattern })),
    watchedAttributes: [...options.attributes],
    notification: { attributes: [...options.attributes], format: 'normalized', sysAttrs: true, endpoint },
    expiresAt: formatDateTime(expiresAt),
  };
}

/** The kept record when it was made for this target, else a new one (stored). */
function recordOf(deps: DownlinkKeeperDeps): { record: DownlinkRecord; previous: DownlinkRecord | undefined; isNew: boolean } {
  const { store, options } = deps;
  const kept = store.federation.downlink();
  if (kept !== undefined && kept.target === options.targetKey) return { record: kept, previous: undefined, isNew: false };
  const random = deps.newId().replace(/[^A-Za-z0-9]/g, '');
  const record: DownlinkRecord = {
    subscriptionId: `urn:ngsi-ld:Subscription:edgeld-downlink:${random}`, topic: options.topic || `edgeld/downlink/${random}`, target: options.targetKey, expiresAt: undefined,
  };
  return { record, previous: kept, isNew: true };
}

type Send = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: JsonObject) => Promise<UpstreamReply>;

interface KeeperState extends RetryState {
  /** undefined: not known yet (after a start, the check finds out). */
  subscribed: boolean | undefined;
  expiresAt: number | undefined;
  lastCheckAt: number;
}

export function createDownlinkKeeper(deps: DownlinkKeeperDeps): DownlinkKeeper {
  const { client, store, options, clock, log } = deps;
  const random = deps.random ?? Math.random;
  const made = recordOf(deps);
  const { record } = made;
  let previous = made.previous;
  const state: KeeperState = {
    subscribed: undefined, expiresAt: record.expiresAt, lastCheckAt: 0, nextAttemptAt: 0, failures: 0, failuresTotal: 0, lastError: undefined,
  };
  const abort = new AbortController();
  let busy: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const send: Send = async (method, path, body) => {
    const link = contextLinkValue(await deps.linkUrl());
    return client.send({ method, path, link, signal: abort.signal, ...(body !== undefined ? { body } : {}) });
  };

  const save = async (expiresAt: number | undefined): Promise<void> => {
    record.expiresAt = expiresAt;
    await store.write(() => store.federation.saveDownlink(record));
  };

  const { create, renew, check } = subscriptionOps({ send, record, state, options, log, save });

  const step = async (now: number): Promise<void> => {
    if (previous !== undefined) {
      await removePrevious(send, previous, log);
      previous = undefined;
    }
    if (state.subscribed === undefined) return state.expiresAt === undefined ? create(now) : check(now);
    if (!state.subscribed) return create(now);
    if (state.expiresAt !== undefined && now >= state.expiresAt - options.renewBeforeMs) return renew(now);
    if (now >= state.lastCheckAt + options.checkIntervalMs) return check(now);
  };

  const isDue = (now: number): boolean => state.subscribed !== true
    || (state.expiresAt !== undefined && now >= state.expiresAt - options.renewBeforeMs) || now >= state.lastCheckAt + options.checkIntervalMs;

  const failed = (err: unknown): void => {
    const now = clock.now();
    const { message, delay } = recordFailure(state, err, now, options, random);
    if (state.expiresAt !== undefined && now >= state.expiresAt) state.subscribed = false;
    log.warn('downlink subscription upstream failed; retrying', { error: message, failures: state.failures, retryInMs: delay });
  };

  const tick = (): void => {
    const now = clock.now();
    const isWaiting = now < state.nextAttemptAt && state.nextAttemptAt - now <= options.retryMaxMs;
    if (busy !== undefined || stopped || isWaiting || !isDue(now)) return;
    busy = step(now).then(() => {
      state.failures = 0;
      state.nextAttemptAt = 0;
    }, (err: unknown) => {
      if (!stopped) failed(err);
    }).finally(() => {
      busy = undefined;
    });
  };

  return {
    record,
    start() {
      // Kept before it is asked for: a crash after the cloud made it still renews this one after the restart.
      if (made.isNew) store.write(() => store.federation.saveDownlink(record)).catch((err: unknown) => log.warn('downlink subscription not kept in the store', { err }));
      timer = setInterval(tick, TICK_MS);
      timer.unref();
      tick();
    },
    status: () => ({
      id: record.subscriptionId, topic: record.topic, subscribed: state.subscribed === true, expiresAt: state.subscribed === true ? state.expiresAt : undefined,
      lastError: state.lastError, failures: state.failuresTotal,
    }),
    async stop() {
      stopped = true;
      clearInterval(timer);
      abort.abort();
      await busy;
    },
  };
}

interface OpsContext {
  send: Send;
  record: DownlinkRecord;
  state: KeeperState;
  options: DownlinkKeeperOptions;
  log: Logger;
  save(expiresAt: number | undefined): Promise<void>;
}

/** Create, renew and check the subscription upstream, each recording what the upstream answered. */
function subscriptionOps(ctx: OpsContext): { create(now: number): Promise<void>; renew(now: number): Promise<void>; check(now: number): Promise<void> } {
  const { send, record, state, options, log, save } = ctx;
  const item = `${SUBSCRIPTIONS}/${encodeURIComponent(record.subscriptionId)}`;
  /** NGSI-LD §5.8.1 Create Subscription; one left by an earlier run (409) is updated whole (§5.8.2). */
  const create = async (now: number): Promise<void> => {
    const expiresAt = now + options.lifetimeMs;
    const body = subscriptionBody(record, options, expiresAt);
    let reply = await send('POST', SUBSCRIPTIONS, body);
    if (reply.status === 409) {
      const { id: _id, type: _type, ...members } = body;
      reply = await send('PATCH', item, members);
    }
    if (!isOk(reply.status)) throw new UpstreamError(`downlink subscription ${record.subscriptionId}: ${describeReply(reply.status, reply.body, reply.text)}`);
    log.info('downlink subscription created upstream', { id: record.subscriptionId, topic: record.topic, expiresAt: formatDateTime(expiresAt) });
    Object.assign(state, { subscribed: true, expiresAt, lastCheckAt: now });
    await save(expiresAt);
  };

  /** NGSI-LD §5.8.2: a later expiresAt; forgotten upstream (404) it is created again. */
  const renew = async (now: number): Promise<void> => {
    const expiresAt = now + options.lifetimeMs;
    const reply = await send('PATCH', item, { expiresAt: formatDateTime(expiresAt) });
    if (reply.status === 404) {
      log.warn('the upstream broker forgot the downlink subscription: creating it again', { id: record.subscriptionId });
      return create(now);
    }
    if (!isOk(reply.status)) throw new UpstreamError(`downlink subscription ${record.subscriptionId}: ${describeReply(reply.status, reply.body, reply.text)}`);
    Object.assign(state, { subscribed: true, expiresAt, lastCheckAt: now });
    await save(expiresAt);
  };

  /** NGSI-LD §5.8.3 Retrieve Subscription: still held (and not expired), or created again. */
  const check = async (now: number): Promise<void> => {
    const reply = await send('GET', item);
    if (reply.status === 404) {
      if (state.subscribed !== undefined) log.warn('the upstream broker forgot the downlink subscription: creating it again', { id: record.subscriptionId });
      return create(now);
    }
    if (!isOk(reply.status)) throw new UpstreamError(`downlink subscription ${record.subscriptionId}: ${describeReply(reply.status, reply.body, reply.text)}`);
    state.subscribed = true;
    state.lastCheckAt = now;
    if (state.subscribed && state.expiresAt !== undefined && now < state.expiresAt - options.renewBeforeMs) return;
    return renew(now);
  };

  return { create, renew, check };
}

/** The subscription made for an earlier configuration is removed upstream (best effort: it expires anyway). */
async function removePrevious(send: Send, previous: DownlinkRecord, log: Logger): Promise<void> {
  try {
    const reply = await send('DELETE', `${SUBSCRIPTIONS}/${encodeURIComponent(previous.subscriptionId)}`);
    if (isOk(reply.status) || reply.status === 404) log.info('downlink subscription of an earlier configuration removed upstream', { id: previous.subscriptionId });
  } catch (err) {
    log.warn('downlink subscription of an earlier configuration not removed; it expires by itself', { id: previous.subscriptionId, error: err instanceof Error ? err.message : String(err) });
  }
}
