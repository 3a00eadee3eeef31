// Subscription use cases (NGSI-LD §5.8): create, retrieve, query, update, delete, each committed to
// the store and then reflected in the in-memory registry; and the delivery record of a notifier.

import type { Clock, IdGenerator } from '../lib/index.js';
import { ResourceNotFoundError, type Json, type Principal, type TermMapper } from '../ngsi/index.js';
import type { DeliveryOutcome, DeliveryState, Store } from '../store/index.js';
import { documentOf, fromStored, toStored } from './codec.js';
import type { SubscriptionInput } from './input.js';
import type { Subscription, SubscriptionId } from './model.js';
import { parseSubscription, patchSubscription } from './parse.js';
import type { SubscriptionRegistry } from './registry.js';

export interface SubscriptionServiceDeps {
  store: Store;
  registry: SubscriptionRegistry;
  clock: Clock;
  newId: IdGenerator;
}

/** The request's term maps and @context as given (absent: core only). */
export interface RequestContext {
  mapper: TermMapper;
  context?: Json | undefined;
}

export interface SubscriptionPage {
  items: Subscription[];
  count?: number;
}

export interface SubscriptionService {
  now(): number;
  /** §5.8.1: 409 AlreadyExists when the tenant has that id. */
  create(actor: Principal, input: SubscriptionInput, ctx: RequestContext): Subscription;
  /** §5.8.3: 404 ResourceNotFound when unknown. */
  get(actor: Principal, id: SubscriptionId): Subscription;
  /** §5.8.4, in creation order. */
  list(actor: Principal, page: { limit: number; offset: number; count: boolean }): SubscriptionPage;
  /** §5.8.2: members given replace the stored ones; 404 when unknown. */
  update(actor: Principal, id: SubscriptionId, input: SubscriptionInput, ctx: RequestContext): Subscription;
  /** §5.8.5: 404 when unknown. */
  delete(actor: Principal, id: SubscriptionId): void;
  /** Records one delivery attempt (counters, status) in the store and the registry. */
  recordDelivery(tenant: string, id: SubscriptionId, outcome: DeliveryOutcome): DeliveryState | undefined;
}

const notFound = (id: string): ResourceNotFoundError => new ResourceNotFoundError('Subscription not found', `No subscription ${id}`);

/** Every stored subscription, to fill the registry at start-up. */
export function loadSubscriptions(store: Store): Array<{ tenant: string; sub: Subscription }> {
  return store.subscriptions.listAll().map(({ tenant, sub }) => ({ tenant, sub: fromStored(sub) }));
}

export function createSubscriptionService(deps: SubscriptionServiceDeps): SubscriptionService {
  const { store, registry, clock } = deps;
  const load = (tenant: string, id: string): Subscription => {
    const stored = store.subscriptions.get(tenant, id);
    if (stored === undefined) throw notFound(id);
    return fromStored(stored);
  };
  return {
    now: () => clock.now(),
    create({ tenant }, input, ctx) {
      const sub = parseSubscription(input, { mapper: ctx.mapper, context: ctx.context, now: clock.now(), newId: deps.newId });
      store.transaction((tx) => {
        store.subscriptions.insert(tenant, toStored(sub));
        tx.onCommit(() => registry.put(tenant, sub));
      });
      return sub;
    },
    get: ({ tenant }, id) => load(tenant, id),
    list({ tenant }, page) {
      const found = store.subscriptions.list(tenant, page);
      const out: SubscriptionPage = { items: found.items.map(fromStored) };
      if (found.count !== undefined) out.count = found.count;
      return out;
    },
    update({ tenant }, id, input, ctx) {
      return store.transaction((tx) => {
        const next = patchSubscription(load(tenant, id), input, { mapper: ctx.mapper, now: clock.now() });
        store.subscriptions.replace(tenant, id, documentOf(next), next.modifiedAt);
        tx.onCommit(() => registry.put(tenant, next));
        return next;
      });
    },
    delete({ tenant }, id) {
      store.transaction((tx) => {
        if (!store.subscriptions.delete(tenant, id)) throw notFound(id);
        tx.onCommit(() => registry.remove(tenant, id));
      });
    },
    recordDelivery(tenant, id, outcome) {
      const state = store.transaction(() => store.subscriptions.recordDelivery(tenant, id, outcome));
      if (state !== undefined) registry.setDelivery(tenant, id, state);
      return state;
    },
  };
}
