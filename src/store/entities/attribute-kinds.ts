// The attribute-kinds index (table entity_attr_kinds, migration 4): for each live entity, the kinds
// of each attribute and their instance counts, written as a diff so an unchanged shape writes nothing.

import { ATTRIBUTE_KINDS, type AttributeKind, type Entity } from '../../ngsi/index.js';
import type { EntityIndexerFactory } from './entity-indexer.js';
import { changedAttributes, withAttributes } from './entity-diff.js';

/**
 * The on-disk code of each attribute kind (table entity_attr_kinds, migration 4). Part of the schema:
 * a code is never changed or reused; a new kind gets the next number.
 */
export const KIND_CODES: Readonly<Record<AttributeKind, number>> = {
  Property: 1,
  Relationship: 2,
  GeoProperty: 3,
  LanguageProperty: 4,
  VocabProperty: 5,
  JsonProperty: 6,
  ListProperty: 7,
  ListRelationship: 8,
};

interface KindRow {
  attr: number;
  kind: number;
  instances: number;
}

const KIND_BY_CODE = new Map<number, AttributeKind>(ATTRIBUTE_KINDS.map((kind) => [KIND_CODES[kind], kind]));

/** The kind stored under a code; undefined for a code this broker does not know. */
export function kindOfCode(code: number): AttributeKind | undefined {
  return KIND_BY_CODE.get(code);
}

const keyOf = (attr: number, kind: number): string => `${attr}:${kind}`;

export const createAttributeKindIndexer: EntityIndexerFactory = (db, iris) => {
  const list = db.prepare<[number], KindRow>('SELECT attr, kind, instances FROM entity_attr_kinds WHERE entity = ?');
  const insert = db.prepare<[number, number, number, number]>(
    'INSERT INTO entity_attr_kinds (entity, attr, kind, instances) VALUES (?, ?, ?, ?)',
  );
  const recount = db.prepare<[number, number, number, number]>(
    'UPDATE entity_attr_kinds SET instances = ? WHERE entity = ? AND attr = ? AND kind = ?',
  );
  const drop = db.prepare<[number, number, number]>('DELETE FROM entity_attr_kinds WHERE entity = ? AND attr = ? AND kind = ?');
  const dropAll = db.prepare<[number]>('DELETE FROM entity_attr_kinds WHERE entity = ?');

  /** The rows an entity should have, keyed by attr:kind. */
  const rowsOf = (entity: Entity): Map<string, KindRow> => {
    const rows = new Map<string, KindRow>();
    for (const [iri, instances] of Object.entries(entity.attrs)) {
      if (instances.length === 0) continue;
      const attr = iris.intern(iri);
      for (const instance of instances) {
        const kind = KIND_CODES[instance.kind];
        const key = keyOf(attr, kind);
        const row = rows.get(key);
        if (row) row.instances += 1;
        else rows.set(key, { attr, kind, instances: 1 });
      }
    }
    return rows;
  };

  return {
    name: 'attribute-kinds',
    write(rowid, entity, isNew, previous) {
      let wanted: Map<string, KindRow>;
      let present: Iterable<KindRow>;
      if (isNew) {
        // A new row: nothing to diff against.
        wanted = rowsOf(entity);
        present = [];
      } else if (previous) {
        // Diff in memory, and only the attributes that changed.
        const changed = changedAttributes(previous, entity);
        if (changed.size === 0) return;
        wanted = rowsOf(withAttributes(entity, changed));
        present = rowsOf(withAttributes(previous, changed)).values();
      } else {
        wanted = rowsOf(entity);
        present = list.all(rowid);
      }
      for (const row of present) {
        const key = keyOf(row.attr, row.kind);
        const target = wanted.get(key);
        if (!target) drop.run(rowid, row.attr, row.kind);
        else if (target.instances !== row.instances) recount.run(target.instances, rowid, row.attr, row.kind);
        wanted.delete(key);
      }
      for (const row of wanted.values()) insert.run(rowid, row.attr, row.kind, row.instances);
    },
    remove(rowid) {
      dropAll.run(rowid);
    },
  };
};
