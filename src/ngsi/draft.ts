// A copy-on-write working copy of an entity for the update rules: instance lookup by datasetId,
// writes and deletions that record what changed, and the final outcome. Inputs are never mutated.

import type { Attribute, Entity, Iri } from './model.js';

/** One attribute instance written (its new state) or deleted, for history and change events. */
export interface Change {
  attr: Iri;
  datasetId?: string;
  /** The new state of the instance; absent when it was deleted. */
  instance?: Attribute;
  deleted?: true;
}

/** An attribute left alone, with why (NGSI-LD §5.2.18 UpdateResult / NotUpdatedDetails). */
export interface NotUpdated {
  attr: Iri;
  reason: string;
}

export interface UpdateOutcome {
  entity: Entity;
  changes: Change[];
  /** Attributes with at least one instance written or deleted, in order of first change. */
  updated: Iri[];
  notUpdated: NotUpdated[];
}

export interface Draft {
  readonly base: Entity;
  readonly attrs: Record<Iri, Attribute[]>;
  readonly changes: Change[];
  readonly updated: Iri[];
  readonly notUpdated: NotUpdated[];
}

export function draftOf(entity: Entity): Draft {
  return { base: entity, attrs: { ...entity.attrs }, changes: [], updated: [], notUpdated: [] };
}

export function findInstance(d: Draft, attr: Iri, datasetId: string | undefined): Attribute | undefined {
  return d.attrs[attr]?.find((a) => a.datasetId === datasetId);
}

/** Why an instance could not be found (attribute missing, or no instance with that datasetId). */
export function missingReason(d: Draft, attr: Iri, datasetId: string | undefined): string {
  if (!d.attrs[attr]?.length) return 'attribute does not exist';
  return datasetId === undefined ? 'attribute has no default instance (without datasetId)'
    : `attribute has no instance with datasetId ${datasetId}`;
}

function markUpdated(d: Draft, attr: Iri): void {
  if (!d.updated.includes(attr)) d.updated.push(attr);
}

/** Writes an instance, replacing the one with the same datasetId or adding it. */
export function putInstance(d: Draft, attr: Iri, instance: Attribute): void {
  const list = d.attrs[attr] ?? [];
  const at = list.findIndex((a) => a.datasetId === instance.datasetId);
  d.attrs[attr] = at < 0 ? [...list, instance] : list.map((a, i) => (i === at ? instance : a));
  d.changes.push(instance.datasetId === undefined ? { attr, instance } : { attr, datasetId: instance.datasetId, instance });
  markUpdated(d, attr);
}

/** Deletes the instance with that datasetId; the attribute goes when its last instance goes. */
export function removeInstance(d: Draft, attr: Iri, datasetId: string | undefined): void {
  const list = (d.attrs[attr] ?? []).filter((a) => a.datasetId !== datasetId);
  if (list.length > 0) d.attrs[attr] = list;
  else delete d.attrs[attr];
  d.changes.push(datasetId === undefined ? { attr, deleted: true } : { attr, datasetId, deleted: true });
  markUpdated(d, attr);
}

export function skip(d: Draft, attr: Iri, reason: string): void {
  d.notUpdated.push({ attr, reason });
}

/**
 * The outcome: the same entity object when nothing changed, else a new one with modifiedAt = now.
 * `reshape` applies entity-level changes (types, scope) and says whether it changed anything.
 */
export function finish(d: Draft, now: number, reshape?: (e: Entity) => Entity | undefined): UpdateOutcome {
  const candidate: Entity = { ...d.base, attrs: d.attrs };
  const reshaped = reshape?.(candidate);
  const changed = d.changes.length > 0 || reshaped !== undefined;
  const entity = changed ? { ...(reshaped ?? candidate), modifiedAt: now } : d.base;
  return { entity, changes: d.changes, updated: d.updated, notUpdated: d.notUpdated };
}
