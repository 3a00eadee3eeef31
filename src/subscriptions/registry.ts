// The in-memory registry of subscriptions, rebuilt from the store at start and kept in step with
// every create, update and delete: a change finds its candidate subscriptions through indexes by
// tenant and entity type (or watched attribute), never by scanning them all.

import type { ChangeEvent } from '../events.js';
import type { Iri, TypeExpr } from '../ngsi/index.js';
import type { DeliveryState } from '../store/index.js';
import type { Subscription, SubscriptionId } from './model.js';

export interface SubscriptionRegistry {
  /** Adds or replaces a subscription. */
  put(tenant: string, sub: Subscription): void;
  remove(tenant: string, id: SubscriptionId): void;
  get(tenant: string, id: SubscriptionId): Subscription | undefined;
  /**
   * The subscriptions of the change's tenant that may match it: selecting one of the entity's types
   * (or every type), or, without entities, watching one of the touched attributes. Periodic
   * (timeInterval) subscriptions are never candidates. The matcher decides.
   */
  candidates(change: ChangeEvent): readonly Subscription[];
  /** Periodic subscriptions (timeInterval), for the job that notifies them. */
  periodic(): Array<{ tenant: string; sub: Subscription }>;
  /** Keeps the delivery members in step after the store recorded an attempt. */
  setDelivery(tenant: string, id: SubscriptionId, delivery: DeliveryState): void;
  size(): number;
  /** Grows at every put and remove: what is derived from the subscriptions is stale when it moved. */
  revision(): number;
  /** Every subscription of every tenant. */
  all(): Array<{ tenant: string; sub: Subscription }>;
}

/** Most entity types whose candidates a tenant keeps. */
const MAX_CACHED_TYPES = 1_000;

interface TenantIndex {
  byId: Map<SubscriptionId, Subscription>;
  byType: Map<Iri, Set<SubscriptionId>>;
  anyType: Set<SubscriptionId>;
  byWatched: Map<Iri, Set<SubscriptionId>>;
  /** Candidates of an entity of one type, by type, while the index does not change (and no one watches attributes). */
  byTypeCandidates: Map<Iri, Subscription[]>;
}

/** Types one of which an entity selected by expr must have; '*' when any entity may be. */
function typeKeys(expr: TypeExpr | '*'): Iri[] | '*' {
  if (expr === '*') return '*';
  switch (expr.kind) {
    case 'type':
      return [expr.iri];
    // An entity passing an AND has every conjunct's types: the first conjunct's keys suffice.
    case 'and':
      return expr.terms[0] === undefined ? '*' : typeKeys(expr.terms[0]);
    case 'or': {
      const keys: Iri[] = [];
      for (const t of expr.terms) {
        const k = typeKeys(t);
        if (k === '*') return '*';
        keys.push(...k);
      }
      return keys;
    }
    default:
      return '*';
  }
}

/**
 * Types one of which an entity selected by the subscription must have; '*' when any entity may be
 * (a selector of every type, or no `entities` member).
 */
export function typesSelectedBy(sub: Subscription): Iri[] | '*' {
  if (sub.entities === undefined) return '*';
  const keys = new Set<Iri>();
  for (const sel of sub.entities) {
    const k = typeKeys(sel.type);
    if (k === '*') return '*';
    for (const iri of k) keys.add(iri);
  }
  return [...keys];
}

const addTo = (map: Map<Iri, Set<SubscriptionId>>, key: Iri, id: SubscriptionId): void => {
  let set = map.get(key);
  if (set === undefined) map.set(key, (set = new Set()));
  set.add(id);
};

const removeFrom = (map: Map<Iri, Set<SubscriptionId>>, id: SubscriptionId): void => {
  for (const [key, set] of map) if (set.delete(id) && set.size === 0) map.delete(key);
};

export function createSubscriptionRegistry(initial: Iterable<{ tenant: string; sub: Subscription }> = []): SubscriptionRegistry {
  const tenants = new Map<string, TenantIndex>();
  const tenantIndex = (tenant: string): TenantIndex => {
    let t = tenants.get(tenant);
    if (t === undefined) {
      t = { byId: new Map(), byType: new Map(), anyType: new Set(), byWatched: new Map(), byTypeCandidates: new Map() };
      tenants.set(tenant, t);
    }
    return t;
  };

  const unindex = (t: TenantIndex, id: SubscriptionId): void => {
    t.byTypeCandidates.clear();
    t.byId.delete(id);
    t.anyType.delete(id);
    removeFrom(t.byType, id);
    removeFrom(t.byWatched, id);
  };

  const index = (t: TenantIndex, sub: Subscription): void => {
    t.byId.set(sub.id, sub);
    if (sub.timeInterval !== undefined) return;
    if (sub.entities !== undefined) {
      const keys = typesSelectedBy(sub);
      if (keys === '*') t.anyType.add(sub.id);
      else for (const k of keys) addTo(t.byType, k, sub.id);
    } else {
      for (const a of sub.watchedAttributes ?? []) addTo(t.byWatched, a, sub.id);
    }
  };

  let revision = 0;
  const registry: SubscriptionRegistry = {
    put(tenant, sub) {
      revision += 1;
      const t = tenantIndex(tenant);
      unindex(t, sub.id);
      index(t, sub);
    },
    remove(tenant, id) {
      revision += 1;
      const t = tenants.get(tenant);
      if (t !== undefined) unindex(t, id);
    },
    get: (tenant, id) => tenants.get(tenant)?.byId.get(id),
    candidates(change) {
      const t = tenants.get(change.tenant);
      const entity = change.entity ?? change.previous;
      if (t === undefined || entity === undefined || change.kind === 'historyChanged') return [];
      // The common case, an entity of one type and no subscription by watched attributes alone.
      const single = entity.types.length === 1 && t.byWatched.size === 0 ? entity.types[0] : undefined;
      const known = single === undefined ? undefined : t.byTypeCandidates.get(single);
      if (known !== undefined) return known;
      const ids = new Set(t.anyType);
      for (const type of entity.types) for (const id of t.byType.get(type) ?? []) ids.add(id);
      if (t.byWatched.size > 0) {
        const touched = change.kind === 'entityCreated' || change.kind === 'entityDeleted'
          ? Object.keys(entity.attrs) : [...change.written, ...change.deleted];
        for (const a of touched) for (const id of t.byWatched.get(a) ?? []) ids.add(id);
      }
      const found = [...ids].flatMap((id) => t.byId.get(id) ?? []);
      if (single !== undefined) {
        if (t.byTypeCandidates.size >= MAX_CACHED_TYPES) t.byTypeCandidates.clear();
        t.byTypeCandidates.set(single, found);
      }
      return found;
    },
    periodic() {
      const out: Array<{ tenant: string; sub: Subscription }> = [];
      for (const [tenant, t] of tenants) for (const sub of t.byId.values()) if (sub.timeInterval !== undefined) out.push({ tenant, sub });
      return out;
    },
    setDelivery(tenant, id, delivery) {
      const t = tenants.get(tenant);
      const sub = t?.byId.get(id);
      if (t === undefined || sub === undefined) return;
      t.byId.set(id, { ...sub, delivery });
      t.byTypeCandidates.clear();
    },
    size: () => [...tenants.values()].reduce((n, t) => n + t.byId.size, 0),
    revision: () => revision,
    all: () => [...tenants].flatMap(([tenant, t]) => [...t.byId.values()].map((sub) => ({ tenant, sub }))),
  };
  for (const { tenant, sub } of initial) registry.put(tenant, sub);
  return registry;
}
