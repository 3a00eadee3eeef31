// The one write path: every write of every source (entity and attribute operations, batch,
// temporal writes, purge, MQTT measurements) runs here. It writes the entity rows and history, and
// journals one change per entity touched in the same transaction; the ChangeEvent that wakes the
// journal's readers is emitted only after commit.

import type { ChangeEmitter, ChangeEvent, ChangeKind, WriteCore, WriteTx } from '../events.js';
import type { Entity, EntityId, HistoryInstance, Iri, Principal } from '../ngsi/index.js';
import type { Clock } from '../lib/index.js';
import type { JournalEntry, Store } from '../store/index.js';
import type { WriteAccess } from './write-access.js';
import { actionRank, InsufficientStorageError, type Action } from '../ngsi/index.js';

export interface WriteCoreDeps {
  store: Store;
  events: ChangeEmitter;
  clock: Clock;
  /** The permission checks and grants of each write; absent when authentication is off. */
  access?: WriteAccess;
}

/** What one write did to one entity so far. */
interface Touch {
  /** The live state before the write's first operation on it. */
  readonly before: Entity | undefined;
  /** The live state after its latest operation. */
  after: Entity | undefined;
  replaced: boolean;
  /** Something was written: a write that found nothing to do journals nothing. */
  changed: boolean;
  readonly written: Set<Iri>;
  readonly deleted: Set<Iri>;
  readonly instances: HistoryInstance[];
}

const isDeletion = (i: HistoryInstance): boolean => i.attribute === undefined;

function kindOf(t: Touch): ChangeKind {
  if (t.before === undefined) return t.after === undefined ? 'historyChanged' : 'entityCreated';
  if (t.after === undefined) return 'entityDeleted';
  if (t.after === t.before) return 'historyChanged';
  return t.replaced ? 'entityReplaced' : 'entityUpdated';
}

/** `entity` with only the attributes in `attrs` (what a change's `previous` carries). */
function restrictTo(entity: Entity, attrs: ReadonlySet<Iri>): Entity {
  const kept: Entity['attrs'] = {};
  for (const attr of attrs) {
    const instances = entity.attrs[attr];
    if (instances !== undefined) kept[attr] = instances;
  }
  return { ...entity, attrs: kept };
}

function entryOf(actor: Principal, id: EntityId, t: Touch, at: number): JournalEntry {
  const entry: JournalEntry = {
    tenant: actor.tenant, kind: kindOf(t), id, at, written: [...t.written], deleted: [...t.deleted], instances: t.instances,
  };
  if (actor.subject !== undefined) entry.subject = actor.subject;
  if (t.before !== undefined) entry.previous = restrictTo(t.before, new Set([...t.written, ...t.deleted]));
  if (t.after !== undefined) entry.entity = t.after;
  return entry;
}

export function createWriteCore({ store, events, clock, access }: WriteCoreDeps): WriteCore {
  const { entities, history, archive, journal } = store;

  // NOTE: refused before anything is queued, so a nearly full disk never fails a write halfway; a
  // write of every kind passes here (HTTP, batch, temporal, MQTT measurements), and reads do not.
  const refuse = (): Promise<never> => Promise.reject(
    new InsufficientStorageError('Insufficient storage', 'the disk of the database is nearly full; writes are refused until space is freed'));

  return {
    write: (actor, fn) => (!store.hasRoom() ? refuse() : store.write((tx) => {
      const { tenant } = actor;
      const scope = { tenant };
      const now = clock.now();
      // NOTE: created per run: the store may run a write twice (see Store.write).
      const touched = new Map<EntityId, Touch>();
      /** The highest right checked so far on each entity in this write (authentication on only). */
      const checked = access === undefined ? undefined : new Map<EntityId, number>();
      /** Throws AccessDenied unless the actor may `action` on the entity (`state`: its latest document, none for a new id). */
      const need = (id: EntityId, action: Action, state: () => Entity | undefined): void => {
        if (access === undefined || checked === undefined) return;
        const rank = actionRank(action);
        if ((checked.get(id) ?? -1) >= rank) return;
        access.require(actor, id, state(), action);
        checked.set(id, rank);
      };
      const latestOf = (id: EntityId) => (): Entity | undefined => archive.latest(scope, id);

      const touch = (id: EntityId, live: () => Entity | undefined): Touch => {
        let t = touched.get(id);
        if (t === undefined) {
          const before = live();
          t = { before, after: before, replaced: false, changed: false, written: new Set(), deleted: new Set(), instances: [] };
          touched.set(id, t);
        }
        return t;
      };
      const record = (t: Touch, instances: readonly HistoryInstance[]): void => {
        t.changed = true;
        // NOTE: indexed loops over the instances of a write, here and on the bulk path: a for-of
        // allocates an iterator result per step until its function is optimised, and a bulk write
        // runs thousands of steps per call.
        for (let k = 0; k < instances.length; k++) {
          const i = instances[k]!;
          (isDeletion(i) ? t.deleted : t.written).add(i.attr);
          t.instances.push(i);
        }
      };
      const liveOf = (id: EntityId) => (): Entity | undefined => entities.get(scope, id);
      /** History of `attr` removed; the current state stays. */
      const forget = (id: EntityId, attr: Iri): void => {
        const t = touch(id, liveOf(id));
        t.changed = true;
        t.deleted.add(attr);
      };

      const wtx: WriteTx = {
        now,
        live: (id) => entities.get(scope, id),
        latest: (id) => archive.latest(scope, id),

        insert(entity, instances) {
          const t = touch(entity.id, () => undefined);
          // NOTE: after the insert, which refuses a live id (AlreadyExists before AccessDenied).
          entities.insert(tenant, entity);
          need(entity.id, 'write', () => undefined);
          access?.created(actor, entity, now);
          if (instances.length > 0) history.append(tenant, instances, { newSeries: true });
          t.after = entity;
          record(t, instances);
        },

        update(previous, next, instances, opts) {
          if (next === previous && instances.length === 0) return;
          need(previous.id, 'write', () => previous);
          const t = touch(previous.id, () => previous);
          if (next !== previous) {
            entities.update(tenant, next, previous);
            if (next.scope !== previous.scope) access?.scopesUsed(actor, next.scope, now);
          }
          if (instances.length > 0) history.append(tenant, instances);
          t.after = next;
          if (opts?.replaced === true) t.replaced = true;
          record(t, instances);
        },

        markDeleted(previous, instances) {
          need(previous.id, 'admin', () => previous);
          const t = touch(previous.id, () => previous);
          entities.markDeleted(tenant, previous.id, now);
          if (instances.length > 0) history.append(tenant, instances);
          t.after = undefined;
          record(t, instances);
        },

        addObserved(previous, next, instances) {
          const id = next?.id ?? previous?.id ?? instances[0]?.entityId;
          if (id === undefined) return;
          // NOTE: the stored document only matters to permissions; without them no read is spent on it.
          const stored = previous ?? (access === undefined ? undefined : archive.latest(scope, id));
          need(id, 'write', () => stored);
          const t = touch(id, () => previous);
          if (previous === undefined && next !== undefined) {
            entities.insert(tenant, next);
            if (stored === undefined) access?.created(actor, next, now);
            else access?.scopesUsed(actor, next.scope, now);
          } else if (previous !== undefined && next !== undefined && next !== previous) {
            entities.update(tenant, next, previous);
            if (next.scope !== previous.scope) access?.scopesUsed(actor, next.scope, now);
          }
          if (instances.length > 0) history.upsertObserved(tenant, instances);
          t.after = next;
          record(t, instances);
        },

        modifyInstance(id, attr, instanceId, edit) {
          need(id, 'write', latestOf(id));
          let edited: HistoryInstance | undefined;
          const found = history.modifyInstance(tenant, id, attr, instanceId, (old) => {
            edited = edit(old);
            return edited;
          });
          if (found && edited !== undefined) record(touch(id, liveOf(id)), [edited]);
          return found;
        },

        deleteInstance(id, attr, instanceId) {
          need(id, 'write', latestOf(id));
          const found = history.deleteInstance(tenant, id, attr, instanceId);
          if (found) forget(id, attr);
          return found;
        },

        removeSeries(id, attr, which) {
          need(id, 'write', latestOf(id));
          const removed = history.removeSeries(tenant, id, attr, which);
          if (removed > 0) forget(id, attr);
          return removed;
        },

        purge(id) {
          need(id, 'admin', latestOf(id));
          const t = touch(id, liveOf(id));
          const removed = history.removeSeries(tenant, id);
          const purged = archive.purge(tenant, id, now);
          access?.removed(tenant, id);
          if (t.before !== undefined) for (const attr of Object.keys(t.before.attrs)) t.deleted.add(attr);
          t.after = undefined;
          if (purged || removed > 0) t.changed = true;
          return purged || removed > 0;
        },
      };

      const result = fn(wtx);
      for (const [id, t] of touched) {
        if (!t.changed) continue;
        const entry = entryOf(actor, id, t, now);
        const seq = journal.append(entry);
        const event: ChangeEvent = { ...entry, seq };
        tx.onCommit(() => events.emit(event));
      }
      return result;
    })),
  };
}
