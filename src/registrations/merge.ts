// Merging an entity's fragments from several sources (NGSI-LD §4.3.6.2, §5.7.1.4): types and scopes
// united; per attribute, instances matched by datasetId, the newest observedAt (else modifiedAt)
// winning; every datasetId kept.

import type { Attribute, Entity } from '../ngsi/index.js';

const stampOf = (a: Attribute): number | undefined => a.observedAt ?? (a.modifiedAt > 0 ? a.modifiedAt : undefined);

/** Whether the incoming instance replaces the held one: newer, or (undated) when the incoming source is authoritative. */
function wins(held: Attribute, incoming: Attribute, incomingFirst: boolean): boolean {
  if (held.observedAt !== undefined && incoming.observedAt !== undefined) return incoming.observedAt > held.observedAt;
  const h = stampOf(held);
  const i = stampOf(incoming);
  if (h !== undefined && i !== undefined) return i > h;
  return incomingFirst;
}

function mergeInstances(held: Attribute[], incoming: Attribute[], incomingFirst: boolean): Attribute[] {
  const out = [...held];
  for (const inst of incoming) {
    const at = out.findIndex((h) => h.datasetId === inst.datasetId);
    if (at < 0) out.push(inst);
    else if (wins(out[at]!, inst, incomingFirst)) out[at] = inst;
  }
  return out;
}

/**
 * One entity from two fragments of the same id. `incomingFirst`: on undated instances the incoming
 * fragment wins (it comes from an exclusive or redirect source, which holds those attributes).
 */
export function mergeEntity(held: Entity, incoming: Entity, incomingFirst: boolean): Entity {
  const attrs: Entity['attrs'] = { ...held.attrs };
  for (const [name, instances] of Object.entries(incoming.attrs)) {
    const mine = attrs[name];
    attrs[name] = mine === undefined ? instances : mergeInstances(mine, instances, incomingFirst);
  }
  const out: Entity = {
    id: held.id, types: [...new Set([...held.types, ...incoming.types])], attrs,
    createdAt: Math.min(held.createdAt, incoming.createdAt), modifiedAt: Math.max(held.modifiedAt, incoming.modifiedAt),
  };
  const scope = [...new Set([...(held.scope ?? []), ...(incoming.scope ?? [])])];
  if (scope.length > 0) out.scope = scope;
  return out;
}
