// Entity use cases: create, replace, merge, attribute writes, delete, retrieve and list.
// The one write path for every source (HTTP, MQTT, batch): entity row, history rows and the
// change event are one transaction; the event is announced only after commit.

import {
  ResourceNotFoundError, type Entity, type EntityId, type Iri,
} from '../ngsi/index.js';
import type { EntityListQuery, Store } from '../store/index.js';
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


export interface EntityService {
  create(actor: Actor, entity: Entity): Promise<void>;
  /** Applies a pure update rule to the current state of a live entity (404 when missing). */
  update(actor: Actor, id: EntityId, rule: (current: Entity, now: number) => UpdateOutcome): Promise<UpdateResult>;
  /** Replaces the whole entity (PUT): history records every new instance. */
  replace(actor: Actor, id: EntityId, rule: (current: Entity, now: number) => Entity): Promise<void>;
  delete(actor: Actor, id: EntityId): Promise<void>;
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

function withSubject<T extends ChangeEvent>(event: T, subject: string | undefined): T {
  return subject === undefined ? event : { ...event, subject };
}

export function createEntityService(deps: EntityServiceDeps): EntityService {
  const { store, events, clock, newId } = deps;

  const record = (actor: Actor, id: EntityId, changes: AttributeChange[], now: number): void => {
    if (changes.length === 0) return;
    store.history.append(actor.tenant, historyOfChanges(id, changes, now, newId, actor.subject));
  };

  const current = (actor: Actor, id: EntityId): Entity => {
    const entity = store.entities.get(actor.tenant, id);
    if (!entity) throw notFound(id);
    return entity;
  };

  return {
    now: () => clock.now(),

    create: (actor, entity) => store.write((tx) => {
      store.entities.insert(actor.tenant, entity);
      record(actor, entity.id, changesOfEntity(entity), entity.createdAt);
      tx.onCommit(() => events.emit(withSubject({ kind: 'entityCreated', tenant: actor.tenant, entity }, actor.subject)));
    }),

    update: (actor, id, rule) => store.write((tx) => {
      const previous = current(actor, id);
      const now = clock.now();
      const outcome = rule(previous, now);
      if (outcome.changes.length > 0 || outcome.entity !== previous) {
        store.entities.update(actor.tenant, outcome.entity);
        record(actor, id, outcome.changes, now);
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
    }),

    replace: (actor, id, rule) => store.write((tx) => {
      const previous = current(actor, id);
      const now = clock.now();
      const entity = rule(previous, now);
      store.entities.update(actor.tenant, entity);
      // Attributes that disappear get a deletion instance; every new instance is recorded.
      const removed = deletionsOfEntity({ ...previous, attrs: Object.fromEntries(
        Object.entries(previous.attrs).filter(([attr]) => !(attr in entity.attrs)),
      ) });
      record(actor, id, [...removed, ...changesOfEntity(entity)], now);
      tx.onCommit(() => events.emit(withSubject({ kind: 'entityReplaced', tenant: actor.tenant, previous, entity }, actor.subject)));
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
