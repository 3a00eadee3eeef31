// join=inline on temporal answers (interface 4.1; NGSI-LD §4.5.23): each Relationship instance of a
// normalized temporal representation gains the `entity` it points to, as it is now, up to joinLevel.

import { followLinks, renderEntity, type Entity, type EntityId, type Json, type LinkedLoader, type TermMapper } from '../ngsi/index.js';

type JsonRecord = { [key: string]: Json };

const isRecord = (v: Json | undefined): v is JsonRecord => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The Relationship instances of rendered temporal entities (each attribute: one instance or an array). */
function relationshipInstances(entities: readonly Json[]): JsonRecord[] {
  const out: JsonRecord[] = [];
  for (const e of entities) {
    if (!isRecord(e)) continue;
    for (const value of Object.values(e)) {
      for (const instance of Array.isArray(value) ? value : [value]) {
        if (isRecord(instance) && instance['type'] === 'Relationship' && typeof instance['object'] === 'string') out.push(instance);
      }
    }
  }
  return out;
}

/** Adds `entity` to every Relationship instance whose target exists (in place: the payload is ours). */
export function inlineTemporalLinks(entities: readonly Json[], joinLevel: number, mapper: TermMapper, load: LinkedLoader): void {
  const instances = relationshipInstances(entities);
  const ids = [...new Set(instances.map((i) => i['object'] as EntityId))]; // NOTE: checked to be a string above
  if (ids.length === 0) return;
  const first = load(ids);
  const opts = { format: 'normalized' as const, sysAttrs: false };
  const { known } = followLinks([...first.values()], opts, joinLevel - 1, load);
  for (const [id, e] of first) known.set(id, e);
  const linked = (id: EntityId): Entity | undefined => known.get(id);
  for (const instance of instances) {
    const target = known.get(instance['object'] as EntityId); // NOTE: checked to be a string above
    if (target) instance['entity'] = renderEntity(target, mapper, { ...opts, linked, joinLevel: joinLevel - 1 });
  }
}
