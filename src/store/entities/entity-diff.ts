// Which attributes an update changed, so secondary indexes rewrite only those.

import type { Entity, Iri } from '../../ngsi/index.js';

/**
 * The attributes whose instances differ between two states. NOTE: the update rules return new
 * arrays only for attributes they change, so an identical array reference means "unchanged".
 */
export function changedAttributes(previous: Entity, next: Entity): Set<Iri> {
  const changed = new Set<Iri>();
  for (const [attr, instances] of Object.entries(next.attrs)) if (previous.attrs[attr] !== instances) changed.add(attr);
  for (const attr of Object.keys(previous.attrs)) if (!(attr in next.attrs)) changed.add(attr);
  return changed;
}

/** The entity reduced to some of its attributes (to diff just those). */
export function withAttributes(entity: Entity, attrs: Set<Iri>): Entity {
  const kept: Entity['attrs'] = {};
  for (const attr of attrs) {
    const instances = entity.attrs[attr];
    if (instances) kept[attr] = instances;
  }
  return { ...entity, attrs: kept };
}
