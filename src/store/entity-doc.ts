// Encoding of an Entity into its `entities` row and back: members with their own column are not
// repeated in the JSON document.

import { createGenerations } from '../lib/index.js';
import type { Entity, EntityId, Iri, AttributeInstances } from '../ngsi/index.js';

/** The columns of an EntityRow, selected from `entities e`. */
export const ROW = 'e.id, e.doc, e.created_at, e.modified_at, e.deleted_at';

export interface EntityRow {
  id: EntityId;
  doc: string;
  created_at: number;
  modified_at: number;
  deleted_at: number | null;
}

/** The ROW columns in order, as a statement in raw mode returns them. */
export type EntityTuple = [id: EntityId, doc: string, createdAt: number, modifiedAt: number, deletedAt: number | null];

/** The JSON document: what Entity holds beyond the columns. */
interface EntityDoc {
  types: Iri[];
  scope?: string[];
  attrs: Record<Iri, AttributeInstances>;
}

export function encodeEntityDoc(entity: Entity): string {
  const doc: EntityDoc = { types: entity.types, attrs: entity.attrs };
  if (entity.scope !== undefined) doc.scope = entity.scope;
  return JSON.stringify(doc);
}

/**
 * NOTE: the parsed document is already in domain shape, so decoding is one JSON.parse and no walk:
 * listings spend most of their decoding time here.
 */
function entityOf(id: EntityId, docJson: string, createdAt: number, modifiedAt: number, deletedAt: number | null): Entity {
  // The document was written by encodeEntityDoc from a typed Entity; nothing else writes it.
  const doc = JSON.parse(docJson) as EntityDoc;
  const entity: Entity = { id, types: doc.types, attrs: doc.attrs, createdAt, modifiedAt };
  if (doc.scope !== undefined) entity.scope = doc.scope;
  if (deletedAt !== null) entity.deletedAt = deletedAt;
  return entity;
}

/** The types of a stored document, without building the entity. */
export function typesOfDoc(docJson: string): Iri[] {
  return (JSON.parse(docJson) as EntityDoc).types;
}

export function decodeEntity(row: EntityRow): Entity {
  return entityOf(row.id, row.doc, row.created_at, row.modified_at, row.deleted_at);
}

/** decodeEntity for a raw-mode row: arrays cost less to build than one object per row. */
export function decodeEntityTuple(row: EntityTuple): Entity {
  return entityOf(row[0], row[1], row[2], row[3], row[4]);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

export type TupleDecoder = (row: EntityTuple) => Entity;

/**
 * decodeEntityTuple with a memory of up to `max` recent decodings (two generations): listings decode
 * the same documents again and again (a dashboard polling one query), and parsing them is most of a
 * large page's cost.
 * A decoding is reused only when the stored text and columns are identical, so it is always what
 * decoding again would give. NOTE: the entities it returns are shared and deeply frozen: a consumer
 * that would change one throws instead of corrupting later answers.
 */
export function createTupleDecoder(max: number): TupleDecoder {
  const decoded = createGenerations<EntityId, { doc: string; entity: Entity }>(max);
  return (row) => {
    const [id, doc, createdAt, modifiedAt, deletedAt] = row;
    const hit = decoded.get(id);
    if (hit && hit.doc === doc && hit.entity.createdAt === createdAt && hit.entity.modifiedAt === modifiedAt
      && (hit.entity.deletedAt ?? null) === deletedAt) return hit.entity;
    const entity = deepFreeze(entityOf(id, doc, createdAt, modifiedAt, deletedAt));
    decoded.set(id, { doc, entity });
    return entity;
  };
}
