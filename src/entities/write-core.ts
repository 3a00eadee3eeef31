// The one write path: every write of every source (entity and attribute operations, batch,
// temporal writes, purge, MQTT measurements) runs here. It writes the entity rows and history, and
// journals one change per entity touched in the same transaction; the ChangeEvent that wakes the
// journal's readers is emitted only after commit.

import type { ChangeEmitter, ChangeEvent, ChangeKind, SeriesSelector, WriteCore, WriteTx } from '../events.js';
import type { Entity, EntityId, HistoryInstance, Iri, Principal } from '../ngsi/index.js';
import type { Clock } from '../lib/index.js';
import type { JournalEntry, Store, TxContext } from '../store/index.js';
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

/** What every write shares: the repositories it writes and the permission checks. */
interface Core {
  readonly entities: Store['entities'];
  readonly history: Store['history'];
  readonly archive: Store['archive'];
  readonly journal: Store['journal'];
  readonly events: ChangeEmitter;
  readonly access: WriteAccess | undefined;
}

/**
 * One run of one write. NOTE: created per run: the store may run a write twice (see Store.write).
 * The functions below take it as their first argument instead of closing over it: a run allocates
 * this record and its write transaction, and no helper closures (the write core's hot path).
 */
interface Run {
  readonly core: Core;
  readonly actor: Principal;
  readonly tenant: string;
  readonly scope: { readonly tenant: string };
  readonly now: number;
  readonly touched: Map<EntityId, Touch>;
  /** The highest right checked so far on each entity in this write (authentication on only). */
  readonly checked: Map<EntityId, number> | undefined;
}

/** Throws AccessDenied unless the actor may `action` on the entity (`state`: its latest document, none for a new id). */
function need(run: Run, id: EntityId, action: Action, state: () => Entity | undefined): void {
  const { access } = run.core;
  const { checked } = run;
  if (access === undefined || checked === undefined) return;
  const rank = actionRank(action);
  if ((checked.get(id) ?? -1) >= rank) return;
  access.require(run.actor, id, state(), action);
  checked.set(id, rank);
}

const latestOf = (run: Run, id: EntityId) => (): Entity | undefined => run.core.archive.latest(run.scope, id);
const liveOf = (run: Run, id: EntityId) => (): Entity | undefined => run.core.entities.get(run.scope, id);
const nothing = (): undefined => undefined;

function touch(run: Run, id: EntityId, live: () => Entity | undefined): Touch {
  let t = run.touched.get(id);
  if (t === undefined) {
    const before = live();
    t = { before, after: before, replaced: false, changed: false, written: new Set(), deleted: new Set(), instances: [] };
    run.touched.set(id, t);
  }
  return t;
}

function record(t: Touch, instances: readonly HistoryInstance[]): void {
  t.changed = true;
  // NOTE: indexed loops over the instances of a write, here and on the bulk path: a for-of
  // allocates an iterator result per step until its function is optimised, and a bulk write
  // runs thousands of steps per call.
  for (let k = 0; k < instances.length; k++) {
    const i = instances[k]!;
    (isDeletion(i) ? t.deleted : t.written).add(i.attr);
    t.instances.push(i);
  }
}

/** History of `attr` removed; the current state stays. */
function forget(run: Run, id: EntityId, attr: Iri): void {
  const t = touch(run, id, liveOf(run, id));
  t.changed = true;
  t.deleted.add(attr);
}

function insert(run: Run, entity: Entity, instances: HistoryInstance[]): void {
  const { entities, history, access } = run.core;
  const t = touch(run, entity.id, nothing);
  // NOTE: after the insert, which refuses a live id (AlreadyExists before AccessDenied).
  entities.insert(run.tenant, entity);
  need(run, entity.id, 'write', nothing);
  access?.created(run.actor, entity, run.now);
  if (instances.length > 0) history.append(run.tenant, instances, { newSeries: true });
  t.after = entity;
  record(t, instances);
}

function update(run: Run, previous: Entity, next: Entity, instances: HistoryInstance[], opts?: { replaced?: boolean }): void {
  if (next === previous && instances.length === 0) return;
  const { entities, history } = run.core;
  need(run, previous.id, 'write', () => previous);
  const t = touch(run, previous.id, () => previous);
  if (next !== previous) entities.update(run.tenant, next, previous);
  if (instances.length > 0) history.append(run.tenant, instances);
  t.after = next;
  if (opts?.replaced === true) t.replaced = true;
  record(t, instances);
}

function markDeleted(run: Run, previous: Entity, instances: HistoryInstance[]): void {
  need(run, previous.id, 'admin', () => previous);
  const t = touch(run, previous.id, () => previous);
  run.core.entities.markDeleted(run.tenant, previous.id, run.now, previous.expiresAt !== undefined);
  if (instances.length > 0) run.core.history.append(run.tenant, instances);
  t.after = undefined;
  record(t, instances);
}

function addObserved(run: Run, previous: Entity | undefined, next: Entity | undefined, instances: HistoryInstance[]): void {
  const id = next?.id ?? previous?.id ?? instances[0]?.entityId;
  if (id === undefined) return;
  const { entities, history, archive, access } = run.core;
  const { tenant, actor, now } = run;
  // NOTE: the stored document only matters to permissions; without them no read is spent on it.
  const stored = previous ?? (access === undefined ? undefined : archive.latest(run.scope, id));
  need(run, id, 'write', () => stored);
  const t = touch(run, id, () => previous);
  if (previous === undefined && next !== undefined) {
    entities.insert(tenant, next);
    if (stored === undefined) access?.created(actor, next, now);
  } else if (previous !== undefined && next !== undefined && next !== previous) {
    entities.update(tenant, next, previous);
  }
  if (instances.length > 0) history.upsertObserved(tenant, instances);
  t.after = next;
  record(t, instances);
}

function modifyInstance(run: Run, id: EntityId, attr: Iri, instanceId: string, edit: (old: HistoryInstance) => HistoryInstance): boolean {
  need(run, id, 'write', latestOf(run, id));
  let edited: HistoryInstance | undefined;
  const found = run.core.history.modifyInstance(run.tenant, id, attr, instanceId, (old) => {
    edited = edit(old);
    return edited;
  });
  if (found && edited !== undefined) record(touch(run, id, liveOf(run, id)), [edited]);
  return found;
}

function deleteInstance(run: Run, id: EntityId, attr: Iri, instanceId: string): boolean {
  need(run, id, 'write', latestOf(run, id));
  const found = run.core.history.deleteInstance(run.tenant, id, attr, instanceId);
  if (found) forget(run, id, attr);
  return found;
}

function removeSeries(run: Run, id: EntityId, attr: Iri, which: SeriesSelector): number {
  need(run, id, 'write', latestOf(run, id));
  const removed = run.core.history.removeSeries(run.tenant, id, attr, which);
  if (removed > 0) forget(run, id, attr);
  return removed;
}

function purge(run: Run, id: EntityId): boolean {
  need(run, id, 'admin', latestOf(run, id));
  const t = touch(run, id, liveOf(run, id));
  const removed = run.core.history.removeSeries(run.tenant, id);
  const purged = run.core.archive.purge(run.tenant, id, run.now);
  run.core.access?.removed(run.tenant, id);
  if (t.before !== undefined) for (const attr of Object.keys(t.before.attrs)) t.deleted.add(attr);
  t.after = undefined;
  if (purged || removed > 0) t.changed = true;
  return purged || removed > 0;
}

/** The write transaction handed to a write's `fn`: each operation on the run. */
function writeTxOf(run: Run): WriteTx {
  const { entities, archive } = run.core;
  return {
    now: run.now,
    live: (id) => entities.get(run.scope, id),
    latest: (id) => archive.latest(run.scope, id),
    insert: (entity, instances) => insert(run, entity, instances),
    update: (previous, next, instances, opts) => update(run, previous, next, instances, opts),
    markDeleted: (previous, instances) => markDeleted(run, previous, instances),
    addObserved: (previous, next, instances) => addObserved(run, previous, next, instances),
    modifyInstance: (id, attr, instanceId, edit) => modifyInstance(run, id, attr, instanceId, edit),
    deleteInstance: (id, attr, instanceId) => deleteInstance(run, id, attr, instanceId),
    removeSeries: (id, attr, which) => removeSeries(run, id, attr, which),
    purge: (id) => purge(run, id),
  };
}

/** Runs `fn` in the store's transaction `tx`, then journals each entity it changed; the events wait for commit. */
function runWrite<T>(core: Core, tx: TxContext, actor: Principal, now: number, fn: (tx: WriteTx) => T): T {
  const { tenant } = actor;
  const run: Run = {
    core, actor, tenant, scope: { tenant }, now, touched: new Map(),
    checked: core.access === undefined ? undefined : new Map(),
  };
  const result = fn(writeTxOf(run));
  for (const [id, t] of run.touched) {
    if (!t.changed) continue;
    const entry = entryOf(actor, id, t, now);
    const seq = core.journal.append(entry);
    const event: ChangeEvent = { ...entry, seq };
    tx.onCommit(() => core.events.emit(event));
  }
  return result;
}

export function createWriteCore({ store, events, clock, access }: WriteCoreDeps): WriteCore {
  const { entities, history, archive, journal } = store;
  const core: Core = { entities, history, archive, journal, events, access };

  // NOTE: refused before anything is queued, so a nearly full disk never fails a write halfway; a
  // write of every kind passes here (HTTP, batch, temporal, MQTT measurements), and reads do not.
  const refuse = (): Promise<never> => Promise.reject(
    new InsufficientStorageError('Insufficient storage', 'the disk of the database is nearly full, or the database is at its disk budget; writes are refused until space is freed'));

  return {
    write: (actor, fn) => (!store.hasRoom() ? refuse() : store.write((tx) => runWrite(core, tx, actor, clock.now(), fn))),
  };
}
