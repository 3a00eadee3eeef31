// GeoJSON geometries (RFC 7946) as GeoProperty values: shape and range checks, in WGS84 lon/lat.
// NGSI-LD §4.7 allows the seven geometry types; a value may also arrive as JSON text.

import type { GeoPropertyAttr, Json } from './model.js';
import { isNestedDeeper, isPlainObject, toJson } from './json.js';

export type Geometry = GeoPropertyAttr['value'];

/**
 * Deepest nesting of geometry JSON text (a MultiPolygon's coordinates nest four deep; collections
 * add two levels each); checked before parsing so no deep text reaches the recursive checks.
 */
export const MAX_GEOMETRY_DEPTH = 16;

export const GEOMETRY_TYPES: ReadonlySet<string> = new Set([
  'Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon', 'GeometryCollection',
]);

export type GeometryCheck = { ok: true; geometry: Geometry } | { ok: false; reason: string };

/** The shape of a geometry (a geometry type name and its coordinates or members), valid or not. */
export function looksLikeGeometry(v: unknown): boolean {
  return isPlainObject(v) && typeof v.type === 'string' && GEOMETRY_TYPES.has(v.type)
    && (v.type === 'GeometryCollection' ? 'geometries' in v : 'coordinates' in v);
}

function positionProblem(p: unknown): string | undefined {
  if (!Array.isArray(p) || p.length < 2 || p.length > 3) return 'a position must be [longitude, latitude(, altitude)]';
  if (!p.every((n) => typeof n === 'number' && Number.isFinite(n))) return 'position members must be numbers';
  const [lon, lat] = p;
  if (typeof lon === 'number' && (lon < -180 || lon > 180)) return `longitude ${lon} is outside [-180, 180]`;
  if (typeof lat === 'number' && (lat < -90 || lat > 90)) return `latitude ${lat} is outside [-90, 90]`;
  return undefined;
}

function positionsProblem(ps: unknown, min: number, what: string): string | undefined {
  if (!Array.isArray(ps) || ps.length < min) return `${what} needs at least ${min} position(s)`;
  for (const p of ps) {
    const problem = positionProblem(p);
    if (problem) return problem;
  }
  return undefined;
}

function ringProblem(ring: unknown): string | undefined {
  const problem = positionsProblem(ring, 4, 'a polygon ring');
  if (problem || !Array.isArray(ring)) return problem;
  const first: unknown = ring[0];
  const last: unknown = ring[ring.length - 1];
  const closed = Array.isArray(first) && Array.isArray(last) && first.length === last.length
    && first.every((n, i) => n === last[i]);
  return closed ? undefined : 'a polygon ring must be closed (first position equal to the last)';
}

function listProblem(items: unknown, what: string, check: (item: unknown) => string | undefined): string | undefined {
  if (!Array.isArray(items) || items.length === 0) return `${what} must be a non-empty array`;
  for (const item of items) {
    const problem = check(item);
    if (problem) return problem;
  }
  return undefined;
}

const polygonProblem = (rings: unknown): string | undefined => listProblem(rings, 'Polygon coordinates', ringProblem);

function coordinatesProblem(type: string, c: unknown): string | undefined {
  switch (type) {
    case 'Point': return positionProblem(c);
    case 'MultiPoint': return positionsProblem(c, 1, 'a MultiPoint');
    case 'LineString': return positionsProblem(c, 2, 'a LineString');
    case 'MultiLineString':
      return listProblem(c, 'MultiLineString coordinates', (l) => positionsProblem(l, 2, 'a LineString'));
    case 'Polygon': return polygonProblem(c);
    case 'MultiPolygon': return listProblem(c, 'MultiPolygon coordinates', polygonProblem);
    default: return `unknown geometry type '${type}'`;
  }
}

function geometryProblem(v: unknown): string | undefined {
  if (!isPlainObject(v)) return 'a geometry must be a GeoJSON object';
  if (typeof v.type !== 'string' || !GEOMETRY_TYPES.has(v.type)) {
    return `'${String(v.type)}' is not a GeoJSON geometry type`;
  }
  if (v.type === 'GeometryCollection') return listProblem(v.geometries, 'geometries', geometryProblem);
  return coordinatesProblem(v.type, v.coordinates);
}

/**
 * Checks a GeoProperty value (an object, or JSON text of one) and keeps `type` with `coordinates`
 * or `geometries`; other members (`bbox`, foreign members) are dropped.
 */
export function checkGeometry(v: unknown): GeometryCheck {
  let candidate = v;
  if (typeof v === 'string') {
    if (!v.trimStart().startsWith('{')) return { ok: false, reason: 'the value is neither a GeoJSON object nor JSON text of one' };
    if (isNestedDeeper(v, MAX_GEOMETRY_DEPTH)) return { ok: false, reason: `the geometry nests more than ${MAX_GEOMETRY_DEPTH} levels` };
    try {
      candidate = JSON.parse(v);
    } catch {
      return { ok: false, reason: 'the value is neither a GeoJSON object nor JSON text of one' };
    }
  }
  const reason = geometryProblem(candidate);
  if (reason !== undefined || !isPlainObject(candidate) || typeof candidate.type !== 'string') {
    return { ok: false, reason: reason ?? 'invalid geometry' };
  }
  const member = candidate.type === 'GeometryCollection' ? 'geometries' : 'coordinates';
  const content: Json | undefined = toJson(candidate[member]);
  if (content === undefined) return { ok: false, reason: `invalid ${member}` };
  return { ok: true, geometry: { type: candidate.type, [member]: content } };
}
