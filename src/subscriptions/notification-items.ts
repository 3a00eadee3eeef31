// The notifications the notifier queues: each built once per change and subscription (its body,
// and its message, kept per subscription as JSON text), a build failure recorded as a failed
// delivery; and the entities a periodic (timeInterval) notification lists.

import type { Clock, Logger } from '../lib/index.js';
import type { Entity, EntityFacts } from '../ngsi/index.js';
import type { NewNotification, Store } from '../store/index.js';
import type { QueuedMessage } from './delivery.js';
import { failureReason } from './failure-reason.js';
import { matchesEntity, type MatchCache } from './matcher.js';
import type { OwnerRights, Subscription } from './model.js';
import { buildNotification, type NotificationContext, type NotifiedEntity } from './notification.js';
import { typesSelectedBy, type SubscriptionRegistry } from './registry.js';

/** One notification to queue: its row, and its message as the dispatcher takes it. */
export interface QueueItem {
  row: NewNotification;
  message: QueuedMessage;
}

export interface ItemDeps {
  store: Pick<Store, 'entities' | 'subscriptions' | 'write'>;
  registry: Pick<SubscriptionRegistry, 'setDelivery'>;
  clock: Clock;
  log: Logger;
  contextOf(sub: Subscription): Promise<NotificationContext>;
  newId: () => string;
}

export interface ItemBuilder {
  /** The queue item of one notification, or undefined when it cannot be built (recorded as a failure). */
  itemOf(tenant: string, sub: Subscription, entities: NotifiedEntity[], now: number): Promise<QueueItem | undefined>;
}

export function createItemBuilder(deps: ItemDeps): ItemBuilder {
  const { store, registry, clock, log } = deps;
  /**
   * The last message of each subscription and its JSON text: the same for every notification of a
   * subscription while its Link and tenant are (a changed subscription is a new object).
   */
  const messages = new WeakMap<Subscription, { linkUrl: string; tenant: string; message: QueuedMessage; json: string }>();

  const messageOf = async (tenant: string, sub: Subscription, entities: NotifiedEntity[], now: number): Promise<QueueItem> => {
    const context = await deps.contextOf(sub);
    const load = (ids: string[]): Map<string, Entity> => store.entities.getMany({ tenant }, ids);
    const built = buildNotification({ subscription: sub, entities, context, now, newId: deps.newId, tenant, load });
    let known = messages.get(sub);
    if (known === undefined || known.linkUrl !== context.linkUrl || known.tenant !== tenant) {
      const { endpoint } = sub.notification;
      const message: QueuedMessage = { uri: endpoint.uri, headers: built.headers };
      if (endpoint.timeout !== undefined) message.timeout = endpoint.timeout;
      if (endpoint.notifierInfo !== undefined) message.notifierInfo = endpoint.notifierInfo;
      known = { linkUrl: context.linkUrl, tenant, message, json: JSON.stringify(message) };
      messages.set(sub, known);
    }
    const row = { tenant, subscriptionId: sub.id, queuedAt: now, message: known.json, body: JSON.stringify(built.body) };
    return { row, message: known.message };
  };

  /**
   * A notification that cannot even be built (its context cannot be loaded) is a failed delivery of
   * its subscription; the other subscriptions and changes go on.
   */
  const buildFailed = async (tenant: string, sub: Subscription, err: unknown): Promise<void> => {
    const error = failureReason(err);
    log.warn('notification not built', { subscriptionId: sub.id, tenant, endpoint: sub.notification.endpoint.uri, cause: error });
    const at = clock.now();
    const state = await store.write(() => store.subscriptions.recordDelivery(tenant, sub.id, { at, ok: false, error }));
    if (state !== undefined) registry.setDelivery(tenant, sub.id, state);
  };

  /** The queue item of one notification, or undefined when it cannot be built (recorded as a failure). */
  const itemOf = async (tenant: string, sub: Subscription, entities: NotifiedEntity[], now: number): Promise<QueueItem | undefined> => {
    try {
      return await messageOf(tenant, sub, entities, now);
    } catch (err) {
      await buildFailed(tenant, sub, err);
      return undefined;
    }
  };

  return { itemOf };
}

export interface PeriodicDeps {
  store: Pick<Store, 'entities'>;
  periodicMaxEntities: number;
  mayRead?: ((tenant: string, assignees: readonly string[], entity: EntityFacts) => boolean) | undefined;
}

/**
 * Live entities a periodic subscription notifies about, at most periodicMaxEntities: those of the
 * types it selects (by index), then checked in full by the matcher.
 */
export function periodicEntities(deps: PeriodicDeps, cache: MatchCache, tenant: string, sub: Subscription, owner: OwnerRights): Entity[] {
  const { store, periodicMaxEntities } = deps;
  const out: Entity[] = [];
  const page = 500;
  const types = typesSelectedBy(sub);
  for (let offset = 0; out.length < periodicMaxEntities; offset += page) {
    const query = { limit: page, offset, count: false, ...(types === '*' ? {} : { types }) };
    // Behaviour §8: only the entities the owner may read, with the rights it has now.
    const scope = owner.admin || deps.mayRead === undefined ? { tenant } : { tenant, assignees: owner.assignees };
    const found = store.entities.list(scope, query).entities;
    for (const e of found) if (out.length < periodicMaxEntities && matchesEntity(sub, e, cache)) out.push(e);
    if (found.length < page) break;
  }
  return out;
}
