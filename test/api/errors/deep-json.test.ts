// Deeply nested JSON never reaches a recursive walker: bodies are refused at parse time with 400
// BadRequestData on every path that reads one, the limit is configurable, and the broker stays up.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isNestedDeeper } from '../../../src/ngsi/index.js';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const nested = (depth: number): string => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
/** An entity whose attribute value nests `depth` levels in all (the body's own two levels included). */
const entityWithDepth = (id: string, depth: number): string =>
  `{"id":"${id}","type":"T","a":{"type":"Property","value":${nested(depth - 2)}}}`;

let b: TestBroker;
beforeEach(async () => {
  b = await startTestBroker({ config: { http: { maxJsonDepth: 16 } } });
  expect((await b.request('POST', '/ngsi-ld/v1/entities', { body: { id: 'urn:x:1', type: 'T' } })).status).toBe(201);
});
afterEach(() => b.close());

describe('JSON nesting depth', () => {
  it('a body at the limit is accepted, one level deeper is 400 BadRequestData', async () => {
    const json = { 'Content-Type': 'application/json' };
    expect((await b.request('POST', '/ngsi-ld/v1/entities', { raw: entityWithDepth('urn:x:16', 16), headers: json })).status).toBe(201);
    const res = await b.request('POST', '/ngsi-ld/v1/entities', { raw: entityWithDepth('urn:x:17', 17), headers: json });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ type: ERR + 'BadRequestData', title: 'JSON nested too deeply' });
    expect((await b.request('GET', '/ngsi-ld/v1/entities/urn:x:17')).status).toBe(404);
  });

  it('2,000 levels are refused on every body-reading path, and the broker keeps answering', async () => {
    const deep = nested(2_000);
    const attrs = `{"a":{"type":"Property","value":${deep}}}`;
    const cases: Array<[string, string, string]> = [
      ['POST', '/ngsi-ld/v1/entities', `{"id":"urn:x:2","type":"T","a":{"type":"Property","value":${deep}}}`],
      ['PATCH', '/ngsi-ld/v1/entities/urn:x:1', attrs],
      ['PUT', '/ngsi-ld/v1/entities/urn:x:1', `{"type":"T","a":{"type":"Property","value":${deep}}}`],
      ['POST', '/ngsi-ld/v1/entities/urn:x:1/attrs', attrs],
      ['PATCH', '/ngsi-ld/v1/entities/urn:x:1/attrs', attrs],
      ['PATCH', '/ngsi-ld/v1/entities/urn:x:1/attrs/a', `{"type":"Property","value":${deep}}`],
      ['POST', '/ngsi-ld/v1/entityOperations/upsert', `[{"id":"urn:x:3","type":"T","a":{"type":"Property","value":${deep}}}]`],
      ['POST', '/ngsi-ld/v1/entityOperations/delete', `[${deep}]`],
      ['POST', '/ngsi-ld/v1/entityOperations/query', `{"type":"Query","entities":[{"type":"T"}],"q":${deep}}`],
      ['POST', '/ngsi-ld/v1/temporal/entities', `{"id":"urn:x:4","type":"T","a":[{"type":"Property","value":${deep},"observedAt":"2026-01-01T00:00:00Z"}]}`],
      ['POST', '/ngsi-ld/v1/entities', `{"id":"urn:x:5","type":"T","@context":${deep}}`],
    ];
    for (const [method, path, raw] of cases) {
      const headers = { 'Content-Type': raw.includes('@context') ? 'application/ld+json' : 'application/json' };
      const res = await b.request(method, path, { raw, headers });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.json.type, `${method} ${path}`).toBe(ERR + 'BadRequestData');
    }
    expect((await b.request('GET', '/health')).status).toBe(200);
  });

  it('geo-query coordinates nested too deeply are 400, not a stack overflow', async () => {
    const res = await b.request('GET', `/ngsi-ld/v1/entities?type=T&georel=near;maxDistance==1&geometry=Point&coordinates=${nested(5_000)}`);
    expect(res.status).toBe(400);
    expect(res.json.type).toBe(ERR + 'BadRequestData');
  });
});

describe('isNestedDeeper', () => {
  it('counts arrays and objects, skipping brackets inside strings and escaped quotes', () => {
    expect(isNestedDeeper('{"a":[{"b":1}]}', 3)).toBe(false);
    expect(isNestedDeeper('{"a":[{"b":1}]}', 2)).toBe(true);
    expect(isNestedDeeper('{"a":"[[[[[[\\"[[["}', 1)).toBe(false);
    expect(isNestedDeeper(nested(100_000), 100_000)).toBe(false);
    // An escaped backslash before the closing quote ends the string: the brackets after it count.
    expect(isNestedDeeper('{"a":"\\\\","b":[[1]]}', 2)).toBe(true);
    expect(isNestedDeeper('{"a":"\\"[[","b":1}', 1)).toBe(false);
  });
});
