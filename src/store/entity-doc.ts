// Encoding of an Entity into its `entities` row and back: members with their own column are not
// repeated in the JSON document.

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

export function decodeEntity(row: EntityRow): Entity {
  // The document was written by encodeEntityDoc from a typed Entity; nothing else writes it.
  const doc = JSON.parse(row.doc) as EntityDoc;
  const entity: Entity = {
    id: row.id,
    types: doc.types,
    attrs: doc.attrs,
    createdAt: row.created_at,
    modifiedAt: row.modified_at,
  };
  if (doc.scope !== undefined) entity.scope = doc.scope;
  if (row.deleted_at !== null) entity.deletedAt = row.deleted_at;
  return entity;
}
