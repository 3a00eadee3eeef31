// Temporal writes (NGSI-LD §5.6.11-5.6.16): instances become history (same series and observedAt
// overwrite), the current state follows the newest instance; instance edits, attribute and entity
// deletes. Every write goes through the write core, which journals it.

import {
  BadRequestDataError, ResourceNotFoundError, isDeletion, observedHistory, updateAttributePartial, withNewest, type Attribute,
  type Entity, type EntityId, type FragmentInput, type HistoryInstance, type Iri, type Principal,
} from '../ngsi/index.js';
import type { WriteCore, WriteTx } from '../events.js';
import type { IdGenerator } from '../lib/index.js';
import type { TemporalEntityInput, TemporalInstanceInput } from './parse.js';

export interface TemporalWriteDeps {
  core: WriteCore;
  newId: IdGenerator;
}

export interface TemporalWriter {
  /** Creates the entity from its instances (true), or adds them to the live one (false). */
  create(actor: Principal, input: TemporalEntityInput): Promise<boolean>;
  /**
   * Adds instances to a live entity; `parse` makes them as of the write's instant (its errors
   * refuse the write, and nothing of it is stored).
   */
  addAttributes(actor: Principal, id: EntityId, parse: (now: number) => TemporalInstanceInput[]): Promise<void>;
  modifyInstance(actor: Principal, id: EntityId, attr: Iri, instanceId: string, fragment: FragmentInput): Promise<void>;
  deleteInstance(actor: Principal, id: EntityId, attr: Iri, instanceId: string): Promise<void>;
  deleteAttribute(actor: Principal, id: EntityId, attr: Iri, opts: { datasetId?: string; deleteAll: boolean }): Promise<void>;
  delete(actor: Principal, id: EntityId): Promise<void>;
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

export function createTemporalWriter({ core, newId }: TemporalWriteDeps): TemporalWriter {
  const history = (actor: Principal, id: EntityId, instances: readonly TemporalInstanceInput[], now: number): HistoryInstance[] =>
    observedHistory(id, instances, now, newId, actor.subject);

  /** Records instances and moves the current state of a live entity forward (types given are added). */
  const addTo = (tx: WriteTx, actor: Principal, current: Entity, instances: readonly TemporalInstanceInput[], types: Iri[]): void => {
    const entity = withNewest(current, instances, tx.now);
    const added = types.filter((t) => !entity.types.includes(t));
    const next = added.length > 0 ? { ...entity, types: [...entity.types, ...added], modifiedAt: tx.now } : entity;
    tx.addObserved(current, next, history(actor, current.id, instances, tx.now));
  };

  const requireDocument = (tx: WriteTx, id: EntityId): void => {
    if (!tx.latest(id)) throw new ResourceNotFoundError('Entity not found', id);
  };

  return {
    create: (actor, input) => core.write(actor, (tx) => {
      const current = tx.live(input.id);
      if (current) {
        addTo(tx, actor, current, input.instances, input.types);
        return false;
      }
      const shell: Entity = { id: input.id, types: input.types, attrs: {}, createdAt: tx.now, modifiedAt: tx.now };
      if (input.scope !== undefined) shell.scope = input.scope;
      const created: Entity = { ...withNewest(shell, input.instances, tx.now), createdAt: tx.now, modifiedAt: tx.now };
      tx.addObserved(undefined, created, history(actor, input.id, input.instances, tx.now));
      return true;
    }),

    // NOTE: parsed inside the write, at its instant: instances stamped with the write's own time are
    // history instances as they are (observedHistory), where instances parsed a moment earlier would
    // each be copied, two objects more per instance of a bulk ingest kept until the commit.
    addAttributes: (actor, id, parse) => core.write(actor, (tx) => {
      const instances = parse(tx.now);
      const current = tx.live(id);
      if (!current) throw new ResourceNotFoundError('Entity not found', id);
      addTo(tx, actor, current, instances, []);
    }),

    modifyInstance: (actor, id, attr, instanceId, fragment) => core.write(actor, (tx) => {
      requireDocument(tx, id);
      const found = tx.modifyInstance(id, attr, instanceId, (old) => mergeInstance(old, fragment, tx.now, actor.subject));
      if (!found) throw new ResourceNotFoundError('Attribute instance not found', instanceId);
    }),

    // NGSI-LD §5.6.15 Delete Attribute Instance: the instance leaves the history; the current state stays.
    deleteInstance: (actor, id, attr, instanceId) => core.write(actor, (tx) => {
      requireDocument(tx, id);
      if (!tx.deleteInstance(id, attr, instanceId)) throw new ResourceNotFoundError('Attribute instance not found', instanceId);
    }),

    deleteAttribute: (actor, id, attr, opts) => core.write(actor, (tx) => {
      requireDocument(tx, id);
      const which = opts.deleteAll ? 'all' : opts.datasetId ?? 'default';
      if (tx.removeSeries(id, attr, which) === 0) throw new ResourceNotFoundError('Attribute not found', attr);
    }),

    delete: (actor, id) => core.write(actor, (tx) => {
      if (!tx.purge(id)) throw new ResourceNotFoundError('Entity not found', id);
    }),
  };
}
