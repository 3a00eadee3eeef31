// Linked entity retrieval (NGSI-LD §4.5.23, join=inline|flat): the entities that relationships
// point to, level by level up to joinLevel, each with the projection of the path that reached it.

import type { Entity, EntityId } from './model.js';
import { isProjected } from './projection.js';
import { linkedOptions, type RenderOptions } from './render.js';

/** Loads the live entities among ids (missing ones are absent). */
export type LinkedLoader = (ids: EntityId[]) => Map<EntityId, Entity>;

/** A linked entity reached through relationships, with the projection of the path that reached it. */
export interface Reached {
  entity: Entity;
  opts: RenderOptions;
}

/**
 * NGSI-LD §4.5.23 linked entity retrieval: the entities the given ones link to, level by level up to
 * joinLevel, each with the projection of the relationship that reached it first.
 */
export function followLinks(roots: Entity[], opts: RenderOptions, levels: number, load: LinkedLoader): { known: Map<EntityId, Entity>; reached: Reached[] } {
  const known = new Map<EntityId, Entity>(roots.map((e) => [e.id, e]));
  const reached: Reached[] = [];
  let frontier: Reached[] = roots.map((entity) => ({ entity, opts }));
  for (let level = 0; level < levels && frontier.length > 0; level++) {
    const wanted = new Map<EntityId, RenderOptions>();
    for (const { entity, opts: at } of frontier) {
      for (const [attr, instances] of Object.entries(entity.attrs)) {
        // A relationship the projection leaves out links nothing into the answer.
        if (!isProjected(attr, at.pick, at.omit) || (at.attrs !== undefined && !at.attrs.has(attr))) continue;
        for (const id of linkedIdsOf(instances)) if (!known.has(id) && !wanted.has(id)) wanted.set(id, linkedOptions(at, attr));
      }
    }
    const found = wanted.size > 0 ? load([...wanted.keys()]) : new Map<EntityId, Entity>();
    frontier = [];
    for (const [id, e] of found) {
      known.set(id, e);
      frontier.push({ entity: e, opts: wanted.get(id) ?? opts });
    }
    reached.push(...frontier);
  }
  return { known, reached };
}

function linkedIdsOf(instances: readonly Entity['attrs'][string][number][]): EntityId[] {
  const ids: EntityId[] = [];
  for (const a of instances) {
    if (a.kind === 'Relationship') ids.push(...(Array.isArray(a.object) ? a.object : [a.object]));
    if (a.kind === 'ListRelationship') ids.push(...a.objectList);
  }
  return ids;
}
