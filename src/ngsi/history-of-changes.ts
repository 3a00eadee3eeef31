// Turns what a write changed into attribute history instances (NGSI-LD §4.5.7): every attribute
// write leaves one; deleting an attribute or an entity leaves a deletion instance (value NGSI-LD Null).

import type { Change } from './draft.js';
import type { HistoryInstance } from './history-instance.js';
import { instanceIdAt } from './instance-id.js';
import type { Entity, EntityId } from './model.js';

/** History instances of changes made at `now`; `newId` draws a random UUID. */
export function historyOfChanges(
  entityId: EntityId, changes: readonly Change[], now: number, newId: () => string, subject: string | undefined,
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
export function changesOfEntity(entity: Entity): Change[] {
  const out: Change[] = [];
  for (const [attr, instances] of Object.entries(entity.attrs)) {
    for (const instance of instances) out.push({ attr, instance });
  }
  return out;
}

/** A deletion for every attribute instance of an entity (entity deleted). */
export function deletionsOfEntity(entity: Entity): Change[] {
  const out: Change[] = [];
  for (const [attr, instances] of Object.entries(entity.attrs)) {
    for (const instance of instances) {
      const ch: Change = { attr, deleted: true };
      if (instance.datasetId !== undefined) ch.datasetId = instance.datasetId;
      out.push(ch);
    }
  }
  return out;
}
