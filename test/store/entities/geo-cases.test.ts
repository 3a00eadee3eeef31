// The geo-query case table run through the SQL translation: R*Tree prefilter plus ngsi_geo(), with
// paging and counts, on a real store.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOCATION, OBSERVATION_SPACE, parseGeoQuery, type Entity } from '../../../src/ngsi/index.js';
import type { Store } from '../../../src/store/index.js';
import { EDGE_CASES, EDGE_FIXTURES, LYON_CASES, LYON_FIXTURES, type GeoCase } from '../../cases/geo-cases.js';
import { mapper } from '../../ngsi/fake-mapper.js';
import { memoryStore } from '../helpers.js';

const nameOf = (id: string): string => id.slice('urn:ngsi-ld:Place:'.length);
const TENANT = 'geo';

function runSuite(suite: string, fixtures: Entity[], cases: GeoCase[]): void {
  describe(suite, () => {
    let store: Store;
    beforeEach(() => {
      store = memoryStore();
      for (const e of fixtures) store.entities.insert(TENANT, e);
      // The same places in another tenant must never show up.
      for (const e of fixtures) store.entities.insert('other', e);
    });
    afterEach(() => store.close());

    for (const c of cases) {
      it(`${c.name} returns ${c.expected.length} place(s), counted exactly`, () => {
        const query = parseGeoQuery(c.input, mapper);
        const all = store.entities.list({ tenant: TENANT }, { filters: [{ kind: 'geo', query }], limit: 100, offset: 0, count: true });
        expect(all.entities.map((e) => nameOf(e.id))).toEqual(c.expected);
        expect(all.count).toBe(c.expected.length);
        // A second page starts right after the first: LIMIT/OFFSET apply after the exact test.
        const page = store.entities.list({ tenant: TENANT }, { filters: [{ kind: 'geo', query }], limit: 2, offset: 1, count: true });
        expect(page.entities.map((e) => nameOf(e.id))).toEqual(c.expected.slice(1, 3));
        expect(page.count).toBe(c.expected.length);
      });
    }
  });
}

describe('store geo filter over the case table [§4.10]', () => {
  runSuite('Lyon', LYON_FIXTURES, LYON_CASES);
  runSuite('edges of the map', EDGE_FIXTURES, EDGE_CASES);
});

describe('store geo filter: the geoproperty queried and no other', () => {
  const T = Date.UTC(2024, 0, 1);
  const point = (lon: number, lat: number): Entity['attrs'][string] =>
    [{ kind: 'GeoProperty', value: { type: 'Point', coordinates: [lon, lat] }, createdAt: T, modifiedAt: T, sub: {} }];
  const place = (name: string, attrs: Entity['attrs']): Entity => ({ id: `urn:ngsi-ld:Place:${name}`, types: ['urn:T'], attrs, createdAt: T, modifiedAt: T });
  // One place located far off but observed here, one located here: each geoproperty finds its own.
  const fixtures = [
    place('observedHere', { [LOCATION]: point(5.5, 46.5), [OBSERVATION_SPACE]: point(4.85, 45.76) }),
    place('locatedHere', { [LOCATION]: point(4.85, 45.76) }),
    place('observedFar', { [OBSERVATION_SPACE]: point(5.5, 46.5) }),
  ];
  let store: Store;
  beforeEach(() => {
    store = memoryStore();
    for (const e of fixtures) store.entities.insert(TENANT, e);
  });
  afterEach(() => store.close());

  const cases: Array<[geoproperty: string, georel: string, expected: string[]]> = [
    ['location', 'near;maxDistance==1000', ['locatedHere']],
    ['observationSpace', 'near;maxDistance==1000', ['observedHere']],
    ['location', 'near;minDistance==50000', ['observedHere']],
    ['observationSpace', 'near;minDistance==50000', ['observedFar']],
    ['location', 'intersects', ['locatedHere']],
    ['observationSpace', 'intersects', ['observedHere']],
  ];
  for (const [geoproperty, georel, expected] of cases) {
    it(`${georel} over ${geoproperty} finds ${expected.join(', ')}`, () => {
      const query = parseGeoQuery({ georel, geometry: 'Point', coordinates: '[4.85,45.76]', geoproperty }, mapper);
      const found = store.entities.list({ tenant: TENANT }, { filters: [{ kind: 'geo', query }], limit: 10, offset: 0, count: true });
      expect(found.entities.map((e) => nameOf(e.id))).toEqual(expected);
    });
  }
});
