// The rule "the newest observedAt wins" (NGSI-LD §5.6.11-5.6.12, and every measurement that arrives
// late): historical instances move the current state forward only where they are newer than it.

import type { Attribute, Entity, Iri } from './model.js';

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
  for (const i of instances) {
    const key = JSON.stringify([i.attr, i.attribute.datasetId ?? null]);
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
