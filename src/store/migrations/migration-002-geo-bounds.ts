// Migration 2's own copy of how a GeoProperty value becomes the box geo_shapes keeps: the geometry
// check (RFC 7946, NGSI-LD §4.7) and the bounding box of its positions, as they were when the
// migration shipped. NOTE: frozen with the migration; never edit it, and never import live code here.

export interface GeoBounds {
  minLon: number;
  maxLon: number;
  minLat: number;
  maxLat: number;
}

type Position = [number, number, ...number[]];

/** A stored geometry, once checked: its type and its coordinates or members. */
type Geometry =
  | { type: 'Point'; coordinates: Position }
  | { type: 'MultiPoint' | 'LineString'; coordinates: Position[] }
  | { type: 'MultiLineString' | 'Polygon'; coordinates: Position[][] }
  | { type: 'MultiPolygon'; coordinates: Position[][][] }
  | { type: 'GeometryCollection'; geometries: Geometry[] };

const MAX_GEOMETRY_DEPTH = 16;
const GEOMETRY_TYPES: ReadonlySet<string> = new Set([
  'Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon', 'GeometryCollection',
]);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isEscaped(text: string, quoteAt: number): boolean {
  let backslashes = 0;
  for (let j = quoteAt - 1; j >= 0 && text.charCodeAt(j) === 0x5c; j--) backslashes++;
  return backslashes % 2 === 1;
}

function isNestedDeeper(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) return false;
      i = end;
    } else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > max) return true;
    } else if (ch === 0x7d || ch === 0x5d) {
      depth--;
    }
  }
  return false;
}

/** Whether a parsed value is JSON all through (finite numbers only). */
function isJson(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(isJson);
  return isPlainObject(v) && Object.values(v).every(isJson);
}

function isPosition(p: unknown): boolean {
  if (!Array.isArray(p) || p.length < 2 || p.length > 3) return false;
  if (!p.every((n) => typeof n === 'number' && Number.isFinite(n))) return false;
  // Checked just above: two or three finite numbers.
  const [lon, lat] = p as [number, number];
  return !(lon < -180 || lon > 180) && !(lat < -90 || lat > 90);
}

function arePositions(ps: unknown, min: number): boolean {
  return Array.isArray(ps) && ps.length >= min && ps.every(isPosition);
}

function isRing(ring: unknown): boolean {
  if (!arePositions(ring, 4) || !Array.isArray(ring)) return false;
  const first: unknown = ring[0];
  const last: unknown = ring[ring.length - 1];
  return Array.isArray(first) && Array.isArray(last) && first.length === last.length && first.every((n, i) => n === last[i]);
}

function isList(items: unknown, check: (item: unknown) => boolean): boolean {
  return Array.isArray(items) && items.length > 0 && items.every(check);
}

const isPolygon = (rings: unknown): boolean => isList(rings, isRing);

function areCoordinates(type: string, c: unknown): boolean {
  switch (type) {
    case 'Point': return isPosition(c);
    case 'MultiPoint': return arePositions(c, 1);
    case 'LineString': return arePositions(c, 2);
    case 'MultiLineString': return isList(c, (l) => arePositions(l, 2));
    case 'Polygon': return isPolygon(c);
    case 'MultiPolygon': return isList(c, isPolygon);
    default: return false;
  }
}

function isGeometry(v: unknown): boolean {
  if (!isPlainObject(v) || typeof v.type !== 'string' || !GEOMETRY_TYPES.has(v.type)) return false;
  if (v.type === 'GeometryCollection') return isList(v.geometries, isGeometry);
  return areCoordinates(v.type, v.coordinates);
}

/** A GeoProperty value (an object, or JSON text of one) as a checked geometry, or undefined. */
function toGeometry(value: unknown): Geometry | undefined {
  if (!isPlainObject(value) && typeof value !== 'string') return undefined;
  let candidate = value;
  if (typeof value === 'string') {
    if (!value.trimStart().startsWith('{') || isNestedDeeper(value, MAX_GEOMETRY_DEPTH)) return undefined;
    try {
      candidate = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (!isGeometry(candidate) || !isPlainObject(candidate)) return undefined;
  const member = candidate.type === 'GeometryCollection' ? 'geometries' : 'coordinates';
  if (!isJson(candidate[member])) return undefined;
  // isGeometry checked the type name and that the coordinates (or members) nest as that type needs.
  return { type: candidate.type, [member]: candidate[member] } as Geometry;
}

function* positionsOf(g: Geometry): Generator<Position> {
  switch (g.type) {
    case 'Point': yield g.coordinates; return;
    case 'MultiPoint': case 'LineString': yield* g.coordinates; return;
    case 'MultiLineString': case 'Polygon': for (const part of g.coordinates) yield* part; return;
    case 'MultiPolygon': for (const poly of g.coordinates) for (const ring of poly) yield* ring; return;
    case 'GeometryCollection': for (const member of g.geometries) yield* positionsOf(member); return;
  }
}

/** The bounding box of a GeoProperty value; undefined when it is no valid geometry. */
export function geoBoundsOf(value: unknown): GeoBounds | undefined {
  const geometry = toGeometry(value);
  if (!geometry) return undefined;
  let b: GeoBounds | undefined;
  for (const [lon, lat] of positionsOf(geometry)) {
    if (!b) b = { minLon: lon, maxLon: lon, minLat: lat, maxLat: lat };
    else {
      b.minLon = Math.min(b.minLon, lon);
      b.maxLon = Math.max(b.maxLon, lon);
      b.minLat = Math.min(b.minLat, lat);
      b.maxLat = Math.max(b.maxLat, lat);
    }
  }
  return b;
}
