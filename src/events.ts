// Changes: what one committed write did to one entity, as journaled in the same transaction and
// announced after commit; and the write port through which every write of every source goes.

import type { Entity, EntityId, HistoryInstance, Iri, Json, Principal } from './ngsi/index.js';

/**
 * - entityCreated: the entity became live (it was not, or it was soft-deleted);
 * - entityUpdated: the live entity changed (attributes written or deleted, types, scope);
 * - entityReplaced: the live entity was replaced whole (PUT, upsert with replace);
 * - entityDeleted: the entity stopped being live (soft delete, or removed with its history);
 * - historyChanged: only its history changed (a back-fill older than the current state, an instance
 *   edited or deleted, a series removed); the current state is as it was.
 * - registrationChanged: a context source registration was created, updated, deleted or expired
 *   (no entity changed: `id` is the registration's, and `registration` holds its states).
 */
export type ChangeKind = 'entityCreated' | 'entityUpdated' | 'entityReplaced' | 'entityDeleted' | 'historyChanged' | 'registrationChanged';

// NOTE: the journal stores a kind as its index here: new kinds are appended, never inserted.
export const CHANGE_KINDS: readonly ChangeKind[] = ['entityCreated', 'entityUpdated', 'entityReplaced', 'entityDeleted', 'historyChanged', 'registrationChanged'];

/**
 * A context source registration before and after a change, in the registrations module's stored
 * form (JSON): `before` absent when it was created, `after` absent when it was deleted or expired.
 */
export interface RegistrationStates {
  before?: Json;
  after?: Json;
  /** It ended because its expiresAt passed (no request deleted it). */
  expired?: boolean;
}

/**
 * One entity's change by one write: exactly one per entity and write, with its journal sequence.
 * The event emitted after commit carries the entity and instances as committed; a change read back
 * from the journal later carries them as they are then (see ChangeJournal.readAfter): the journal
 * keeps only references to them, not a second copy of every value.
 */
export interface ChangeEvent {
  /** Position in the change journal: increasing, never reused. */
  seq: number;
  tenant: string;
  kind: ChangeKind;
  id: EntityId;
  /** When the write ran (epoch ms). */
  at: number;
  subject?: string;
  /**
   * The live entity before the write, holding only the attributes the write touched (written,
   * deleted or edited); absent when the entity was not live.
   */
  previous?: Entity;
  /** The live entity after the write, whole; absent when it is not live (deleted, or never was). */
  entity?: Entity;
  /** Attributes with an instance written (created, updated or replaced). */
  written: Iri[];
  /** Attributes with an instance deleted (from the current state or, for history edits, from history). */
  deleted: Iri[];
  /** History instances written by the write (deletion instances included), in order. */
  instances: HistoryInstance[];
  /** Of a registrationChanged change only. */
  registration?: RegistrationStates;
}

export type ChangeListener = (event: ChangeEvent) => void;

export interface ChangeEmitter {
  on(listener: ChangeListener): () => void;
  emit(event: ChangeEvent): void;
}

/** A synchronous emitter; a throwing listener is reported and never stops the others. */
export function createChangeEmitter(onError: (err: unknown) => void): ChangeEmitter {
  const listeners = new Set<ChangeListener>();
  return {
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit(event) {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (err) {
          onError(err);
        }
      }
    },
  };
}

/** Which instances a series removal takes: every series of the attribute, or one datasetId's. */
export type SeriesSelector = 'all' | 'default' | string;

/**
 * The operations of one write, inside its transaction. Every operation on an entity is recorded,
 * and when the write's function returns, the core journals one change per entity it touched.
 * Reads see the write's own effects.
 */
export interface WriteTx {
  /** When this write runs (epoch ms), one instant for all it does. */
  readonly now: number;
  /** The live entity. */
  live(id: EntityId): Entity | undefined;
  /** The latest document, live or soft-deleted. */
  latest(id: EntityId): Entity | undefined;
  /** Inserts a new live entity (AlreadyExists when one is live) with the history it starts. */
  insert(entity: Entity, instances: HistoryInstance[]): void;
  /** Replaces the live `previous` by `next` (may be the same object: history only) and appends history. */
  update(previous: Entity, next: Entity, instances: HistoryInstance[], opts?: { replaced?: boolean }): void;
  /** Soft-deletes the live `previous`, recording its deletion instances. */
  markDeleted(previous: Entity, instances: HistoryInstance[]): void;
  /**
   * Temporal instances (NGSI-LD §5.6.11-5.6.12): an instance with the same series and observedAt
   * as a stored one replaces it. `next` is the live state after them (may be `previous`).
   */
  addObserved(previous: Entity | undefined, next: Entity | undefined, instances: HistoryInstance[]): void;
  /** Rewrites one history instance with `edit` of it; false when there is none. */
  modifyInstance(id: EntityId, attr: Iri, instanceId: string, edit: (old: HistoryInstance) => HistoryInstance): boolean;
  /** Removes one history instance; false when there is none. */
  deleteInstance(id: EntityId, attr: Iri, instanceId: string): boolean;
  /** Removes history series of an attribute; returns how many instances went. */
  removeSeries(id: EntityId, attr: Iri, which: SeriesSelector): number;
  /** Removes an entity for good: its document (live or not) and its whole history; false when nothing was there. */
  purge(id: EntityId): boolean;
}

/** The one write path: every write of every source (HTTP, batch, temporal, MQTT) goes through it. */
export interface WriteCore {
  /**
   * Runs fn as one write (group-committed with the writes of the same turn). Each entity it touched
   * gets one journal row in the same transaction and one ChangeEvent after commit.
   */
  write<T>(actor: Principal, fn: (tx: WriteTx) => T): Promise<T>;
}
