// The notifier (NGSI-LD §5.11): follows the change journal with its own cursor, matches each change
// against its candidate subscriptions, and builds one notification per change and matching
// subscription. Those of a subscription whose receiver keeps up go to delivery in memory, and the
// saved cursor waits for them; the others are queued in the transaction that moves the cursor past
// their changes. Nothing committed is missed across a crash (at least once). Periodic
// (timeInterval) subscriptions are notified by a job.

import type { ChangeEvent } from '../events.js';
import type { Logger } from '../lib/index.js';
import { entityFactsOf, type Entity, type EntityFacts, type HistoryInstance } from '../ngsi/index.js';
import type { JournalFeed, Store } from '../store/index.js';
import {
  createDispatcher, type DeliveryDeps, type Dispatcher, type DeliveryOptions, type DeliveryStats, type PendingNotification,
} from './delivery.js';
import { createCsourceNotifications, type CsourceNotifications, type RegistrationLens } from './csource-notifications.js';
import { createMatchCache, matchSubscription, type SubscriptionMatch } from './matcher.js';
import { changeTriggers } from './triggers.js';
import { statusOf, type OwnerRights, type Subscription } from './model.js';
import type { NotificationContext, NotifiedEntity } from './notification.js';
import { createItemBuilder, periodicEntities, type QueueItem } from './notification-items.js';
import type { SubscriptionOwners } from './owners.js';
import type { SubscriptionRegistry } from './registry.js';

/** The journal reader name of the notifier. */
export const NOTIFIER_READER = 'notifier';

export interface NotifierOptions extends DeliveryOptions {
  /** Most notifications pending at once; beyond, the oldest are dropped (logged and counted). */
  maxPending: number;
  /** Most entities a periodic notification lists. */
  periodicMaxEntities: number;
}

export interface NotifierDeps extends Omit<DeliveryDeps, 'store' | 'options' | 'registry'> {
  store: Pick<Store, 'journal' | 'notifications' | 'subscriptions' | 'write' | 'entities' | 'registrations'>;
  registry: SubscriptionRegistry;
  /**
   * Context source registration subscriptions (NGSI-LD §5.11): their registry, and what the
   * notifier knows of registrations. Absent: registration changes notify nobody.
   */
  csource?: { registry: SubscriptionRegistry; lens: RegistrationLens };
  /** The journal's reader, on which the notifier registers (reader `notifier`). */
  feed: JournalFeed;
  /** The context a subscription's notifications are compacted with. */
  contextOf(sub: Subscription): Promise<NotificationContext>;
  newId: () => string;
  options: NotifierOptions;
  /**
   * Whether assignees may read an entity (behaviour §8: a notification carries only entities its
   * subscription's owner may read); absent: authentication is off.
   */
  mayRead?: (tenant: string, assignees: readonly string[], entity: EntityFacts) => boolean;
  /** With authentication on: the rights of each subscription's owner now, and why one is suspended. */
  owners?: SubscriptionOwners;
}

/**
 * Whether the owner of `sub` may read the entity of a change, with the rights it has now (always,
 * without authentication); never for a suspended subscription.
 */
function ownerMayRead(deps: Pick<NotifierDeps, 'mayRead' | 'owners'>, sub: Subscription, change: ChangeEvent): boolean {
  if (deps.mayRead === undefined || deps.owners === undefined) return true;
  const rights = deps.owners.rightsOf(sub);
  if (rights === undefined) return false;
  if (rights.admin) return true;
  return deps.mayRead(change.tenant, rights.assignees, entityFactsOf(change.id, change.entity ?? change.previous));
}

export interface NotifierStats extends DeliveryStats {
  queued: number;
  /** Dropped because the queue was full. */
  overflowed: number;
  /** Waiting for delivery: queued, or in memory only. */
  pending: number;
}

export interface Notifier {
  /** Starts following the journal (from where it stopped) and delivering what is pending. */
  start(): void;
  /** Queues the notifications of periodic subscriptions that are due at `now`; returns how many. */
  runPeriodic(now: number): Promise<number>;
  /**
   * NGSI-LD §5.11.7: a registration subscription was created or updated: queues a notification of
   * every registration that matches it now (none when none does).
   */
  notifyMatching(tenant: string, sub: Subscription): Promise<void>;
  /** Resolves once every committed change is matched and no delivery loop is running. */
  idle(): Promise<void>;
  /** Records the deliveries answered so far now (not at the next flush); resolves once committed. */
  settled(): Promise<void>;
  stats(): NotifierStats;
  stop(): Promise<void>;
}

const keyOf = (tenant: string, id: string): string => `${tenant}\n${id}`;

function notifiedOf(change: ChangeEvent, match: SubscriptionMatch): NotifiedEntity {
  const { entity, deleted } = match;
  if (deleted) {
    const fired = match.attributes.filter((a) => a.trigger === 'attributeDeleted').map((a) => a.attr);
    return { entity, deletedAt: change.at, deletedAttributes: { attrs: fired, at: change.at } };
  }
  const out: NotifiedEntity = { entity };
  if (change.previous !== undefined) out.previous = change.previous;
  if (change.deleted.length > 0) out.deletedAttributes = { attrs: change.deleted, at: change.at };
  return out;
}

/** The entity as it is now, with the attribute instances a change wrote as it wrote them. */
export function asWritten(entity: Entity, instances: readonly HistoryInstance[]): Entity {
  if (instances.length === 0) return entity;
  const attrs = { ...entity.attrs };
  for (const { attr, datasetId, attribute } of instances) {
    // A deletion instance: the change removed it, and so does the entity now (or a later write re-created it).
    if (attribute === undefined) continue;
    const others = (attrs[attr] ?? []).filter((a) => a.datasetId !== datasetId);
    attrs[attr] = [...others, attribute];
  }
  return { ...entity, attrs };
}

/** What the notifier has queued, and dropped because the queue was full. */
interface DispatchCounts {
  queued: number;
  overflowed: number;
}

type Dispatch = (items: ReadonlyArray<QueueItem & { seq?: number }>, upTo?: number) => Promise<void>;

interface DispatchDeps {
  store: Pick<Store, 'journal' | 'notifications' | 'write'>;
  dispatcher: Dispatcher;
  log: Logger;
  maxPending: number;
}

function createDispatch(deps: DispatchDeps, counts: DispatchCounts): Dispatch {
  const { store, dispatcher, log, maxPending } = deps;
  /**
   * Hands the notifications of `items` over to their delivery: in memory only for a subscription
   * whose receiver keeps up (`seq`: the change they notify, which the cursor then waits for), the
   * others once queued (group-committed with the writes of the same turn: no commit of its own).
   */
  return async (items, upTo) => {
    const inMemory = new Map<string, boolean>();
    const memory: PendingNotification[] = [];
    const durable: PendingNotification[] = [];
    for (const { row, message, seq } of items) {
      const key = keyOf(row.tenant, row.subscriptionId);
      // One decision per subscription for the whole batch, so that its notifications keep their order.
      let takes = inMemory.get(key);
      if (takes === undefined) {
        takes = seq !== undefined && dispatcher.takesInMemory(row.tenant, row.subscriptionId);
        inMemory.set(key, takes);
      }
      const pending: PendingNotification = {
        id: dispatcher.nextId(), tenant: row.tenant, subscriptionId: row.subscriptionId, attempts: 0, queuedAt: row.queuedAt,
        message, messageJson: row.message, body: row.body, isQueued: !takes,
      };
      if (takes && seq !== undefined) pending.seq = seq;
      (takes ? memory : durable).push(pending);
    }
    counts.queued += items.length;
    if (memory.length > 0) dispatcher.handOver(memory);
    if (durable.length === 0) return;
    const trimmed = await store.write(() => {
      store.notifications.persist(durable.map(({ id, tenant, subscriptionId, attempts, queuedAt, messageJson, body }) => (
        { id, tenant, subscriptionId, attempts, queuedAt, message: messageJson, body })));
      // The cursor moves past the changes just queued (not past those held in memory), so that a
      // crash after this commit does not notify them again.
      if (upTo !== undefined) store.journal.setCursor(NOTIFIER_READER, Math.min(upTo, dispatcher.heldBefore() ?? upTo));
      return store.notifications.trimTo(maxPending);
    });
    if (trimmed > 0) {
      counts.overflowed += trimmed;
      log.warn('notification queue full: oldest notifications dropped', { count: trimmed, max: maxPending });
      dispatcher.resync();
    }
    dispatcher.handOver(durable);
  };
}

/** A change with the entity it concerns: as announced, or (read back) as it is now with what the change wrote. */
function withEntity(store: Pick<Store, 'entities'>, c: ChangeEvent): ChangeEvent {
  if (c.entity !== undefined || c.kind === 'entityDeleted' || c.kind === 'registrationChanged') return c;
  const entity = store.entities.get({ tenant: c.tenant }, c.id);
  return entity === undefined ? c : { ...c, entity: asWritten(entity, c.instances) };
}

/** The notifications of registration subscriptions; undefined when the notifier has none. */
function csourceOf(deps: NotifierDeps): CsourceNotifications | undefined {
  if (deps.csource === undefined) return undefined;
  const { owners } = deps;
  return createCsourceNotifications({
    ...deps.csource, store: deps.store, contextOf: deps.contextOf, newId: deps.newId, log: deps.log,
    rightsOf: owners === undefined ? undefined : (sub) => owners.rightsOf(sub),
  });
}

/** Both registries as delivery sees them: a subscription of either kind is looked up and kept in step. */
function deliveryRegistry(registry: SubscriptionRegistry, other: SubscriptionRegistry | undefined): DeliveryDeps['registry'] {
  if (other === undefined) return registry;
  return {
    get: (tenant, id) => registry.get(tenant, id) ?? other.get(tenant, id),
    setDelivery(tenant, id, state) {
      registry.setDelivery(tenant, id, state);
      other.setDelivery(tenant, id, state);
    },
  };
}

/** NGSI-LD §5.2.12 timeInterval: the notifications of the periodic subscriptions due at `now` (every that many seconds). */
async function duePeriodic(
  subs: ReadonlyArray<{ tenant: string; sub: Subscription }>, lastQueued: Map<string, number>, now: number,
  build: (tenant: string, sub: Subscription) => Promise<QueueItem | undefined>,
): Promise<QueueItem[]> {
  const items: QueueItem[] = [];
  for (const { tenant, sub } of subs) {
    if (sub.timeInterval === undefined || statusOf(sub, now) !== 'active') continue;
    const key = keyOf(tenant, sub.id);
    const last = lastQueued.get(key) ?? sub.delivery.lastNotification;
    if (last !== undefined && now - last < sub.timeInterval * 1000) continue;
    lastQueued.set(key, now);
    const item = await build(tenant, sub);
    if (item !== undefined) items.push(item);
  }
  return items;
}

export function createNotifier(deps: NotifierDeps): Notifier {
  const { store, registry, clock, log, options } = deps;
  const both = deliveryRegistry(registry, deps.csource?.registry);
  const dispatcher = createDispatcher({ ...deps, registry: both, options });
  const csource = csourceOf(deps);
  const cache = createMatchCache();
  /** When each subscription last had a notification queued (throttling and timeInterval). */
  const lastQueued = new Map<string, number>();

  const { itemOf } = createItemBuilder({ ...deps, registry: both });

  const counts: DispatchCounts = { queued: 0, overflowed: 0 };
  const dispatch = createDispatch({ store, dispatcher, log, maxPending: options.maxPending }, counts);

  const handle = async (changes: ChangeEvent[]): Promise<void> => {
    const items: Array<QueueItem & { seq: number }> = [];
    for (const change of changes) {
      // NOTE: registration changes are rare: they leave the entity path here, before any lookup.
      if (change.kind === 'registrationChanged') {
        if (csource !== undefined) for (const item of await csource.ofChange(change, clock.now())) items.push({ ...item, seq: change.seq });
        continue;
      }
      // A change is matched as of when it was committed (expiry, throttling), whenever it is read.
      const at = change.at;
      const candidates = registry.candidates(change);
      const fired = candidates.length > 0 ? changeTriggers(change) : undefined;
      for (const sub of candidates) {
        const key = keyOf(change.tenant, sub.id);
        const match = matchSubscription(sub, change, { now: at, lastNotification: lastQueued.get(key), fired, cache });
        if (!match || !ownerMayRead(deps, sub, change)) continue;
        lastQueued.set(key, at);
        const item = await itemOf(change.tenant, sub, [notifiedOf(change, match)], clock.now());
        if (item !== undefined) items.push({ ...item, seq: change.seq });
      }
    }
    if (items.length > 0) await dispatch(items, changes[changes.length - 1]!.seq);
  };

  const follower = deps.feed.register({
    reader: NOTIFIER_READER, saveEveryMs: 1_000, read: { entities: false, instances: true },
    // The cursor stays before the changes whose notifications are only in memory.
    savable: () => dispatcher.heldBefore() ?? Number.MAX_SAFE_INTEGER,
    // NOTE: with no subscription at all, no committed change can notify.
    ignoresAll: () => registry.size() === 0 && (csource === undefined || csource.size() === 0),
    // NOTE: a change read back from the journal has only references; the event emitted after its
    // commit has the entity as that change left it, and the feed hands that event while it keeps
    // it. A change without its event (read again after a restart) shows the entity as it is now,
    // with the attributes the change wrote as it wrote them.
    handle: (changes) => handle(changes.map((c) => withEntity(store, c))),
  });

  return {
    start() {
      follower.start();
      dispatcher.kickAll();
    },

    async runPeriodic(now) {
      const rightsOf = (sub: Subscription): OwnerRights | undefined => (deps.owners === undefined ? { admin: true, assignees: [] } : deps.owners.rightsOf(sub));
      // Suspended (no owner, or its owner was deleted): not notified.
      const entityDue = registry.periodic().filter(({ sub }) => rightsOf(sub) !== undefined);
      const items = await duePeriodic(entityDue, lastQueued, now, async (tenant, sub) => {
        const rights = rightsOf(sub);
        const entities = rights === undefined ? []
          : periodicEntities({ store, periodicMaxEntities: options.periodicMaxEntities, mayRead: deps.mayRead }, cache, tenant, sub, rights);
        return entities.length === 0 ? undefined : itemOf(tenant, sub, entities.map((entity) => ({ entity })), now);
      });
      if (csource !== undefined) items.push(...await duePeriodic(csource.periodic(), lastQueued, now, (tenant, sub) => csource.ofMatching(tenant, sub, now)));
      if (items.length > 0) await dispatch(items);
      return items.length;
    },

    async notifyMatching(tenant, sub) {
      if (csource === undefined) return;
      const now = clock.now();
      // A periodic subscription's first notification is this one; the next comes timeInterval later.
      if (sub.timeInterval !== undefined) lastQueued.set(keyOf(tenant, sub.id), now);
      const item = await csource.ofMatching(tenant, sub, now);
      if (item !== undefined) await dispatch([item]);
    },

    settled: () => dispatcher.settled(),
    async idle() {
      await follower.idle();
      await dispatcher.idle();
      follower.save();
    },
    stats: () => {
      const delivery = dispatcher.stats();
      return { ...delivery, queued: counts.queued, overflowed: counts.overflowed, pending: store.notifications.size() + delivery.inMemory };
    },
    async stop() {
      await follower.stop();
      // The dispatcher queues what it still holds in memory; the cursor can then move past it.
      await dispatcher.stop();
      follower.save();
    },
  };
}
