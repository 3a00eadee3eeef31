// The geo-query case table run through the SQL translation: R*Tree prefilter plus ngsi_geo(), with
// paging and counts, on a real store.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseGeoQuery, type Entity } from '../../src/ngsi/index.js';
import type { Store } from '../../src/store/index.js';
import { EDGE_CASES, EDGE_FIXTURES, LYON_CASES, LYON_FIXTURES, type GeoCase } from '../cases/geo-cases.js';
import { mapper } from '../ngsi/fake-mapper.js';
import { memoryStore } from './helpers.js';

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
