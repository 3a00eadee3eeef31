// The rule "the newest observedAt wins" (NGSI-LD §5.6.11-5.6.12, and every measurement that arrives
// late): historical instances move the current state forward only where they are newer than it.

import type { Attribute, Entity, Iri } from './model.js';
import type { HistoryInstance } from './history-instance.js';
import { instanceIdAt } from './instance-id.js';

/** An attribute instance that carries the instant it was observed. */
export interface ObservedInstance {
  attr: Iri;
  attribute: Attribute & { observedAt: number };
}

const observedTime = (a: Attribute): number => a.observedAt ?? a.modifiedAt;

/**
 * The current state after historical instances: per attribute and datasetId the newest given
 * instance replaces the current one unless that one was observed later (a back-fill leaves it).
 * Returns `entity` itself when nothing moves.
 */
export function withNewest(entity: Entity, instances: readonly ObservedInstance[], now: number): Entity {
  const newest = new Map<string, ObservedInstance>();
  for (let k = 0; k < instances.length; k++) {
    const i = instances[k]!;
    // NOTE: an IRI holds no NUL, so the key tells every (attribute, datasetId) apart.
    const datasetId = i.attribute.datasetId;
    const key = datasetId === undefined ? i.attr : `${i.attr}\u0000${datasetId}`;
    const known = newest.get(key);
    if (!known || known.attribute.observedAt <= i.attribute.observedAt) newest.set(key, i);
  }
  const attrs: Entity['attrs'] = { ...entity.attrs };
  let changed = false;
  for (const { attr, attribute } of newest.values()) {
    const list = attrs[attr] ?? [];
    const existing = list.find((a) => a.datasetId === attribute.datasetId);
    if (existing && observedTime(existing) > attribute.observedAt) continue;
    const next: Attribute = { ...attribute, createdAt: existing?.createdAt ?? now, modifiedAt: now };
    attrs[attr] = existing ? list.map((a) => (a === existing ? next : a)) : [...list, next];
    changed = true;
  }
  return changed ? { ...entity, attrs, modifiedAt: now } : entity;
}

/**
 * The history instances of observed attribute instances (temporal writes, MQTT measurements): each
 * keeps its observedAt, gets an instance id ordered by it, and the writer's subject for audit.
 */
export function observedHistory(
  entityId: string, instances: readonly ObservedInstance[], now: number, newId: () => string, subject: string | undefined,
): HistoryInstance[] {
  return instances.map(({ attr, attribute }) => {
    // NOTE: an attribute parsed at the write's instant is stamped already: no copy of it.
    const stamped: Attribute = attribute.createdAt === now && attribute.modifiedAt === now ? attribute : { ...attribute, createdAt: now, modifiedAt: now };
    const h: HistoryInstance = {
      entityId, attr, instanceId: instanceIdAt(attribute.observedAt, newId()), observedAt: attribute.observedAt, createdAt: now, modifiedAt: now,
      attribute: stamped,
    };
    if (attribute.datasetId !== undefined) h.datasetId = attribute.datasetId;
    if (subject !== undefined) h.subject = subject;
    return h;
  });
}
