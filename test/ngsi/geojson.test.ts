import { describe, expect, it } from 'vitest';
import {
  LOCATION, checkGeometry, formatDateTime, parseDateTime, parseEntity, renderFeatureCollection, renderGeoJson,
  type GeoJsonOptions,
} from '../../src/ngsi/index.js';
import { T0, dc, mapper } from './fake-mapper.js';

/** A flat projection of these members. */
const names = (members: string[]): Map<string, undefined> => new Map(members.map((m) => [m, undefined]));

const point = { type: 'Point', coordinates: [2.35, 48.85] };
const entity = parseEntity({
  id: 'urn:x:1', type: 'T', location: point, area: [{ value: { type: 'Point', coordinates: [0, 0] }, datasetId: 'urn:d:1' }], n: 1,
}, mapper, { now: T0 });
const opts: GeoJsonOptions = { format: 'normalized', sysAttrs: false, geometryProperty: LOCATION };

describe('renderGeoJson [§4.5.17]', () => {
  it('renders a Feature with the geometry and the other members as properties', () => {
    expect(renderGeoJson(entity, mapper, { ...opts, format: 'keyValues' })).toEqual({
      id: 'urn:x:1', type: 'Feature', geometry: point,
      properties: { type: 'T', location: point, area: { type: 'Point', coordinates: [0, 0] }, n: 1 },
    });
  });

  it('uses another GeoProperty, its first instance when there is no default one, and null when missing', () => {
    expect(renderGeoJson(entity, mapper, { ...opts, geometryProperty: dc('area') }).geometry).toEqual({ type: 'Point', coordinates: [0, 0] });
    expect(renderGeoJson(entity, mapper, { ...opts, geometryProperty: dc('n') }).geometry).toBeNull();
    expect(renderGeoJson(entity, mapper, { ...opts, geometryProperty: dc('none') }).geometry).toBeNull();
  });

  it('keeps the geometry when a projection hides the attribute', () => {
    const out = renderGeoJson(entity, mapper, { ...opts, pick: names(['id', dc('n')]) });
    expect(out).toEqual({ id: 'urn:x:1', type: 'Feature', geometry: point, properties: { n: { type: 'Property', value: 1 } } });
  });

  it('renders a FeatureCollection', () => {
    const out = renderFeatureCollection([entity, entity], mapper, opts);
    expect(out).toMatchObject({ type: 'FeatureCollection', features: [{ type: 'Feature' }, { type: 'Feature' }] });
  });
});

describe('geometry and time helpers', () => {
  it('drops foreign members of a geometry', () => {
    expect(checkGeometry({ ...point, bbox: [0, 0, 1, 1] })).toEqual({ ok: true, geometry: point });
    expect(checkGeometry('Paris')).toMatchObject({ ok: false });
  });

  it.each([
    ['2024-01-01T00:00:00Z', T0],
    ['2024-01-01T01:00:00+01:00', T0],
    ['2024-01-01T01:00:00+0100', T0],
    ['2023-12-31T23:00-01:00', T0],
    ['2024-01-01T00:00:00.123456Z', T0 + 123],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
  ])('parses %s', (text, ms) => expect(parseDateTime(text)).toBe(ms));

  it.each(['2024-01-01', '2024-01-01T00:00:00', '2024-01-01T24:00:00Z', '2024-01-01T00:60:00Z', '2024-04-31T00:00:00Z', 'x'])(
    'refuses %s', (text) => expect(parseDateTime(text)).toBeUndefined(),
  );

  it('formats as ISO 8601 UTC with milliseconds', () => {
    expect(formatDateTime(T0)).toBe('2024-01-01T00:00:00.000Z');
  });
});
