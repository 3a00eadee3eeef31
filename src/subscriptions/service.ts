// Subscription use cases (NGSI-LD §5.8): create, retrieve, query, update, delete, each committed to
// the store and then reflected in the in-memory registry; and the delivery record of a notifier.

import type { Clock, IdGenerator } from '../lib/index.js';
import { AccessDeniedError, BadRequestDataError, ResourceNotFoundError, type Json, type Principal, type TermMapper } from '../ngsi/index.js';
import type { DeliveryOutcome, DeliveryState, Store } from '../store/index.js';
import { documentOf, fromStored, toStored } from './codec.js';
import type { SubscriptionInput } from './input.js';
import type { Subscription, SubscriptionId } from './model.js';
import { parseSubscription, patchSubscription } from './parse.js';
import type { SubscriptionOwners } from './owners.js';
import type { SubscriptionRegistry } from './registry.js';

export interface SubscriptionServiceDeps {
  store: Store;
  registry: SubscriptionRegistry;
  clock: Clock;
  newId: IdGenerator;
  /**
   * Why an actor may not name this notification endpoint (undefined: it may); a broker-wide rule
   * injected by the composition root (an MQTT endpoint on the embedded broker). Absent: any.
   */
  checkEndpoint?: (actor: Principal, uri: string) => string | undefined;
  /** The service of context source registration subscriptions (NGSI-LD §5.11) rather than entity ones. */
  csource?: boolean;
  /** A subscription was created or updated (after commit): a registration subscription notifies what matches it now (§5.11.7). */
  onWritten?: (tenant: string, sub: Subscription) => void;
  /** Resolves once the deliveries answered so far are recorded (the notifier's). */
  settle?: () => Promise<void>;
  /** With authentication on: which subscriptions are suspended (no owner, or a deleted one). */
  owners?: SubscriptionOwners | undefined;
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
  /** Resolves once every notification answered so far is counted in its subscription's delivery members. */
  settled(): Promise<void>;
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
  /** Why a subscription is suspended (not notified until an administrator adopts it); undefined: it is not. */
  suspension(sub: Subscription): string | undefined;
  /** Records one delivery attempt (counters, status) in the store and the registry. */
  recordDelivery(tenant: string, id: SubscriptionId, outcome: DeliveryOutcome): DeliveryState | undefined;
}

const notFound = (id: string): ResourceNotFoundError => new ResourceNotFoundError('Subscription not found', `No subscription ${id}`);

/** Every stored subscription, to fill the registry at start-up: entity ones, or with `csource` registration ones. */
export function loadSubscriptions(store: Store, csource = false): Array<{ tenant: string; sub: Subscription }> {
  return store.subscriptions.listAll().filter(({ sub }) => (sub.csource === true) === csource).map(({ tenant, sub }) => ({ tenant, sub: fromStored(sub) }));
}

export function createSubscriptionService(deps: SubscriptionServiceDeps): SubscriptionService {
  const { store, registry, clock } = deps;
  const csource = deps.csource === true;
  const load = (tenant: string, id: string): Subscription => {
    const stored = store.subscriptions.get(tenant, id);
    // Entity and registration subscriptions are two resources: neither finds the other's.
    if (stored === undefined || (stored.csource === true) !== csource) throw notFound(id);
    return fromStored(stored);
  };
  const written = (tenant: string, sub: Subscription): void => deps.onWritten?.(tenant, sub);
  /** Behaviour §8: others than its owner (and administrators) get 403; existence is told first (404). */
  const owned = (actor: Principal, sub: Subscription): Subscription => {
    if (actor.admin || (sub.owner !== undefined && sub.owner.subject === actor.subject)) return sub;
    throw new AccessDeniedError('Access denied', `Subscription ${sub.id} belongs to another subject`);
  };
  const checkEndpoint = (actor: Principal, sub: Subscription): void => {
    const why = deps.checkEndpoint?.(actor, sub.notification.endpoint.uri);
    if (why !== undefined) throw new BadRequestDataError('Notification endpoint not allowed', why);
  };
  /**
   * A suspended subscription (no owner, or a deleted one) updated by an administrator becomes that
   * administrator's: it is notified again, with the administrator's rights.
   */
  const adopted = (actor: Principal, previous: Subscription, next: Subscription): Subscription => {
    if (!actor.admin || actor.subject === undefined || deps.owners?.suspension(previous) === undefined) return next;
    return { ...next, owner: { subject: actor.subject, admin: actor.admin, assignees: [...actor.assignees] } };
  };
  return {
    now: () => clock.now(),
    settled: async () => {
      await deps.settle?.();
    },
    suspension: (sub) => deps.owners?.suspension(sub),
    create(actor, input, ctx) {
      const { tenant } = actor;
      const parsed = parseSubscription(input, { mapper: ctx.mapper, context: ctx.context, now: clock.now(), newId: deps.newId, csource });
      checkEndpoint(actor, parsed);
      // Behaviour §8: a subscription belongs to its creator.
      const sub = actor.subject === undefined ? parsed
        : { ...parsed, owner: { subject: actor.subject, admin: actor.admin, assignees: [...actor.assignees] } };
      store.transaction((tx) => {
        store.subscriptions.insert(tenant, toStored(sub));
        tx.onCommit(() => {
          registry.put(tenant, sub);
          written(tenant, sub);
        });
      });
      return sub;
    },
    get: (actor, id) => owned(actor, load(actor.tenant, id)),
    list(actor, page) {
      const found = store.subscriptions.list(actor.tenant, page, actor.admin ? undefined : actor.subject ?? '', csource);
      const out: SubscriptionPage = { items: found.items.map(fromStored) };
      if (found.count !== undefined) out.count = found.count;
      return out;
    },
    update(actor, id, input, ctx) {
      const { tenant } = actor;
      return store.transaction((tx) => {
        const previous = owned(actor, load(tenant, id));
        const next = adopted(actor, previous, patchSubscription(previous, input, { mapper: ctx.mapper, now: clock.now() }));
        // A subscription keeps the endpoint it was created with (renewing a dashboard's, say); a new one is checked.
        if (next.notification.endpoint.uri !== previous.notification.endpoint.uri) checkEndpoint(actor, next);
        store.subscriptions.replace(tenant, id, documentOf(next), next.modifiedAt, next.owner?.subject);
        tx.onCommit(() => {
          registry.put(tenant, next);
          written(tenant, next);
        });
        return next;
      });
    },
    delete(actor, id) {
      const { tenant } = actor;
      store.transaction((tx) => {
        owned(actor, load(tenant, id));
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
