// GeoJSON geometries (RFC 7946, NGSI-LD §4.7) as typed values for geo-queries: narrowing a stored or
// received value to a Shape, and walking its positions. Coordinates are WGS84 [lon, lat(, alt)].

import { checkGeometry } from '../geometry.js';
import { isPlainObject } from '../json.js';
import { assertNever } from '../model.js';

/** [longitude, latitude] with an optional altitude, which geo-queries ignore. */
export type Position = [number, number, ...number[]];

export type PointShape = { type: 'Point'; coordinates: Position };
export type MultiPointShape = { type: 'MultiPoint'; coordinates: Position[] };
export type LineStringShape = { type: 'LineString'; coordinates: Position[] };
export type MultiLineStringShape = { type: 'MultiLineString'; coordinates: Position[][] };
export type PolygonShape = { type: 'Polygon'; coordinates: Position[][] };
export type MultiPolygonShape = { type: 'MultiPolygon'; coordinates: Position[][][] };
export type GeometryCollectionShape = { type: 'GeometryCollection'; geometries: Shape[] };

/** The six geometry types a geo-query may carry (NGSI-LD §4.10). */
export type QueryShape =
  | PointShape | MultiPointShape | LineStringShape | MultiLineStringShape | PolygonShape | MultiPolygonShape;

/** Every geometry a GeoProperty value may hold (NGSI-LD §4.7). */
export type Shape = QueryShape | GeometryCollectionShape;

export const QUERY_GEOMETRY_TYPES: readonly QueryShape['type'][] = [
  'Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon',
];

/**
 * A valid GeoJSON geometry (object or JSON text) as a Shape, or undefined. Stored values were checked
 * when written; this guards the geo-query code against anything else.
 */
export function toShape(value: unknown): Shape | undefined {
  if (!isPlainObject(value) && typeof value !== 'string') return undefined;
  const check = checkGeometry(value);
  // checkGeometry verified the type name and that the coordinates (or members) nest as that type needs.
  return check.ok ? (check.geometry as Shape) : undefined;
}

/** Every position of a shape, in document order (rings and members flattened). */
export function* positionsOf(shape: Shape): Generator<Position> {
  switch (shape.type) {
    case 'Point': yield shape.coordinates; return;
    case 'MultiPoint': case 'LineString': yield* shape.coordinates; return;
    case 'MultiLineString': case 'Polygon': for (const part of shape.coordinates) yield* part; return;
    case 'MultiPolygon': for (const poly of shape.coordinates) for (const ring of poly) yield* ring; return;
    case 'GeometryCollection': for (const member of shape.geometries) yield* positionsOf(member); return;
    default: assertNever(shape, 'geometry');
  }
}

/**
 * How many positions `coordinates` holds when read as `type` needs, counting only arrays at the
 * expected depth; cheap on malformed input, so a size limit can be enforced before validation.
 */
export function countPositions(type: QueryShape['type'], coordinates: unknown): number {
  const depth = { Point: 0, MultiPoint: 1, LineString: 1, MultiLineString: 2, Polygon: 2, MultiPolygon: 3 }[type];
  const count = (v: unknown, d: number): number => {
    if (!Array.isArray(v)) return 0;
    if (d === 0) return 1;
    let n = 0;
    for (const item of v) n += count(item, d - 1);
    return n;
  };
  return count(coordinates, depth);
}
