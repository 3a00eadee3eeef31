// Temporal writes (NGSI-LD §5.6.11-5.6.16): instances become history (same series and observedAt
// overwrite), the current state follows the newest instance; instance edits, attribute and entity deletes.

import {
  BadRequestDataError, ResourceNotFoundError, instanceIdAt, isDeletion, updateAttributePartial, type Attribute, type Entity, type EntityId,
  type FragmentInput, type Iri,
} from '../ngsi/index.js';
import type { ChangeEmitter } from '../events.js';
import type { Clock, IdGenerator } from '../lib/index.js';
import type { HistoryInstance, Store } from '../store/index.js';
import type { TemporalEntityInput, TemporalInstanceInput } from './parse.js';
import type { TemporalActor } from './types.js';


export interface TemporalWriteDeps {
  store: Store;
  events: ChangeEmitter;
  clock: Clock;
  newId: IdGenerator;
}

export interface TemporalWriter {
  /** Creates the entity from its instances (true), or adds them to the live one (false). */
  create(actor: TemporalActor, input: TemporalEntityInput): Promise<boolean>;
  addAttributes(actor: TemporalActor, id: EntityId, instances: TemporalInstanceInput[]): Promise<void>;
  modifyInstance(actor: TemporalActor, id: EntityId, attr: Iri, instanceId: string, fragment: FragmentInput): Promise<void>;
  deleteInstance(actor: TemporalActor, id: EntityId, attr: Iri, instanceId: string): Promise<void>;
  deleteAttribute(actor: TemporalActor, id: EntityId, attr: Iri, opts: { datasetId?: string; deleteAll: boolean }): Promise<void>;
  delete(actor: TemporalActor, id: EntityId): Promise<void>;
}

const observedTime = (a: Attribute): number => a.observedAt ?? a.modifiedAt;

/**
 * The current state after historical instances: per attribute and datasetId the newest given
 * instance replaces the current one unless that one was observed later (a back-fill leaves it).
 */
function withNewest(entity: Entity, instances: readonly TemporalInstanceInput[], now: number): { entity: Entity; attrs: Iri[] } {
  const newest = new Map<string, TemporalInstanceInput>();
  for (const i of instances) {
    const key = JSON.stringify([i.attr, i.attribute.datasetId ?? null]);
    const known = newest.get(key);
    if (!known || known.attribute.observedAt <= i.attribute.observedAt) newest.set(key, i);
  }
  const attrs: Entity['attrs'] = { ...entity.attrs };
  const changed = new Set<Iri>();
  for (const { attr, attribute } of newest.values()) {
    const list = attrs[attr] ?? [];
    const existing = list.find((a) => a.datasetId === attribute.datasetId);
    if (existing && observedTime(existing) > attribute.observedAt) continue;
    const next: Attribute = { ...attribute, createdAt: existing?.createdAt ?? now, modifiedAt: now };
    attrs[attr] = existing ? list.map((a) => (a === existing ? next : a)) : [...list, next];
    changed.add(attr);
  }
  if (changed.size === 0) return { entity, attrs: [] };
  return { entity: { ...entity, attrs, modifiedAt: now }, attrs: [...changed] };
}

/** An instance edit (NGSI-LD §5.6.14): the fragment merged into the stored instance, as a partial update. */
function mergeInstance(old: HistoryInstance, fragment: FragmentInput, now: number, subject: string | undefined): HistoryInstance {
  if (isDeletion(fragment)) throw new BadRequestDataError('NGSI-LD Null cannot replace an attribute instance');
  if (!old.attribute) throw new BadRequestDataError('A deletion instance cannot be modified');
  if (fragment.datasetId !== undefined && fragment.datasetId !== old.datasetId) {
    throw new BadRequestDataError('The datasetId of an instance cannot change');
  }
  const { datasetId: _given, ...rest } = fragment;
  const { datasetId: _own, ...stored } = old.attribute;
  const shell: Entity = { id: old.entityId, types: [], attrs: { [old.attr]: [stored] }, createdAt: 0, modifiedAt: 0 };
  const merged = updateAttributePartial(shell, old.attr, rest, now).entity.attrs[old.attr]?.[0];
  if (!merged) throw new BadRequestDataError('The instance cannot be updated with this fragment');
  const attribute: Attribute = old.datasetId === undefined ? merged : { ...merged, datasetId: old.datasetId };
  const out: HistoryInstance = { ...old, attribute, modifiedAt: now };
  if (attribute.observedAt !== undefined) out.observedAt = attribute.observedAt;
  if (subject !== undefined) out.subject = subject;
  return out;
}

export function createTemporalWriter({ store, events, clock, newId }: TemporalWriteDeps): TemporalWriter {
  const history = (actor: TemporalActor, id: EntityId, instances: readonly TemporalInstanceInput[], now: number): HistoryInstance[] =>
    instances.map(({ attr, attribute }) => {
      const stamped: Attribute = { ...attribute, createdAt: now, modifiedAt: now };
      const h: HistoryInstance = {
        entityId: id, attr, instanceId: instanceIdAt(attribute.observedAt ?? now, newId()), observedAt: attribute.observedAt,
        createdAt: now, modifiedAt: now, attribute: stamped,
      };
      if (attribute.datasetId !== undefined) h.datasetId = attribute.datasetId;
      if (actor.subject !== undefined) h.subject = actor.subject;
      return h;
    });

  /** Records instances and moves the current state of a live entity forward; announces after commit. */
  const addTo = (actor: TemporalActor, current: Entity, instances: readonly TemporalInstanceInput[], types: Iri[], now: number,
    onCommit: (fn: () => void) => void): void => {
    const { entity, attrs } = withNewest(current, instances, now);
    const added = types.filter((t) => !entity.types.includes(t));
    const next = added.length > 0 ? { ...entity, types: [...entity.types, ...added], modifiedAt: now } : entity;
    if (next !== current) {
      store.entities.update(actor.tenant, next);
      onCommit(() => events.emit({
        kind: 'entityUpdated', tenant: actor.tenant, previous: current, entity: next, attrs,
        ...(actor.subject !== undefined ? { subject: actor.subject } : {}),
      }));
    }
    store.history.upsertObserved(actor.tenant, history(actor, current.id, instances, now));
  };

  const requireDocument = (tenant: string, id: EntityId): void => {
    if (!store.archive.latest(tenant, id)) throw new ResourceNotFoundError('Entity not found', id);
  };

  return {
    create: (actor, input) => store.write((tx) => {
      const now = clock.now();
      const current = store.entities.get(actor.tenant, input.id);
      if (current) {
        addTo(actor, current, input.instances, input.types, now, (fn) => tx.onCommit(fn));
        return false;
      }
      const shell: Entity = { id: input.id, types: input.types, attrs: {}, createdAt: now, modifiedAt: now };
      if (input.scope !== undefined) shell.scope = input.scope;
      const { entity } = withNewest(shell, input.instances, now);
      const created: Entity = { ...entity, createdAt: now, modifiedAt: now };
      store.entities.insert(actor.tenant, created);
      store.history.upsertObserved(actor.tenant, history(actor, input.id, input.instances, now));
      tx.onCommit(() => events.emit({
        kind: 'entityCreated', tenant: actor.tenant, entity: created, ...(actor.subject !== undefined ? { subject: actor.subject } : {}),
      }));
      return true;
    }),

    addAttributes: (actor, id, instances) => store.write((tx) => {
      const current = store.entities.get(actor.tenant, id);
      if (!current) throw new ResourceNotFoundError('Entity not found', id);
      addTo(actor, current, instances, [], clock.now(), (fn) => tx.onCommit(fn));
    }),

    modifyInstance: (actor, id, attr, instanceId, fragment) => store.write(() => {
      requireDocument(actor.tenant, id);
      const now = clock.now();
      const found = store.history.modifyInstance(actor.tenant, id, attr, instanceId, (old) => mergeInstance(old, fragment, now, actor.subject));
      if (!found) throw new ResourceNotFoundError('Attribute instance not found', instanceId);
    }),

    // NGSI-LD §5.6.15 Delete Attribute Instance: the instance leaves the history; the current state stays.
    deleteInstance: (actor, id, attr, instanceId) => store.write(() => {
      requireDocument(actor.tenant, id);
      if (!store.history.deleteInstance(actor.tenant, id, attr, instanceId)) {
        throw new ResourceNotFoundError('Attribute instance not found', instanceId);
      }
    }),

    deleteAttribute: (actor, id, attr, opts) => store.write(() => {
      requireDocument(actor.tenant, id);
      const which = opts.deleteAll ? 'all' : opts.datasetId ?? 'default';
      if (store.history.removeSeries(actor.tenant, id, attr, which) === 0) throw new ResourceNotFoundError('Attribute not found', attr);
    }),

    delete: (actor, id) => store.write((tx) => {
      const live = store.entities.get(actor.tenant, id);
      const removed = store.history.removeSeries(actor.tenant, id);
      const purged = store.archive.purge(actor.tenant, id, clock.now());
      if (!purged && removed === 0) throw new ResourceNotFoundError('Entity not found', id);
      if (live) {
        tx.onCommit(() => events.emit({
          kind: 'entityDeleted', tenant: actor.tenant, id, previous: live, ...(actor.subject !== undefined ? { subject: actor.subject } : {}),
        }));
      }
    }),
  };
}
