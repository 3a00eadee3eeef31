// `near` through the SQL of a listing (the R*Tree's candidates, their shapes, the test of a position)
// answers what the exact test answers on the entities themselves, boundary points included.

import fc from 'fast-check';
import { fuzzRuns } from '../../helpers/fuzz-runs.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileGeoQuery, haversineMetres, parseGeoQuery, type Entity } from '../../../src/ngsi/index.js';
import type { Store } from '../../../src/store/index.js';
import { mapper } from '../../ngsi/fake-mapper.js';
import { memoryStore } from '../helpers.js';

const T = Date.UTC(2024, 0, 1);
const LOCATION = 'https://uri.etsi.org/ngsi-ld/location';
const TENANT = 'near';

const place = (n: number, lon: number, lat: number): Entity => ({
  id: `urn:ngsi-ld:Place:${n}`, types: ['urn:T'], createdAt: T, modifiedAt: T,
  attrs: { [LOCATION]: [{ kind: 'GeoProperty', value: { type: 'Point', coordinates: [lon, lat] }, createdAt: T, modifiedAt: T, sub: {} }] },
});

describe('near in SQL', () => {
  let store: Store;
  let n = 0;
  beforeAll(() => {
    store = memoryStore();
  });
  afterAll(() => store.close());

  const lon = fc.double({ min: -180, max: 180, noNaN: true });
  const lat = fc.double({ min: -90, max: 90, noNaN: true });
  // Points near the centre (metres to a few km) and anywhere on the globe.
  const offset = fc.oneof(fc.double({ min: -0.05, max: 0.05, noNaN: true }), fc.double({ min: -1e-6, max: 1e-6, noNaN: true }));

  it('finds exactly the points the exact test finds, for max and min distances, points on the bound included', () => {
    fc.assert(fc.property(
      lon, lat, fc.array(fc.tuple(offset, offset), { minLength: 1, maxLength: 12 }), fc.array(fc.tuple(lon, lat), { maxLength: 4 }),
      fc.oneof(fc.double({ min: 0, max: 20_000, noNaN: true }), fc.double({ min: 0, max: 3e7, noNaN: true }), fc.nat({ max: 11 })),
      fc.constantFrom('maxDistance', 'minDistance'),
      (cLon, cLat, near, far, distance, bound) => {
        const clamp = (v: number, m: number): number => Math.max(-m, Math.min(m, v));
        const points = [...near.map(([dx, dy]) => [clamp(cLon + dx, 180), clamp(cLat + dy, 90)] as const), ...far];
        // A whole number below 12 picks a point and puts the bound exactly on its distance.
        const onBound = Number.isInteger(distance) && distance < points.length;
        const metres = onBound ? haversineMetres([cLon, cLat], [points[distance]![0], points[distance]![1]]) : distance;
        const first = n;
        const entities = points.map(([x, y]) => place(n++, x, y));
        store.transaction(() => {
          for (const e of entities) store.entities.insert(TENANT, e);
        });
        const query = parseGeoQuery({ georel: `near;${bound}==${metres}`, geometry: 'Point', coordinates: `[${cLon},${cLat}]`, geoproperty: 'location' }, mapper);
        const matcher = compileGeoQuery(query);
        const expected = entities.filter((e) => matcher.matchesEntity(e)).map((e) => e.id);
        const found = store.entities.list({ tenant: TENANT }, { ids: entities.map((e) => e.id), filters: [{ kind: 'geo', query }], limit: 100, offset: 0, count: false });
        store.transaction(() => {
          for (let i = first; i < n; i++) store.archive.purge(TENANT, `urn:ngsi-ld:Place:${i}`, T);
        });
        expect(found.entities.map((e) => e.id)).toEqual(expected);
      },
    ), { numRuns: fuzzRuns(300) });
  });
});
