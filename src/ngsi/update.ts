// The update rules of NGSI-LD entities, pure: each takes the current entity and returns a new one
// with what changed (for history and events) and the UpdateResult (updated / notUpdated).

import type { Attribute, Entity, Iri } from './model.js';
import { BadRequestDataError, ResourceNotFoundError } from './errors.js';
import {
  isDeletion, type AttributeInput, type AttributeInputs, type EntityFragment, type EntityMembers, type FragmentInput,
} from './fragment.js';
import { SCOPE } from './vocab.js';
import { expiryOf, hasExpiry, withExpiry } from './expiry.js';
import { buildAttribute, mergeAttribute, restamp } from './build-attribute.js';
import {
  draftOf, findInstance, finish, missingReason, putInstance, removeInstance, skip, type Draft, type UpdateOutcome,
} from './draft.js';

/** How a write treats a given scope: replace it, add to it, or replace only one the entity has. */
type ScopeRule = 'replace' | 'add' | 'replaceExisting';

/**
 * The entity-level part of a write: types added (NGSI-LD §4.16), scope by `rule` (§4.18; NGSI-LD
 * Null removes it), expiresAt set or removed (§4.22); undefined when nothing changes. A scope the
 * rule refuses goes to notUpdated.
 */
function reshapeMembers(d: Draft, members: EntityMembers, rule: ScopeRule): (e: Entity) => Entity | undefined {
  const given = members.scope;
  if (given !== undefined && rule === 'replaceExisting' && (d.base.scope ?? []).length === 0) {
    skip(d, SCOPE, 'the entity has no scope to update');
  }
  return (e) => {
    const added = (members.types ?? []).filter((t) => !e.types.includes(t));
    let scope = e.scope;
    if (given === 'deleted') scope = undefined;
    else if (given !== undefined && rule === 'add') scope = [...new Set([...(e.scope ?? []), ...given])];
    else if (given !== undefined && (rule === 'replace' || (e.scope ?? []).length > 0)) scope = given;
    if (scope?.length === 0) scope = undefined;
    const scopeChanged = (scope ?? []).join('\n') !== (e.scope ?? []).join('\n');
    const expiry = members.expiresAt;
    const expiryChanged = expiry !== undefined && !hasExpiry(e, expiry);
    if (added.length === 0 && !scopeChanged && !expiryChanged) return undefined;
    const { scope: _previous, ...rest } = e;
    const types = [...e.types, ...added];
    const out = scope === undefined ? { ...rest, types } : { ...rest, types, scope };
    return expiryChanged ? withExpiry(out, expiry) : out;
  };
}

/**
 * Append Entity Attributes (NGSI-LD §5.6.3): every instance is added, or replaces the one with the
 * same datasetId (keeping its createdAt). With noOverwrite existing instances stay and are reported
 * in notUpdated. NGSI-LD Null deletes, as in an update. Types given are added; a scope given
 * replaces the entity's, or with noOverwrite is added to it.
 */
export function appendAttributes(
  entity: Entity, attrs: AttributeInputs, opts: { noOverwrite: boolean; now: number; members?: EntityMembers },
): UpdateOutcome {
  const d = draftOf(entity);
  for (const [attr, inputs] of Object.entries(attrs)) {
    for (const input of inputs) {
      const existing = findInstance(d, attr, input.datasetId);
      if (isDeletion(input)) deleteOrSkip(d, attr, input.datasetId, existing);
      else if (existing && opts.noOverwrite) skip(d, attr, 'attribute already exists and noOverwrite is set');
      else putInstance(d, attr, restamp(input, existing, opts.now));
    }
  }
  if (opts.members === undefined) return finish(d, opts.now);
  return finish(d, opts.now, reshapeMembers(d, opts.members, opts.noOverwrite ? 'add' : 'replace'));
}

function deleteOrSkip(d: Draft, attr: Iri, datasetId: string | undefined, existing: Attribute | undefined): void {
  if (existing) removeInstance(d, attr, datasetId);
  else skip(d, attr, missingReason(d, attr, datasetId));
}

/**
 * Update Entity Attributes (NGSI-LD §5.6.2): only instances that exist (same attribute, same
 * datasetId) are replaced; the others go to notUpdated. NGSI-LD Null deletes the instance. Types
 * given are added; a scope given replaces the entity's scope only when it has one (like an attribute).
 */
export function updateAttributes(entity: Entity, attrs: AttributeInputs, now: number, members?: EntityMembers): UpdateOutcome {
  const d = draftOf(entity);
  for (const [attr, inputs] of Object.entries(attrs)) {
    for (const input of inputs) {
      const existing = findInstance(d, attr, input.datasetId);
      if (isDeletion(input)) deleteOrSkip(d, attr, input.datasetId, existing);
      else if (!existing) skip(d, attr, missingReason(d, attr, input.datasetId));
      else putInstance(d, attr, restamp(input, existing, now));
    }
  }
  return members === undefined ? finish(d, now) : finish(d, now, reshapeMembers(d, members, 'replaceExisting'));
}

/**
 * Merge Entity (NGSI-LD §5.6.17): attributes present are merged into the existing instance (given
 * members replace, sub-attributes are added or replaced, NGSI-LD Null removes; the kind changes only
 * when `type` is given), absent ones are added, NGSI-LD Null deletes; types are added, scope replaced.
 */
export function mergeEntity(entity: Entity, fragment: EntityFragment, now: number): UpdateOutcome {
  const d = draftOf(entity);
  for (const [attr, inputs] of Object.entries(fragment.attrs)) {
    for (const input of inputs) {
      const existing = findInstance(d, attr, input.datasetId);
      if (isDeletion(input)) {
        deleteOrSkip(d, attr, input.datasetId, existing);
        continue;
      }
      const result = existing ? mergeAttribute(existing, input, attr, now) : buildAttribute(input, attr, now);
      if (typeof result === 'string') skip(d, attr, result);
      else putInstance(d, attr, result);
    }
  }
  return finish(d, now, reshapeMembers(d, fragment, 'replace'));
}

/**
 * Replace Entity (NGSI-LD §5.6.18): the replacement's types, scope, expiresAt and attributes, under the
 * existing id and createdAt. Every attribute is new (createdAt = modifiedAt = now): the old ones are
 * gone, and their history records a deletion.
 */
export function replaceEntity(existing: Entity, replacement: Entity, now: number): Entity {
  const attrs: Record<Iri, Attribute[]> = {};
  for (const [attr, instances] of Object.entries(replacement.attrs)) {
    attrs[attr] = instances.map((a) => restamp(a, undefined, now));
  }
  const out: Entity = { id: existing.id, types: replacement.types, attrs, createdAt: existing.createdAt, modifiedAt: now };
  if (replacement.scope !== undefined && replacement.scope.length > 0) out.scope = replacement.scope;
  // NGSI-LD §4.22: a replacement without expiresAt makes the entity permanent.
  return replacement.expiresAt === undefined ? out : withExpiry(out, expiryOf(replacement));
}

/** The instance a single-attribute operation targets; 404 when the attribute or instance is missing. */
function targetInstance(entity: Entity, attr: Iri, datasetId: string | undefined): Attribute {
  const instances = entity.attrs[attr];
  if (!instances || instances.length === 0) throw new ResourceNotFoundError('Attribute not found', attr);
  const found = instances.find((a) => a.datasetId === datasetId);
  if (!found) {
    throw new ResourceNotFoundError(datasetId === undefined
      ? 'Attribute has no default instance' : `Attribute has no instance with datasetId ${datasetId}`, attr);
  }
  return found;
}

/**
 * Partial Attribute Update (NGSI-LD §5.6.4): the fragment is merged into the instance its datasetId
 * selects; NGSI-LD Null as payload deletes that instance.
 */
export function updateAttributePartial(entity: Entity, attr: Iri, fragment: FragmentInput, now: number): UpdateOutcome {
  const existing = targetInstance(entity, attr, fragment.datasetId);
  const d = draftOf(entity);
  if (isDeletion(fragment)) {
    removeInstance(d, attr, fragment.datasetId);
  } else {
    // NGSI-LD §5.6.4: a partial update keeps the attribute's kind (a new kind is a replacement).
    if (fragment.kind !== undefined && fragment.kind !== existing.kind) {
      throw new BadRequestDataError(`Cannot change a ${existing.kind} into a ${fragment.kind} with a partial update`, attr);
    }
    const merged = mergeAttribute(existing, fragment, attr, now);
    if (typeof merged === 'string') throw new BadRequestDataError(`Cannot update the attribute: ${merged}`, attr);
    putInstance(d, attr, merged);
  }
  return finish(d, now);
}

/** Replace Attribute (NGSI-LD §5.6.19): the instance with the same datasetId is replaced whole. */
export function replaceAttribute(entity: Entity, attr: Iri, attribute: AttributeInput, now: number): UpdateOutcome {
  if (isDeletion(attribute)) throw new BadRequestDataError('NGSI-LD Null cannot replace an attribute', attr);
  const existing = targetInstance(entity, attr, attribute.datasetId);
  const d = draftOf(entity);
  putInstance(d, attr, restamp(attribute, existing, now));
  return finish(d, now);
}

/**
 * Delete Attribute (NGSI-LD §5.6.5): the default instance, the one of `datasetId`, or with
 * `deleteAll` every instance. 404 when there is nothing to delete.
 */
export function deleteAttribute(
  entity: Entity, attr: Iri, opts: { datasetId?: string; deleteAll?: boolean; now: number },
): UpdateOutcome {
  const d = draftOf(entity);
  // NGSI-LD §4.18: scope is deleted like an attribute.
  if (attr === SCOPE) {
    if ((entity.scope ?? []).length === 0) throw new ResourceNotFoundError('Entity has no scope', attr);
    return finish(d, opts.now, reshapeMembers(d, { scope: 'deleted' }, 'replace'));
  }
  if (opts.deleteAll) {
    const instances = entity.attrs[attr];
    if (!instances || instances.length === 0) throw new ResourceNotFoundError('Attribute not found', attr);
    for (const a of instances) removeInstance(d, attr, a.datasetId);
  } else {
    targetInstance(entity, attr, opts.datasetId);
    removeInstance(d, attr, opts.datasetId);
  }
  return finish(d, opts.now);
}

/** Every instance of each listed attribute the entity has is deleted; others are left alone (purge). */
export function dropAttributes(entity: Entity, attrs: readonly Iri[], now: number): UpdateOutcome {
  const d = draftOf(entity);
  for (const attr of new Set(attrs)) {
    for (const a of entity.attrs[attr] ?? []) removeInstance(d, attr, a.datasetId);
  }
  return finish(d, now);
}
