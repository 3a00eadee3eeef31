// Migration 4: attribute kinds per live entity, for discovery (NGSI-LD §5.7.5-5.7.9): which kinds an
// attribute has in each entity and how many instances of each, kept by the attribute-kinds indexer.

import type BetterSqlite3 from 'better-sqlite3';

/**
 * The on-disk code of each attribute kind when this migration shipped. NOTE: a frozen copy; the live
 * codes are in entities/attribute-kinds.ts, and a test checks they keep these.
 */
export const KIND_CODES: Readonly<Record<string, number>> = {
  Property: 1,
  Relationship: 2,
  GeoProperty: 3,
  LanguageProperty: 4,
  VocabProperty: 5,
  JsonProperty: 6,
  ListProperty: 7,
  ListRelationship: 8,
};

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- One row per (live entity, attribute, kind); instances counts the datasetId instances of that kind.
    -- Rows go away when the entity is soft-deleted, so every row belongs to a live entity.
    CREATE TABLE entity_attr_kinds (
      entity    INTEGER NOT NULL REFERENCES entities (rowid) ON DELETE CASCADE,
      attr      INTEGER NOT NULL REFERENCES iris (id),
      kind      INTEGER NOT NULL,
      instances INTEGER NOT NULL,
      PRIMARY KEY (entity, attr, kind)
    ) WITHOUT ROWID;
    CREATE INDEX entity_attr_kinds_attr ON entity_attr_kinds (attr, entity);
  `);
  // Entities written before this migration: their attribute IRIs are already in iris.
  db.prepare(`
    INSERT INTO entity_attr_kinds (entity, attr, kind, instances)
    SELECT e.rowid, i.id, c.value, count(*)
    FROM entities e, json_each(e.doc, '$.attrs') a, json_each(a.value) inst
    JOIN iris i ON i.iri = a.key
    JOIN json_each(@codes) c ON c.key = json_extract(inst.value, '$.kind')
    WHERE e.deleted_at IS NULL
    GROUP BY e.rowid, i.id, c.value
  `).run({ codes: JSON.stringify(KIND_CODES) });
}
