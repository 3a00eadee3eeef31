// parseGeoQuery: what a valid geo-query becomes (the error cases live in the case table).

import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONTEXT_VOCAB, hasGeoQueryMembers, LOCATION, MAX_GEO_QUERY_POSITIONS, OBSERVATION_SPACE, parseGeoQuery,
} from '../../../src/ngsi/index.js';
import { mapper } from '../fake-mapper.js';

describe('parseGeoQuery [§4.10]', () => {
  it('parses near with a distance bound, on location by default', () => {
    expect(parseGeoQuery({ georel: 'near;maxDistance==1500.5', geometry: 'Point', coordinates: '[4.832, 45.7578]' }, mapper)).toEqual({
      georel: 'near', distance: { bound: 'maxDistance', metres: 1500.5 }, geometry: { type: 'Point', coordinates: [4.832, 45.7578] }, geoproperty: LOCATION,
    });
    expect(parseGeoQuery({ georel: 'near;minDistance==1e3', geometry: 'Point', coordinates: [0, 0] }, mapper))
      .toMatchObject({ distance: { bound: 'minDistance', metres: 1000 } });
  });

  it('expands geoproperty with the context', () => {
    const base = { georel: 'intersects', geometry: 'LineString', coordinates: '[[4.8,45.7],[4.9,45.8]]' };
    expect(parseGeoQuery({ ...base, geoproperty: 'observationSpace' }, mapper).geoproperty).toBe(OBSERVATION_SPACE);
    expect(parseGeoQuery({ ...base, geoproperty: 'zone' }, mapper).geoproperty).toBe(DEFAULT_CONTEXT_VOCAB + 'zone');
  });

  it('accepts JSON text with spaces, altitudes, and a polygon with a hole', () => {
    const query = parseGeoQuery({
      georel: 'within', geometry: 'Polygon',
      coordinates: '[ [[0,0,10],[10,0,10],[10,10,10],[0,10,10],[0,0,10]], [[4,4],[6,4],[6,6],[4,6],[4,4]] ]',
    }, mapper);
    expect(query).toMatchObject({ georel: 'within', geometry: { type: 'Polygon' } });
    expect(query.geometry.coordinates).toHaveLength(2);
  });

  it(`accepts exactly ${MAX_GEO_QUERY_POSITIONS} positions`, () => {
    const coordinates = Array.from({ length: MAX_GEO_QUERY_POSITIONS }, (_, i) => [(i % 100) / 100, Math.floor(i / 100) / 100]);
    expect(parseGeoQuery({ georel: 'intersects', geometry: 'MultiPoint', coordinates }, mapper).geometry.coordinates).toHaveLength(MAX_GEO_QUERY_POSITIONS);
  });
});

describe('hasGeoQueryMembers', () => {
  it('is true when any of georel, geometry or coordinates is present, and not for geoproperty alone', () => {
    expect(hasGeoQueryMembers({})).toBe(false);
    expect(hasGeoQueryMembers({ geoproperty: 'location' })).toBe(false);
    expect(hasGeoQueryMembers({ coordinates: '[1,2]' })).toBe(true);
    expect(hasGeoQueryMembers({ georel: 'within' })).toBe(true);
  });
});
