// The geo-query case table run through parseGeoQuery and the in-memory evaluator matchesGeo.

import { describe, expect, it } from 'vitest';
import { matchesGeo, NgsiError, parseGeoQuery } from '../../../src/ngsi/index.js';
import { EDGE_CASES, EDGE_FIXTURES, GEO_PARSE_ERRORS, LYON_CASES, LYON_FIXTURES } from '../../cases/geo-cases.js';
import { mapper } from '../fake-mapper.js';

const nameOf = (id: string): string => id.slice('urn:ngsi-ld:Place:'.length);

describe('matchesGeo over the case table [§4.10]', () => {
  for (const [suite, fixtures, cases] of [['Lyon', LYON_FIXTURES, LYON_CASES], ['edges of the map', EDGE_FIXTURES, EDGE_CASES]] as const) {
    describe(suite, () => {
      for (const c of cases) {
        it(`${c.name} matches ${c.expected.length} place(s)`, () => {
          const query = parseGeoQuery(c.input, mapper);
          expect(fixtures.filter((e) => matchesGeo(query, e)).map((e) => nameOf(e.id))).toEqual(c.expected);
        });
      }
    });
  }
});

describe('parseGeoQuery errors [§4.10]', () => {
  for (const c of GEO_PARSE_ERRORS) {
    it(`rejects ${c.name} with ${c.errorType}`, () => {
      let caught: unknown;
      try {
        parseGeoQuery(c.input, mapper);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(NgsiError);
      expect(caught).toMatchObject({ errorType: c.errorType, message: c.title, status: c.errorType === 'BadRequestData' ? 400 : 403 });
      expect(caught).toHaveProperty('detail', expect.any(String));
    });
  }
});
