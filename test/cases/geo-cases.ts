// The geo-query case table (NGSI-LD §4.10): fixtures around Place Bellecour in Lyon and at the edges
// of the map, and the ids each query must return. Run against matchesGeo and the SQL translation.

import type { Entity, GeoPropertyAttr, GeoQueryInput, Position } from '../../src/ngsi/index.js';
import { LOCATION, OBSERVATION_SPACE } from '../../src/ngsi/index.js';

const T = Date.UTC(2024, 0, 1);
const TYPE = 'https://example.org/ns#Place';

/**
 * A point of a 0.01° grid over central Lyon: x steps east from 4.80°E, y north from 45.74°N (one
 * step is about 776 m east-west and 1112 m north-south). Rounded, so equal grid points are equal numbers.
 */
export const at = (x: number, y: number): Position => [Number((4.8 + x / 100).toFixed(6)), Number((45.74 + y / 100).toFixed(6))];
const ring = (...corners: Array<[number, number]>): Position[] => [...corners, corners[0] ?? [0, 0]].map(([x, y]) => at(x, y));
const square = (x0: number, y0: number, x1: number, y1: number): Position[] => ring([x0, y0], [x1, y0], [x1, y1], [x0, y1]);

const geo = (value: GeoPropertyAttr['value'], datasetId?: string): GeoPropertyAttr => ({
  kind: 'GeoProperty', value, createdAt: T, modifiedAt: T, sub: {}, ...(datasetId === undefined ? {} : { datasetId }),
});
const place = (name: string, attrs: Entity['attrs']): Entity => ({ id: `urn:ngsi-ld:Place:${name}`, types: [TYPE], attrs, createdAt: T, modifiedAt: T });
const located = (name: string, value: GeoPropertyAttr['value']): Entity => place(name, { [LOCATION]: [geo(value)] });

// NOTE: a point meant to lie on an edge sits on a vertex or an edge along a grid line: between
// decimal coordinates in binary floating point, a point is rarely exactly on a slanted edge.

/** The query square Q, [2,6] × [2,6] on the grid, and QH: Q with the hole [3.5,4.5] × [3.5,4.5]. */
export const Q = [square(2, 2, 6, 6)];
export const QH = [square(2, 2, 6, 6), square(3.5, 3.5, 4.5, 4.5)];

export const LYON_FIXTURES: Entity[] = [
  located('pointInside', { type: 'Point', coordinates: at(3, 3) }),
  located('pointInHole', { type: 'Point', coordinates: at(4, 4) }),
  located('pointOutside', { type: 'Point', coordinates: at(8, 3) }),
  located('pointOnEdge', { type: 'Point', coordinates: at(2, 4) }),
  located('lineInside', { type: 'LineString', coordinates: [at(2.5, 2.5), at(3, 5.5)] }),
  located('lineCrossing', { type: 'LineString', coordinates: [at(5, 3), at(8, 3)] }),
  located('lineThroughHole', { type: 'LineString', coordinates: [at(3, 4), at(5, 4)] }),
  located('lineOutside', { type: 'LineString', coordinates: [at(7, 7), at(9, 8)] }),
  located('polygonInside', { type: 'Polygon', coordinates: [square(2.5, 2.5, 3, 3)] }),
  located('polygonOverlapping', { type: 'Polygon', coordinates: [square(5, 5, 7, 7)] }),
  // Q's area, with an entity-side hole [3,5] × [3,5].
  located('polygonWithHole', { type: 'Polygon', coordinates: [square(0, 0, 8, 8), square(3, 3, 5, 5)] }),
  // Q itself, walked the other way round from another corner.
  located('polygonEqual', { type: 'Polygon', coordinates: [ring([6, 6], [6, 2], [2, 2], [2, 6])] }),
  located('multiPointInside', { type: 'MultiPoint', coordinates: [at(3, 3), at(5, 5)] }),
  located('multiPointStraddling', { type: 'MultiPoint', coordinates: [at(3, 3), at(8, 8)] }),
  located('multiPolygon', { type: 'MultiPolygon', coordinates: [[square(2.5, 5, 3, 5.5)], [square(7, 7, 7.5, 7.5)]] }),
  // Two instances: the default one far away, the GPS one inside Q. Any matching instance counts.
  place('twoInstances', { [LOCATION]: [geo({ type: 'Point', coordinates: at(9, 9) }), geo({ type: 'Point', coordinates: at(3, 5) }, 'urn:ngsi-ld:Dataset:gps')] }),
  place('noLocation', { 'https://example.org/ns#name': [{ kind: 'Property', value: 'no geometry', createdAt: T, modifiedAt: T, sub: {} }] }),
  place('observedOnly', { [OBSERVATION_SPACE]: [geo({ type: 'Polygon', coordinates: [square(2.5, 2.5, 3.5, 3.5)] })] }),
];

export interface GeoCase {
  name: string;
  /** As the query parameters carry it (coordinates as JSON text) or as a POST query body does. */
  input: GeoQueryInput;
  /** Names of the matching places, in creation order. */
  expected: string[];
}

const text = (coordinates: unknown): string => JSON.stringify(coordinates);
const point = (x: number, y: number): string => text(at(x, y));

export const LYON_CASES: GeoCase[] = [
  // within: the entity geometry lies inside the query geometry, not just on its boundary.
  { name: 'within Q', input: { georel: 'within', geometry: 'Polygon', coordinates: text(Q) },
    expected: ['pointInside', 'pointInHole', 'lineInside', 'lineThroughHole', 'polygonInside', 'polygonEqual', 'multiPointInside', 'twoInstances'] },
  { name: 'within QH (query polygon with a hole)', input: { georel: 'within', geometry: 'Polygon', coordinates: text(QH) },
    expected: ['pointInside', 'lineInside', 'polygonInside', 'multiPointInside', 'twoInstances'] },
  { name: 'within Q given as an array (POST query body)', input: { georel: 'within', geometry: 'Polygon', coordinates: Q },
    expected: ['pointInside', 'pointInHole', 'lineInside', 'lineThroughHole', 'polygonInside', 'polygonEqual', 'multiPointInside', 'twoInstances'] },
  { name: 'within a MultiPolygon', input: { georel: 'within', geometry: 'MultiPolygon', coordinates: text([[square(2.4, 2.4, 3.1, 3.1)], [square(3.9, 3.9, 4.1, 4.1)]]) },
    expected: ['pointInside', 'pointInHole', 'polygonInside'] },
  { name: 'within Q over another geoproperty', input: { georel: 'within', geometry: 'Polygon', coordinates: text(Q), geoproperty: 'observationSpace' },
    expected: ['observedOnly'] },
  // contains: the entity geometry contains the query geometry.
  { name: 'contains a Point in the middle of Q', input: { georel: 'contains', geometry: 'Point', coordinates: point(4, 4) },
    expected: ['pointInHole', 'lineThroughHole', 'polygonEqual'] },
  { name: 'contains a Point in the ring of the holed polygon', input: { georel: 'contains', geometry: 'Point', coordinates: point(1, 1) },
    expected: ['polygonWithHole'] },
  { name: 'contains a LineString', input: { georel: 'contains', geometry: 'LineString', coordinates: text([at(2.6, 2.6), at(2.9, 2.9)]) },
    expected: ['polygonInside', 'polygonWithHole', 'polygonEqual'] },
  { name: 'contains a Polygon', input: { georel: 'contains', geometry: 'Polygon', coordinates: text([square(2.6, 2.6, 2.9, 2.9)]) },
    expected: ['polygonInside', 'polygonWithHole', 'polygonEqual'] },
  { name: 'contains QH', input: { georel: 'contains', geometry: 'Polygon', coordinates: text(QH) },
    expected: ['polygonEqual'] },
  // intersects / disjoint: any point in common, boundaries included.
  { name: 'intersects Q', input: { georel: 'intersects', geometry: 'Polygon', coordinates: text(Q) },
    expected: ['pointInside', 'pointInHole', 'pointOnEdge', 'lineInside', 'lineCrossing', 'lineThroughHole', 'polygonInside', 'polygonOverlapping',
      'polygonWithHole', 'polygonEqual', 'multiPointInside', 'multiPointStraddling', 'multiPolygon', 'twoInstances'] },
  { name: 'intersects QH', input: { georel: 'intersects', geometry: 'Polygon', coordinates: text(QH) },
    expected: ['pointInside', 'pointOnEdge', 'lineInside', 'lineCrossing', 'lineThroughHole', 'polygonInside', 'polygonOverlapping',
      'polygonWithHole', 'polygonEqual', 'multiPointInside', 'multiPointStraddling', 'multiPolygon', 'twoInstances'] },
  { name: 'intersects a LineString', input: { georel: 'intersects', geometry: 'LineString', coordinates: text([at(4, 0), at(4, 10)]) },
    expected: ['pointInHole', 'lineThroughHole', 'polygonWithHole', 'polygonEqual'] },
  { name: 'intersects a MultiLineString', input: { georel: 'intersects', geometry: 'MultiLineString', coordinates: text([[at(8, 2), at(8, 4)], [at(2, 4), at(1, 4)]]) },
    expected: ['pointOutside', 'pointOnEdge', 'lineCrossing', 'polygonWithHole', 'polygonEqual'] },
  { name: 'disjoint Q', input: { georel: 'disjoint', geometry: 'Polygon', coordinates: text(Q) },
    expected: ['pointOutside', 'lineOutside', 'twoInstances'] },
  { name: 'disjoint QH', input: { georel: 'disjoint', geometry: 'Polygon', coordinates: text(QH) },
    expected: ['pointInHole', 'pointOutside', 'lineOutside', 'twoInstances'] },
  // equals: the same point set, whatever the vertex order.
  { name: 'equals Q', input: { georel: 'equals', geometry: 'Polygon', coordinates: text(Q) }, expected: ['polygonEqual'] },
  { name: 'equals QH', input: { georel: 'equals', geometry: 'Polygon', coordinates: text(QH) }, expected: [] },
  { name: 'equals a Point', input: { georel: 'equals', geometry: 'Point', coordinates: point(3, 3) }, expected: ['pointInside'] },
  { name: 'equals a LineString walked backwards with an extra vertex', input: { georel: 'equals', geometry: 'LineString', coordinates: text([at(5, 4), at(4, 4), at(3, 4)]) },
    expected: ['lineThroughHole'] },
  // overlaps: same dimension, each has a part outside the other.
  { name: 'overlaps Q', input: { georel: 'overlaps', geometry: 'Polygon', coordinates: text(Q) }, expected: ['polygonOverlapping', 'polygonWithHole', 'multiPolygon'] },
  { name: 'overlaps QH', input: { georel: 'overlaps', geometry: 'Polygon', coordinates: text(QH) }, expected: ['polygonOverlapping', 'polygonWithHole', 'multiPolygon'] },
  { name: 'overlaps a LineString', input: { georel: 'overlaps', geometry: 'LineString', coordinates: text([at(4, 4), at(7, 4)]) }, expected: ['lineThroughHole'] },
  { name: 'overlaps a MultiPoint', input: { georel: 'overlaps', geometry: 'MultiPoint', coordinates: text([at(3, 3), at(9, 9)]) },
    expected: ['multiPointInside', 'multiPointStraddling'] },
  // near: distance from the entity geometry (0 inside a polygon, not inside its hole).
  { name: 'near;maxDistance==500 of a point', input: { georel: 'near;maxDistance==500', geometry: 'Point', coordinates: point(3, 3) },
    expected: ['pointInside', 'lineInside', 'polygonInside', 'polygonWithHole', 'polygonEqual', 'multiPointInside', 'multiPointStraddling'] },
  { name: 'near;maxDistance==500 of a point in a polygon hole', input: { georel: 'near;maxDistance==500', geometry: 'Point', coordinates: point(4, 4) },
    expected: ['pointInHole', 'lineThroughHole', 'polygonEqual'] },
  { name: 'near;maxDistance==900 of a point in a polygon hole', input: { georel: 'near;maxDistance==900', geometry: 'Point', coordinates: point(4, 4) },
    expected: ['pointInHole', 'lineThroughHole', 'polygonWithHole', 'polygonEqual'] },
  { name: 'near;minDistance==2000 of a point', input: { georel: 'near;minDistance==2000', geometry: 'Point', coordinates: point(3, 3) },
    expected: ['pointOutside', 'lineOutside', 'polygonOverlapping', 'multiPolygon', 'twoInstances'] },
  { name: 'near;maxDistance==0 of a vertex', input: { georel: 'near;maxDistance==0', geometry: 'Point', coordinates: point(5, 5) },
    expected: ['polygonOverlapping', 'polygonWithHole', 'polygonEqual', 'multiPointInside'] },
];

/** Places where boxes wrap: by the antimeridian and the North Pole. */
export const EDGE_FIXTURES: Entity[] = [
  located('eastOfAntimeridian', { type: 'Point', coordinates: [179.99, 0] }),
  located('westOfAntimeridian', { type: 'Point', coordinates: [-179.98, 0] }),
  located('nearPole', { type: 'Point', coordinates: [180, 89.99] }),
  located('nearPoleOtherSide', { type: 'Point', coordinates: [-90, 89.98] }),
  located('arcticLine', { type: 'LineString', coordinates: [[-170, 89.9], [170, 89.9]] }),
];

export const EDGE_CASES: GeoCase[] = [
  // From [-179.99, 0], [179.99, 0] is 0.02° away across ±180° (about 2.2 km) and [-179.98, 0] 0.01° (1.1 km).
  { name: 'near;maxDistance==3000 across the antimeridian', input: { georel: 'near;maxDistance==3000', geometry: 'Point', coordinates: '[-179.99, 0]' },
    expected: ['eastOfAntimeridian', 'westOfAntimeridian'] },
  { name: 'near;maxDistance==1500 across the antimeridian', input: { georel: 'near;maxDistance==1500', geometry: 'Point', coordinates: '[-179.99, 0]' },
    expected: ['westOfAntimeridian'] },
  // [0, 89.99] to [180, 89.99] is 0.02° over the pole (about 2.2 km); to [-90, 89.98] about 2.5 km.
  { name: 'near;maxDistance==3000 over the North Pole', input: { georel: 'near;maxDistance==3000', geometry: 'Point', coordinates: '[0, 89.99]' },
    expected: ['nearPole', 'nearPoleOtherSide'] },
  // The line is straight in lon/lat (RFC 7946): it runs along 89.9°N through 0°, not across the pole.
  { name: 'near;maxDistance==2000 of the arctic line, straight in lon/lat', input: { georel: 'near;maxDistance==2000', geometry: 'Point', coordinates: '[0, 89.89]' },
    expected: ['arcticLine'] },
  { name: 'near;minDistance==5000 near the pole', input: { georel: 'near;minDistance==5000', geometry: 'Point', coordinates: '[0, 89.99]' },
    expected: ['eastOfAntimeridian', 'westOfAntimeridian', 'arcticLine'] },
  { name: 'within a box on the western side of the antimeridian', input: { georel: 'within', geometry: 'Polygon', coordinates: '[[[-180,-1],[-179,-1],[-179,1],[-180,1],[-180,-1]]]' },
    expected: ['westOfAntimeridian'] },
];

export interface GeoParseErrorCase {
  name: string;
  input: GeoQueryInput;
  errorType: 'BadRequestData' | 'TooComplexQuery';
  title: string;
}

const manyPoints = Array.from({ length: 10_001 }, (_, i) => [4.8 + (i % 100) / 1000, 45.7 + Math.floor(i / 100) / 1000]);

export const GEO_PARSE_ERRORS: GeoParseErrorCase[] = [
  { name: 'georel without geometry and coordinates', input: { georel: 'within' }, errorType: 'BadRequestData', title: 'Incomplete geo-query' },
  { name: 'coordinates missing', input: { georel: 'within', geometry: 'Polygon' }, errorType: 'BadRequestData', title: 'Incomplete geo-query' },
  { name: 'georel missing', input: { geometry: 'Point', coordinates: '[4.8,45.7]' }, errorType: 'BadRequestData', title: 'Incomplete geo-query' },
  { name: 'unknown georel', input: { georel: 'inside', geometry: 'Point', coordinates: '[4.8,45.7]' }, errorType: 'BadRequestData', title: 'Invalid georel' },
  { name: 'near without a distance', input: { georel: 'near', geometry: 'Point', coordinates: '[4.8,45.7]' }, errorType: 'BadRequestData', title: 'Invalid georel' },
  { name: 'near with one equals sign', input: { georel: 'near;maxDistance=10', geometry: 'Point', coordinates: '[4.8,45.7]' }, errorType: 'BadRequestData', title: 'Invalid georel' },
  { name: 'near with a negative distance', input: { georel: 'near;maxDistance==-5', geometry: 'Point', coordinates: '[4.8,45.7]' }, errorType: 'BadRequestData', title: 'Invalid georel' },
  { name: 'near with an unknown bound', input: { georel: 'near;distance==5', geometry: 'Point', coordinates: '[4.8,45.7]' }, errorType: 'BadRequestData', title: 'Invalid georel' },
  { name: 'near with a Polygon', input: { georel: 'near;maxDistance==5', geometry: 'Polygon', coordinates: text(Q) }, errorType: 'BadRequestData', title: 'Invalid geo-query' },
  { name: 'unknown geometry', input: { georel: 'within', geometry: 'Circle', coordinates: '[4.8,45.7]' }, errorType: 'BadRequestData', title: 'Invalid geometry' },
  { name: 'GeometryCollection as query geometry', input: { georel: 'within', geometry: 'GeometryCollection', coordinates: '[]' }, errorType: 'BadRequestData', title: 'Invalid geometry' },
  { name: 'lower-case geometry', input: { georel: 'within', geometry: 'polygon', coordinates: text(Q) }, errorType: 'BadRequestData', title: 'Invalid geometry' },
  { name: 'coordinates that are not JSON', input: { georel: 'within', geometry: 'Point', coordinates: '[4.8,45.7' }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'coordinates as a bare pair', input: { georel: 'within', geometry: 'Point', coordinates: '4.8,45.7' }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'coordinates as an object', input: { georel: 'within', geometry: 'Point', coordinates: '{"x":4.8}' }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'latitude out of range', input: { georel: 'within', geometry: 'Point', coordinates: '[4.8,95]' }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'longitude out of range', input: { georel: 'within', geometry: 'Point', coordinates: '[181,45]' }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'position with text', input: { georel: 'within', geometry: 'Point', coordinates: '["4.8",45.7]' }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'Point given a list of positions', input: { georel: 'within', geometry: 'Point', coordinates: '[[4.8,45.7]]' }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'LineString of one position', input: { georel: 'intersects', geometry: 'LineString', coordinates: '[[4.8,45.7]]' }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'Polygon ring not closed', input: { georel: 'within', geometry: 'Polygon', coordinates: '[[[4.8,45.7],[4.9,45.7],[4.9,45.8],[4.8,45.8]]]' }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'Polygon ring of three positions', input: { georel: 'within', geometry: 'Polygon', coordinates: '[[[4.8,45.7],[4.9,45.7],[4.8,45.7]]]' }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'Polygon without rings nesting', input: { georel: 'within', geometry: 'Polygon', coordinates: '[[4.8,45.7],[4.9,45.7],[4.9,45.8],[4.8,45.7]]' }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'self-intersecting Polygon (bow tie)', input: { georel: 'within', geometry: 'Polygon', coordinates: '[[[4.8,45.7],[4.9,45.8],[4.9,45.7],[4.8,45.8],[4.8,45.7]]]' }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'Polygon hole outside its shell', input: { georel: 'within', geometry: 'Polygon', coordinates: text([square(0, 0, 1, 1), square(3, 3, 4, 4)]) }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'empty MultiPolygon', input: { georel: 'within', geometry: 'MultiPolygon', coordinates: '[]' }, errorType: 'BadRequestData', title: 'Invalid coordinates' },
  { name: 'geoproperty with a forbidden character', input: { georel: 'within', geometry: 'Point', coordinates: '[4.8,45.7]', geoproperty: 'loc"ation' }, errorType: 'BadRequestData', title: 'Invalid geoproperty' },
  { name: 'geoproperty that is not text', input: { georel: 'within', geometry: 'Point', coordinates: '[4.8,45.7]', geoproperty: 5 }, errorType: 'BadRequestData', title: 'Invalid geoproperty' },
  { name: 'more than 10000 positions', input: { georel: 'intersects', geometry: 'MultiPoint', coordinates: text(manyPoints) }, errorType: 'TooComplexQuery', title: 'Geometry too complex' },
];
