// NGSI-LD §5.6.3 Update Entity Attributes with matching registrations (§4.3.6.2): an attribute a
// context source updated is not "not found" because this broker's copy of the entity lacks it. As
// Orion-LD does (distOpFailure.cpp: "The 404 attribute was updated elsewhere => not a 404"), the
// local part gets only the attributes it holds or that no source took.

import { ENTITY_CORE_MEMBERS, type EntityId } from '../ngsi/index.js';
import type { ForwardedWrite, WriteRequest } from '../registrations/index.js';
import type { AppContext, AppDeps } from './app-env.js';
import { actorOf } from './request-context.js';

/** What is left for the local update: the body without attributes done at a source and absent here; nothing at all. */
export interface LeftHere {
  rest: Record<string, unknown> | undefined;
  nothingLeft: boolean;
}

/** The local part of an attribute update some sources did; undefined when it is unchanged. */
export function leftHere(c: AppContext, deps: AppDeps, fw: ForwardedWrite, req: Omit<WriteRequest, 'via' | 'incoming'>): LeftHere | undefined {
  const id = req.selector.id;
  if (req.op !== 'updateAttrs' || fw.done.length === 0 || id === undefined) return undefined;
  const held = deps.entities.getMany(actorOf(c), [id as EntityId]).get(id as EntityId);
  // An entity held only at the sources: the caller's rule for a missing entity applies.
  if (held === undefined) return undefined;
  const elsewhere = (iri: string): boolean => fw.done.includes(iri) && held.attrs[iri] === undefined;
  if (fw.rest === undefined) {
    // One attribute (PATCH …/attrs/{attr}), named by the selector.
    const [only] = req.selector.attrs ?? [];
    return only !== undefined && elsewhere(only) ? { rest: undefined, nothingLeft: true } : undefined;
  }
  const rest: Record<string, unknown> = {};
  let attributes = 0;
  let dropped = false;
  for (const [key, value] of Object.entries(fw.rest)) {
    const isAttribute = !ENTITY_CORE_MEMBERS.has(key) && !key.startsWith('@');
    if (isAttribute && elsewhere(req.ctx.expandTerm(key))) {
      dropped = true;
      continue;
    }
    if (isAttribute) attributes++;
    rest[key] = value;
  }
  if (!dropped) return undefined;
  return { rest, nothingLeft: attributes === 0 };
}
