// The bodies sent upstream, rendered from a plan with the upstream context's term mapper: the
// entity of the batch upsert (NGSI-LD §6.15.3.1) and the instances of the temporal API
// (§6.20.3.1 Add Attributes to Temporal Representation of an Entity).

import { renderEntity, type Attribute, type Entity, type HistoryInstance, type Iri, type JsonObject, type TermMapper } from '../ngsi/index.js';
import { observedAttribute, type EntityPlan } from './plan.js';

/** Most instances in one temporal request (a long backlog of one entity goes in several). */
export const INSTANCES_PER_REQUEST = 500;

function entityOf(plan: EntityPlan, attrs: Record<Iri, Attribute[]>): Entity {
  const entity: Entity = { id: plan.id, types: plan.types, attrs, createdAt: 0, modifiedAt: 0 };
  if (plan.scope !== undefined) entity.scope = plan.scope;
  return entity;
}

function groupByAttr(instances: readonly HistoryInstance[]): Record<Iri, Attribute[]> {
  const attrs: Record<Iri, Attribute[]> = {};
  for (const i of instances) {
    const a = observedAttribute(i);
    if (a !== undefined) (attrs[i.attr] ??= []).push(a);
  }
  return attrs;
}

/** The entity as the batch upsert sends it: id, type, scope and the latest instance of each attribute written. */
export function upsertEntity(plan: EntityPlan, mapper: TermMapper): JsonObject {
  return renderEntity(entityOf(plan, groupByAttr([...plan.latest.values()])), mapper, { format: 'normalized', sysAttrs: false });
}

/** Temporal request bodies for `instances` of one entity: attribute name → its instances, in chunks. */
export function temporalBodies(plan: EntityPlan, instances: readonly HistoryInstance[], mapper: TermMapper): JsonObject[] {
  const bodies: JsonObject[] = [];
  for (let at = 0; at < instances.length; at += INSTANCES_PER_REQUEST) {
    const rendered = renderEntity(entityOf(plan, groupByAttr(instances.slice(at, at + INSTANCES_PER_REQUEST))), mapper, {
      format: 'normalized', sysAttrs: false,
    });
    const body: JsonObject = {};
    for (const [name, value] of Object.entries(rendered)) {
      if (name === 'id' || name === 'type' || name === 'scope') continue;
      // NGSI-LD §6.20.3.1: every attribute holds an array of instances.
      body[name] = Array.isArray(value) ? value : [value];
    }
    bodies.push(body);
  }
  return bodies;
}
