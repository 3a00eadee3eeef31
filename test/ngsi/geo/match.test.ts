// matchesGeo beyond the case table: which attribute instances take part, collections, and stored
// values that are not valid geometries.

import fc from 'fast-check';
import { fuzzRuns } from '../../helpers/fuzz-runs.js';
import { describe, expect, it } from 'vitest';
import { compileGeoQuery, LOCATION, matchesGeo, parseGeoQuery, type Attribute, type Entity } from '../../../src/ngsi/index.js';
import { mapper } from '../fake-mapper.js';

const T = Date.UTC(2024, 0, 1);
const withLocation = (...instances: Attribute[]): Entity => ({ id: 'urn:e', types: ['https://example.org/T'], attrs: { [LOCATION]: instances }, createdAt: T, modifiedAt: T });
const geoProperty = (value: unknown): Attribute =>
  // Deliberately unchecked values, as a damaged document could hold them.
  ({ kind: 'GeoProperty', value: value as { type: string }, createdAt: T, modifiedAt: T, sub: {} });
const unitSquare = parseGeoQuery({ georel: 'within', geometry: 'Polygon', coordinates: '[[[0,0],[1,0],[1,1],[0,1],[0,0]]]' }, mapper);
const intersectsSquare = parseGeoQuery({ georel: 'intersects', geometry: 'Polygon', coordinates: '[[[0,0],[1,0],[1,1],[0,1],[0,0]]]' }, mapper);

describe('matchesGeo [§4.10]', () => {
  it('looks only at GeoProperty instances of the geoproperty', () => {
    const property: Attribute = { kind: 'Property', value: { type: 'Point', coordinates: [0.5, 0.5] }, createdAt: T, modifiedAt: T, sub: {} };
    expect(matchesGeo(unitSquare, withLocation(property))).toBe(false);
    expect(matchesGeo(unitSquare, withLocation(property, geoProperty({ type: 'Point', coordinates: [0.5, 0.5] })))).toBe(true);
  });

  it('relates a MultiLineString entity as one geometry', () => {
    const mls = geoProperty({ type: 'MultiLineString', coordinates: [[[0.1, 0.1], [0.2, 0.2]], [[0.5, 0.5], [2, 2]]] });
    expect(matchesGeo(unitSquare, withLocation(mls))).toBe(false);
    expect(matchesGeo(intersectsSquare, withLocation(mls))).toBe(true);
  });

  it('relates a GeometryCollection entity through its members', () => {
    const inside = geoProperty({ type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [0.5, 0.5] }, { type: 'LineString', coordinates: [[0.1, 0.1], [0.9, 0.2]] }] });
    const straddling = geoProperty({ type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [0.5, 0.5] }, { type: 'Point', coordinates: [5, 5] }] });
    expect(matchesGeo(unitSquare, withLocation(inside))).toBe(true);
    expect(matchesGeo(unitSquare, withLocation(straddling))).toBe(false);
    expect(matchesGeo(intersectsSquare, withLocation(straddling))).toBe(true);
    const near = parseGeoQuery({ georel: 'near;maxDistance==10', geometry: 'Point', coordinates: '[5, 5]' }, mapper);
    expect(matchesGeo(near, withLocation(straddling))).toBe(true);
  });

  it('never matches a stored value that is not a valid geometry, whatever the georel', () => {
    const broken = [
      geoProperty({ type: 'Point', coordinates: [500, 0] }),
      geoProperty({ type: 'Polygon', coordinates: [[[0, 0], [1, 0], [0, 0]]] }),
      geoProperty('not a geometry'),
      geoProperty(null),
    ];
    const disjoint = parseGeoQuery({ georel: 'disjoint', geometry: 'Point', coordinates: '[50, 50]' }, mapper);
    const far = parseGeoQuery({ georel: 'near;minDistance==1', geometry: 'Point', coordinates: '[50, 50]' }, mapper);
    for (const query of [unitSquare, disjoint, far]) expect(matchesGeo(query, withLocation(...broken))).toBe(false);
  });

  it('does not fail on a self-intersecting stored polygon', () => {
    const bowTie = geoProperty({ type: 'Polygon', coordinates: [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]] });
    expect(() => matchesGeo(unitSquare, withLocation(bowTie))).not.toThrow();
    expect(matchesGeo(intersectsSquare, withLocation(bowTie))).toBe(true);
  });

  it('tests stored instances given as JSON', () => {
    const matcher = compileGeoQuery(unitSquare);
    expect(matcher.matchesInstances([{ kind: 'GeoProperty', value: { type: 'Point', coordinates: [0.5, 0.5] } }])).toBe(true);
    expect(matcher.matchesInstances({ kind: 'GeoProperty', value: { type: 'Point', coordinates: [0.5, 0.5] } })).toBe(false);
    expect(matcher.matchesInstances(null)).toBe(false);
  });
});

describe('matchesPosition (a Point of the shape index, from its coordinates)', () => {
  it('answers as the test of the Point instance does, for near and the other relations', () => {
    const position = fc.oneof(
      fc.tuple(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: -90, max: 90, noNaN: true })),
      fc.tuple(fc.double({ noNaN: true }), fc.double({ noNaN: true })),
    );
    const near = fc.record({
      bound: fc.constantFrom('maxDistance', 'minDistance'),
      metres: fc.oneof(fc.integer({ min: 0, max: 20_000_000 }), fc.double({ min: 0, max: 1e6, noNaN: true })),
      center: fc.tuple(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: -90, max: 90, noNaN: true })),
    }).map(({ bound, metres, center }) => parseGeoQuery({ georel: `near;${bound}==${metres}`, geometry: 'Point', coordinates: JSON.stringify(center) }, mapper));
    const query = fc.oneof(near, fc.constant(unitSquare), fc.constant(intersectsSquare));
    fc.assert(fc.property(query, position, (q, [lon, lat]) => {
      const matcher = compileGeoQuery(q);
      expect(matcher.matchesPosition(lon, lat)).toBe(matcher.matchesInstances([{ kind: 'GeoProperty', value: { type: 'Point', coordinates: [lon, lat] } }]));
    }), { numRuns: fuzzRuns(5_000) });
  });

  it('tells a point just inside maxDistance from one just outside', () => {
    const q = parseGeoQuery({ georel: 'near;maxDistance==1000', geometry: 'Point', coordinates: '[4.83,45.75]' }, mapper);
    const m = compileGeoQuery(q);
    // 0.009 degrees of latitude is about 1,000.8 m: outside; 0.0089 about 989.6 m: inside.
    expect(m.matchesPosition(4.83, 45.759)).toBe(false);
    expect(m.matchesPosition(4.83, 45.7589)).toBe(true);
  });
});
