// The geo index: one bounding box per GeoProperty instance of every attribute of a live entity, kept
// as a diff in geo_shapes and mirrored into the geo_index R*Tree under the same id (written here on
// insert; a trigger of migration 2 removes the R*Tree row on delete).

import { shapeBounds, toShape, type Bounds, type Entity, type Iri } from '../../ngsi/index.js';
import type { EntityIndexerFactory } from './entity-indexer.js';
import { changedAttributes } from './entity-diff.js';

export interface GeoShapeRow {
  attr: Iri;
  bounds: Bounds;
}

interface StoredShape {
  id: number;
  attr: number;
  min_lon: number;
  max_lon: number;
  min_lat: number;
  max_lat: number;
}

/** The boxes to index for an entity; instances whose value is no valid geometry have none. */
function geoShapeRows(entity: Entity): GeoShapeRow[] {
  const rows: GeoShapeRow[] = [];
  for (const [attr, instances] of Object.entries(entity.attrs)) {
    for (const instance of instances) {
      if (instance.kind !== 'GeoProperty') continue;
      const shape = toShape(instance.value);
      const bounds = shape && shapeBounds(shape);
      if (bounds) rows.push({ attr, bounds });
    }
  }
  return rows;
}

const keyOf = (attr: number, b: Bounds): string => `${attr} ${b.minLon} ${b.maxLon} ${b.minLat} ${b.maxLat}`;

/** Whether any attribute that changed holds a GeoProperty before or after (else the index stands). */
function touchesGeometry(previous: Entity, next: Entity): boolean {
  const isGeo = (e: Entity, attr: string): boolean => (e.attrs[attr] ?? []).some((i) => i.kind === 'GeoProperty');
  for (const attr of changedAttributes(previous, next)) if (isGeo(previous, attr) || isGeo(next, attr)) return true;
  return false;
}

export const createGeoIndexer: EntityIndexerFactory = (db, iris) => {
  const list = db.prepare<[number], StoredShape>('SELECT id, attr, min_lon, max_lon, min_lat, max_lat FROM geo_shapes WHERE entity = ?');
  const insert = db.prepare<[number, number, number, number, number, number]>(
    'INSERT INTO geo_shapes (entity, attr, min_lon, max_lon, min_lat, max_lat) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const insertTree = db.prepare<[number, number, number, number, number, number, number]>(
    'INSERT INTO geo_index (id, minLon, maxLon, minLat, maxLat, entity, attr) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const removeOne = db.prepare<[number]>('DELETE FROM geo_shapes WHERE id = ?');
  const removeAll = db.prepare<[number]>('DELETE FROM geo_shapes WHERE entity = ?');

  return {
    name: 'geo',
    write(rowid, entity, isNew, previous) {
      if (previous && !touchesGeometry(previous, entity)) return;
      const wanted = geoShapeRows(entity).map(({ attr, bounds }) => ({ attr: iris.intern(attr), bounds }));
      // NOTE: an update that leaves every geometry in place (the common case: a sensor reading)
      // writes no R*Tree page; only boxes that changed are replaced.
      const present = new Map<string, number[]>();
      for (const s of isNew ? [] : list.all(rowid)) {
        const key = keyOf(s.attr, { minLon: s.min_lon, maxLon: s.max_lon, minLat: s.min_lat, maxLat: s.max_lat });
        present.set(key, [...(present.get(key) ?? []), s.id]);
      }
      for (const { attr, bounds: b } of wanted) {
        const ids = present.get(keyOf(attr, b));
        if (ids && ids.length > 0) ids.pop();
        else {
          const id = Number(insert.run(rowid, attr, b.minLon, b.maxLon, b.minLat, b.maxLat).lastInsertRowid);
          insertTree.run(id, b.minLon, b.maxLon, b.minLat, b.maxLat, rowid, attr);
        }
      }
      for (const ids of present.values()) for (const id of ids) removeOne.run(id);
    },
    remove(rowid) {
      removeAll.run(rowid);
    },
  };
};
