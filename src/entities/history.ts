// Turns what a write changed into attribute history instances (every attribute write leaves one;
// deleting an attribute or an entity leaves a deletion instance whose value is NGSI-LD Null).

import { instanceIdAt, type Attribute, type Entity, type EntityId, type Iri } from '../ngsi/index.js';
import type { HistoryInstance } from '../store/index.js';
import type { IdGenerator } from '../lib/index.js';

export interface AttributeChange {
  attr: Iri;
  datasetId?: string;
  /** The new state of the instance; absent when the instance was deleted. */
  instance?: Attribute;
  deleted?: true;
}


export function historyOfChanges(
  entityId: EntityId, changes: readonly AttributeChange[], now: number, newId: IdGenerator, subject: string | undefined,
): HistoryInstance[] {
  return changes.map((ch) => {
    // The id carries the instant the row is stored under (observedAt, else modifiedAt): see instanceIdAt.
    const base: HistoryInstance = ch.instance
      ? {
        entityId, attr: ch.attr, instanceId: instanceIdAt(ch.instance.observedAt ?? ch.instance.modifiedAt, newId()),
        createdAt: ch.instance.createdAt, modifiedAt: ch.instance.modifiedAt, attribute: ch.instance,
      }
      : { entityId, attr: ch.attr, instanceId: instanceIdAt(now, newId()), createdAt: now, modifiedAt: now, deletedAt: now };
    const datasetId = ch.instance?.datasetId ?? ch.datasetId;
    if (datasetId !== undefined) base.datasetId = datasetId;
    if (ch.instance?.observedAt !== undefined) base.observedAt = ch.instance.observedAt;
    if (subject !== undefined) base.subject = subject;
    return base;
  });
}

/** Every instance of every attribute of an entity, as changes (entity created or replaced). */
export function changesOfEntity(entity: Entity): AttributeChange[] {
  const out: AttributeChange[] = [];
  for (const [attr, instances] of Object.entries(entity.attrs)) {
    for (const instance of instances) out.push({ attr, instance });
  }
  return out;
}

/** A deletion instance for every attribute instance of an entity (entity deleted). */
export function deletionsOfEntity(entity: Entity): AttributeChange[] {
  const out: AttributeChange[] = [];
  for (const [attr, instances] of Object.entries(entity.attrs)) {
    for (const instance of instances) {
      const ch: AttributeChange = { attr, deleted: true };
      if (instance.datasetId !== undefined) ch.datasetId = instance.datasetId;
      out.push(ch);
    }
  }
  return out;
}
