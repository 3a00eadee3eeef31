// Entity use cases: create, replace, merge, attribute writes, delete, retrieve and list.
// The one write path for every source (HTTP, MQTT, batch): entity row, history rows and the
// change event are one transaction; the event is announced only after commit.

import {
  ResourceNotFoundError, appendAttributes, replaceEntity, type Entity, type EntityId, type Iri,
} from '../ngsi/index.js';
import type { EntityListQuery, Store, TxContext } from '../store/index.js';
import type { ChangeEmitter, ChangeEvent } from '../events.js';
import type { Clock, IdGenerator } from '../lib/index.js';
import {
  changesOfEntity, deletionsOfEntity, historyOfChanges, type AttributeChange,
} from './history.js';

/** Who writes, and where. */
export interface Actor {
  tenant: string;
  subject?: string;
}

export interface NotUpdated { attr: Iri; reason: string }

/** What a pure update rule produced (see ngsi/update). */
export interface UpdateOutcome {
  entity: Entity;
  changes: AttributeChange[];
  updated: Iri[];
  notUpdated: NotUpdated[];
}

export interface UpdateResult { updated: Iri[]; notUpdated: NotUpdated[] }

/** What upsert does to an existing entity: replace it whole, or append its attributes. */
export type UpsertMode = 'replace' | 'update';


export interface EntityService {
  create(actor: Actor, entity: Entity): Promise<void>;
  /** Applies a pure update rule to the current state of a live entity (404 when missing). */
  update(actor: Actor, id: EntityId, rule: (current: Entity, now: number) => UpdateOutcome): Promise<UpdateResult>;
  /** Replaces the whole entity (PUT): history records every new instance. */
  replace(actor: Actor, id: EntityId, rule: (current: Entity, now: number) => Entity): Promise<void>;
  delete(actor: Actor, id: EntityId): Promise<void>;
  /**
   * Creates the entity, or (NGSI-LD §5.6.8) replaces the live one with that id (`replace`) or appends
   * its attributes and types to it (`update`), in one write. `created` says which happened.
   */
  upsert(actor: Actor, entity: Entity, mode: UpsertMode): Promise<{ created: boolean }>;
  get(actor: Actor, id: EntityId): Entity;
  getMany(actor: Actor, ids: EntityId[]): Map<EntityId, Entity>;
  list(actor: Actor, query: EntityListQuery): { entities: Entity[]; count?: number };
  now(): number;
}

export interface EntityServiceDeps {
  store: Store;
  events: ChangeEmitter;
  clock: Clock;
  newId: IdGenerator;
}

function notFound(id: EntityId): ResourceNotFoundError {
  return new ResourceNotFoundError('Entity not found', id);
}

/**
 * Upsert with options=update: attributes appended as by Append Entity Attributes (NGSI-LD §5.6.3,
 * overwriting), types added (§4.16), and a scope given in the entity replaces the stored one.
 */
function appendEntity(current: Entity, entity: Entity, now: number): UpdateOutcome {
  const members = entity.scope === undefined ? { types: entity.types } : { types: entity.types, scope: entity.scope };
  return appendAttributes(current, entity.attrs, { noOverwrite: false, now, members });
}

function withSubject<T extends ChangeEvent>(event: T, subject: string | undefined): T {
  return subject === undefined ? event : { ...event, subject };
}

export function createEntityService(deps: EntityServiceDeps): EntityService {
  const { store, events, clock, newId } = deps;

  const record = (actor: Actor, id: EntityId, changes: AttributeChange[], now: number, isCreation = false): void => {
    if (changes.length === 0) return;
    store.history.append(actor.tenant, historyOfChanges(id, changes, now, newId, actor.subject), { newSeries: isCreation });
  };

  const current = (actor: Actor, id: EntityId): Entity => {
    const entity = store.entities.get(actor.tenant, id);
    if (!entity) throw notFound(id);
    return entity;
  };

  const applyCreate = (tx: TxContext, actor: Actor, entity: Entity): void => {
    store.entities.insert(actor.tenant, entity);
    record(actor, entity.id, changesOfEntity(entity), entity.createdAt, true);
    tx.onCommit(() => events.emit(withSubject({ kind: 'entityCreated', tenant: actor.tenant, entity }, actor.subject)));
  };

  const applyUpdate = (tx: TxContext, actor: Actor, previous: Entity, outcome: UpdateOutcome, now: number): UpdateResult => {
    if (outcome.changes.length > 0 || outcome.entity !== previous) {
      store.entities.update(actor.tenant, outcome.entity, previous);
      record(actor, previous.id, outcome.changes, now);
      const deleted = outcome.changes.filter((c) => c.deleted).map((c) => c.attr);
      const written = outcome.changes.filter((c) => !c.deleted).map((c) => c.attr);
      tx.onCommit(() => {
        if (written.length > 0 || deleted.length === 0) {
          events.emit(withSubject({
            kind: 'entityUpdated', tenant: actor.tenant, previous, entity: outcome.entity, attrs: [...new Set(written)],
          }, actor.subject));
        }
        if (deleted.length > 0) {
          events.emit(withSubject({
            kind: 'attributesDeleted', tenant: actor.tenant, previous, entity: outcome.entity, attrs: [...new Set(deleted)],
          }, actor.subject));
        }
      });
    }
    return { updated: outcome.updated, notUpdated: outcome.notUpdated };
  };

  const applyReplace = (tx: TxContext, actor: Actor, previous: Entity, entity: Entity, now: number): void => {
    store.entities.update(actor.tenant, entity, previous);
    // Attributes that disappear get a deletion instance; every new instance is recorded.
    const removed = deletionsOfEntity({ ...previous, attrs: Object.fromEntries(
      Object.entries(previous.attrs).filter(([attr]) => !(attr in entity.attrs)),
    ) });
    record(actor, previous.id, [...removed, ...changesOfEntity(entity)], now);
    tx.onCommit(() => events.emit(withSubject({ kind: 'entityReplaced', tenant: actor.tenant, previous, entity }, actor.subject)));
  };

  return {
    now: () => clock.now(),

    create: (actor, entity) => store.write((tx) => applyCreate(tx, actor, entity)),

    update: (actor, id, rule) => store.write((tx) => {
      const previous = current(actor, id);
      const now = clock.now();
      return applyUpdate(tx, actor, previous, rule(previous, now), now);
    }),

    replace: (actor, id, rule) => store.write((tx) => {
      const previous = current(actor, id);
      const now = clock.now();
      applyReplace(tx, actor, previous, rule(previous, now), now);
    }),

    upsert: (actor, entity, mode) => store.write((tx) => {
      const previous = store.entities.get(actor.tenant, entity.id);
      if (!previous) {
        applyCreate(tx, actor, entity);
        return { created: true };
      }
      const now = clock.now();
      if (mode === 'update') applyUpdate(tx, actor, previous, appendEntity(previous, entity, now), now);
      else applyReplace(tx, actor, previous, replaceEntity(previous, entity, now), now);
      return { created: false };
    }),

    delete: (actor, id) => store.write((tx) => {
      const previous = current(actor, id);
      const now = clock.now();
      store.entities.markDeleted(actor.tenant, id, now);
      record(actor, id, deletionsOfEntity(previous), now);
      tx.onCommit(() => events.emit(withSubject({ kind: 'entityDeleted', tenant: actor.tenant, id, previous }, actor.subject)));
    }),

    get: (actor, id) => current(actor, id),
    getMany: (actor, ids) => store.entities.getMany(actor.tenant, ids),
    list: (actor, query) => store.entities.list(actor.tenant, query),
  };
}
