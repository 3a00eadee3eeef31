// Entity use cases: create, replace, merge, attribute writes, delete, retrieve and list. Writes go
// through the write core (entity row, history rows and the journaled change in one transaction).

import {
  ResourceNotFoundError, appendAttributes, entityFactsOf, expiryOf, isExpired, type EntityMembers, changesOfEntity, deletionsOfEntity, historyOfChanges, replaceEntity, type Entity, type EntityId, type Iri, type NotUpdated,
  type Action, type Principal, type UpdateOutcome,
} from '../ngsi/index.js';
import type { WriteCore, WriteTx } from '../events.js';
import { readScopeOf, type EntityListQuery, type Store } from '../store/index.js';
import type { Clock, IdGenerator } from '../lib/index.js';
import { requireRight } from '../auth/index.js';


export interface UpdateResult { updated: Iri[]; notUpdated: NotUpdated[] }

/** What upsert does to an existing entity: replace it whole, or append its attributes. */
export type UpsertMode = 'replace' | 'update';

export interface EntityService {
  create(actor: Principal, entity: Entity): Promise<void>;
  /** Applies a pure update rule to the current state of a live entity (404 when missing). */
  update(actor: Principal, id: EntityId, rule: (current: Entity, now: number) => UpdateOutcome): Promise<UpdateResult>;
  /** Replaces the whole entity (PUT): history records every new instance. */
  replace(actor: Principal, id: EntityId, rule: (current: Entity, now: number) => Entity): Promise<void>;
  delete(actor: Principal, id: EntityId): Promise<void>;
  /**
   * Creates the entity, or (NGSI-LD §5.6.8) replaces the live one with that id (`replace`) or appends
   * its attributes and types to it (`update`), in one write. `created` says which happened.
   */
  upsert(actor: Principal, entity: Entity, mode: UpsertMode): Promise<{ created: boolean }>;
  get(actor: Principal, id: EntityId): Entity;
  /** Throws AccessDenied (403) unless the actor may `action` on the entity as it is now. */
  requireRight(actor: Principal, entity: Entity, action: Action): void;
  getMany(actor: Principal, ids: EntityId[]): Map<EntityId, Entity>;
  list(actor: Principal, query: EntityListQuery): { entities: Entity[]; count?: number };
  now(): number;
}

export interface EntityServiceDeps {
  /** Reads. */
  store: Pick<Store, 'entities' | 'permissions'>;
  core: WriteCore;
  clock: Clock;
  newId: IdGenerator;
}

function notFound(id: EntityId): ResourceNotFoundError {
  return new ResourceNotFoundError('Entity not found', id);
}

/**
 * Upsert with options=update: attributes appended as by Append Entity Attributes (NGSI-LD §5.6.3,
 * overwriting), types added (§4.16), and a scope or expiresAt (§4.22) given in the entity replaces
 * the stored one.
 */
function appendEntity(current: Entity, entity: Entity, now: number): UpdateOutcome {
  const members: EntityMembers = { types: entity.types };
  if (entity.scope !== undefined) members.scope = entity.scope;
  const expiry = expiryOf(entity);
  if (expiry !== undefined) members.expiresAt = expiry;
  return appendAttributes(current, entity.attrs, { noOverwrite: false, now, members });
}

export function createEntityService(deps: EntityServiceDeps): EntityService {
  const { store, core, clock, newId } = deps;

  const live = (tx: WriteTx, id: EntityId): Entity => {
    const entity = tx.live(id);
    if (!entity) throw notFound(id);
    return entity;
  };

  const applyCreate = (tx: WriteTx, actor: Principal, entity: Entity): void => {
    tx.insert(entity, historyOfChanges(entity.id, changesOfEntity(entity), entity.createdAt, newId, actor.subject));
  };

  const applyUpdate = (tx: WriteTx, actor: Principal, previous: Entity, outcome: UpdateOutcome): UpdateResult => {
    tx.update(previous, outcome.entity, historyOfChanges(previous.id, outcome.changes, tx.now, newId, actor.subject));
    return { updated: outcome.updated, notUpdated: outcome.notUpdated };
  };

  const applyReplace = (tx: WriteTx, actor: Principal, previous: Entity, entity: Entity): void => {
    // Attributes that disappear get a deletion instance; every new instance is recorded.
    const removed = deletionsOfEntity({ ...previous, attrs: Object.fromEntries(
      Object.entries(previous.attrs).filter(([attr]) => !(attr in entity.attrs)),
    ) });
    tx.update(previous, entity, historyOfChanges(previous.id, [...removed, ...changesOfEntity(entity)], tx.now, newId, actor.subject),
      { replaced: true });
  };

  return {
    now: () => clock.now(),

    create: (actor, entity) => core.write(actor, (tx) => applyCreate(tx, actor, entity)),

    update: (actor, id, rule) => core.write(actor, (tx) => {
      const previous = live(tx, id);
      return applyUpdate(tx, actor, previous, rule(previous, tx.now));
    }),

    replace: (actor, id, rule) => core.write(actor, (tx) => {
      const previous = live(tx, id);
      applyReplace(tx, actor, previous, rule(previous, tx.now));
    }),

    upsert: (actor, entity, mode) => core.write(actor, (tx) => {
      const previous = tx.live(entity.id);
      if (!previous) {
        applyCreate(tx, actor, entity);
        return { created: true };
      }
      if (mode === 'update') applyUpdate(tx, actor, previous, appendEntity(previous, entity, tx.now));
      else applyReplace(tx, actor, previous, replaceEntity(previous, entity, tx.now));
      return { created: false };
    }),

    delete: (actor, id) => core.write(actor, (tx) => {
      const previous = live(tx, id);
      tx.markDeleted(previous, historyOfChanges(id, deletionsOfEntity(previous), tx.now, newId, actor.subject));
    }),

    get: (actor, id) => {
      const entity = store.entities.get(readScopeOf(actor), id);
      // NGSI-LD §4.22: an entity past its expiresAt is not served, even before the expiry job removes it.
      if (!entity || isExpired(entity, clock.now())) throw notFound(id);
      // Existence first (404), then the right to read it (403).
      requireRight(actor, 'read', entityFactsOf(id, entity), store.permissions.applicableTo);
      return entity;
    },
    requireRight: (actor, entity, action) => requireRight(actor, action, entityFactsOf(entity.id, entity), store.permissions.applicableTo),
    getMany: (actor, ids) => store.entities.getMany(readScopeOf(actor), ids),
    list: (actor, query) => store.entities.list(readScopeOf(actor), query),
  };
}
