// Migration 3: attribute values indexed for q queries (NGSI-LD §4.9), one row per comparable element
// of every top-level attribute instance of a live entity (maintained by query-values.ts).

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- typ: 0 no comparable element (marks the instance), 1 number, 2 string (num holds its instant
    -- when it is a date-time), 3 boolean (num 0/1), 4 Relationship object, 5 VocabProperty IRI.
    -- inst numbers the instances (datasetIds) of the attribute, seq the elements of one instance.
    CREATE TABLE attr_values (
      entity INTEGER NOT NULL REFERENCES entities (rowid) ON DELETE CASCADE,
      attr   INTEGER NOT NULL REFERENCES iris (id),
      inst   INTEGER NOT NULL,
      seq    INTEGER NOT NULL,
      typ    INTEGER NOT NULL,
      num    REAL,
      str    TEXT,
      PRIMARY KEY (entity, attr, inst, seq)
    ) WITHOUT ROWID;
    -- Both carry the primary key, so "which entities" is answered from the index alone.
    CREATE INDEX attr_values_num ON attr_values (attr, typ, num);
    CREATE INDEX attr_values_str ON attr_values (attr, str, typ);
  `);
}
