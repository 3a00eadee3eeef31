// Encoding of an Entity into its `entities` row and back: members with their own column are not
// repeated in the JSON document.

import { createGenerations } from '../../lib/index.js';
import type { Entity, EntityId, Iri, AttributeInstances } from '../../ngsi/index.js';

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
  /** A transient entity's expiry (its expires_at column is the index of the expiry job, migration 26). */
  expiresAt?: number;
  expiresAtText?: string;
}

export function encodeEntityDoc(entity: Entity): string {
  const doc: EntityDoc = { types: entity.types, attrs: entity.attrs };
  if (entity.scope !== undefined) doc.scope = entity.scope;
  if (entity.expiresAt !== undefined) {
    doc.expiresAt = entity.expiresAt;
    if (entity.expiresAtText !== undefined) doc.expiresAtText = entity.expiresAtText;
  }
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
  if (doc.expiresAt !== undefined) {
    entity.expiresAt = doc.expiresAt;
    if (doc.expiresAtText !== undefined) entity.expiresAtText = doc.expiresAtText;
  }
  return entity;
}

/** The types of a stored document, without building the entity. */
export function typesOfDoc(docJson: string): Iri[] {
  return (JSON.parse(docJson) as EntityDoc).types;
}

export function decodeEntity(row: EntityRow): Entity {
  return entityOf(row.id, row.doc, row.created_at, row.modified_at, row.deleted_at);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

/** A listing's read of rows it does not hold decoded: the key pair, then the ROW columns. */
export const VERSIONED_ROW = `e.rowid, e.version, ${ROW}`;

/** The VERSIONED_ROW columns in order, as a statement in raw mode returns them. */
export type VersionedTuple = [rowid: number, version: number, ...EntityTuple];

export interface VersionedDecoder {
  /** The entity decoded from this row at this version, when it is kept. */
  known(rowid: number, version: number): Entity | undefined;
  /** Decodes a row and keeps the entity for its version. */
  decode(row: VersionedTuple): Entity;
}

/**
 * Decoded entities of up to `max` recent rows (two generations), each for the version it was read
 * at: listings decode the same documents again and again (a dashboard polling one query), and reading
 * and parsing them is most of a page's cost. Every write of a row stores a version never used before
 * (migration 17), so a kept entity with the row's current version is what decoding again would give.
 * NOTE: the entities it returns are shared and deeply frozen: a consumer that would change one throws
 * instead of corrupting later answers.
 */
export function createVersionedDecoder(max: number): VersionedDecoder {
  const decoded = createGenerations<number, { version: number; entity: Entity }>(max);
  return {
    known(rowid, version) {
      const hit = decoded.get(rowid);
      return hit !== undefined && hit.version === version ? hit.entity : undefined;
    },
    decode(row) {
      const entity = deepFreeze(entityOf(row[2], row[3], row[4], row[5], row[6]));
      decoded.set(row[0], { version: row[1], entity });
      return entity;
    },
  };
}
