// Migration 6: fewer index pages per write. History keeps only its (series, t) index (and the
// partial one of deletion rows): the createdAt and modifiedAt indexes cost two random leaves per
// reading to serve rare reads. Numbers no longer enter the values' string index. An entity row had
// three indexes on (tenant, id) or tenant; one is enough (see entities.ts). A new box goes into the
// R*Tree without a trigger; the attribute kinds keep only their entity-leading key and the types
// only their type-leading one.

import type BetterSqlite3 from 'better-sqlite3';

// NOTE: a frozen copy of the bucket name check; the live one (history/buckets.ts) may change.
const BUCKET_NAME = /^history_\d{6}(\d{2})?$/;

function checkBucketName(name: string): string {
  if (!BUCKET_NAME.test(name)) throw new Error(`invalid history bucket name: ${name}`);
  return name;
}

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- Text equality and ranges; any comparison of str implies str IS NOT NULL, so the planner still
    -- uses it, and a numeric attribute writes no entry.
    DROP INDEX attr_values_str;
    CREATE INDEX attr_values_str ON attr_values (attr, str, typ) WHERE str IS NOT NULL;
    -- Live uniqueness is checked by the insert itself, inside the write transaction; creation order
    -- is the table's own rowid order.
    DROP INDEX entities_live_id;
    DROP INDEX entities_live_order;
    -- The geo indexer writes the R*Tree row itself, with the box it just wrote: the trigger doing it
    -- cost about as much again as the R*Tree insert (the delete trigger stays; deletes are rare).
    DROP TRIGGER geo_shapes_insert;
    -- "Entities having attribute A" is read from the values index (see q-sql.ts); discovery by
    -- attribute scans the kinds, which are a few rows per entity.
    DROP INDEX entity_attr_kinds_attr;
    -- Type rows keyed (type, entity) only: a type's entities in creation order, and "has entity E
    -- one of these types" by seeks; an entity's own rows are known from its document.
    CREATE TABLE entity_types_by_iri (
      entity INTEGER NOT NULL REFERENCES entities (rowid) ON DELETE CASCADE,
      iri    INTEGER NOT NULL REFERENCES iris (id),
      PRIMARY KEY (iri, entity)
    ) WITHOUT ROWID;
    INSERT INTO entity_types_by_iri (entity, iri) SELECT entity, iri FROM entity_types;
    DROP TABLE entity_types;
    ALTER TABLE entity_types_by_iri RENAME TO entity_types;
  `);
  for (const name of db.prepare<[], string>('SELECT name FROM history_buckets').pluck().all()) {
    const table = checkBucketName(name);
    db.exec(`DROP INDEX IF EXISTS ${table}_series_created; DROP INDEX IF EXISTS ${table}_series_modified;`);
  }
}
