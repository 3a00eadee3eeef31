// Migration 2: R*Tree bounding boxes of GeoProperty values, for the geo-query prefilter, and the
// boxes of entities that already exist.

import type BetterSqlite3 from 'better-sqlite3';
import { geoBoundsOf } from './migration-002-geo-bounds.js';

/** What this migration reads of an entity's document: its attribute instances. */
interface StoredDoc {
  attrs: Record<string, Array<{ kind: string; value?: unknown }>>;
}

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- One row per GeoProperty instance of a live entity: its bounding box in lon/lat degrees. The
    -- indexer keeps this table; the triggers mirror it into the R*Tree, which has no usable index
    -- on entity for updates and deletes.
    CREATE TABLE geo_shapes (
      id      INTEGER PRIMARY KEY,
      entity  INTEGER NOT NULL REFERENCES entities (rowid) ON DELETE CASCADE,
      attr    INTEGER NOT NULL REFERENCES iris (id),
      min_lon REAL    NOT NULL,
      max_lon REAL    NOT NULL,
      min_lat REAL    NOT NULL,
      max_lat REAL    NOT NULL
    );
    CREATE INDEX geo_shapes_entity ON geo_shapes (entity, attr);

    -- NOTE: an R*Tree stores 32-bit floats, rounding each box outwards; queries add their own slack.
    CREATE VIRTUAL TABLE geo_index USING rtree (id, minLon, maxLon, minLat, maxLat, +entity INTEGER, +attr INTEGER);

    CREATE TRIGGER geo_shapes_insert AFTER INSERT ON geo_shapes BEGIN
      INSERT INTO geo_index (id, minLon, maxLon, minLat, maxLat, entity, attr)
      VALUES (NEW.id, NEW.min_lon, NEW.max_lon, NEW.min_lat, NEW.max_lat, NEW.entity, NEW.attr);
    END;
    CREATE TRIGGER geo_shapes_delete AFTER DELETE ON geo_shapes BEGIN
      DELETE FROM geo_index WHERE id = OLD.id;
    END;
  `);

  const rows = db.prepare<[], { rowid: number; doc: string }>(
    'SELECT rowid, id, doc, created_at, modified_at, deleted_at FROM entities WHERE deleted_at IS NULL',
  );
  const internIri = db.prepare<[string]>('INSERT OR IGNORE INTO iris (iri) VALUES (?)');
  const iriId = db.prepare<[string], number>('SELECT id FROM iris WHERE iri = ?').pluck();
  const insert = db.prepare<[number, number, number, number, number, number]>(
    'INSERT INTO geo_shapes (entity, attr, min_lon, max_lon, min_lat, max_lat) VALUES (?, ?, ?, ?, ?, ?)',
  );
  for (const row of rows.all()) {
    // The document was written by the store's entity encoder; nothing else writes it.
    const { attrs } = JSON.parse(row.doc) as StoredDoc;
    for (const [attr, instances] of Object.entries(attrs)) {
      for (const instance of instances) {
        const b = instance.kind === 'GeoProperty' ? geoBoundsOf(instance.value) : undefined;
        if (!b) continue;
        internIri.run(attr);
        const attrId = iriId.get(attr);
        if (attrId !== undefined) insert.run(row.rowid, attrId, b.minLon, b.maxLon, b.minLat, b.maxLat);
      }
    }
  }
}
