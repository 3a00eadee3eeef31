// Ordering of query results (NGSI-LD v1.9 §4.23): orderBy on id, type, system timestamps and
// attribute paths, ascending or descending, several members, with pagination and count; temporal
// queries order by id only (§5.7.4.4).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const P = '/ngsi-ld/v1/entities';
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const name = (value: string, sub: number) => ({ type: 'Property', value, sub: { type: 'Property', value: sub } });

let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
  // Created in the order 2, 1, 3, 4: creation order differs from id order.
  const entities = [
    { id: 'urn:x:2', type: 'Building', name: name('B', 2) },
    { id: 'urn:x:1', type: 'Building', name: name('A', 1) },
    { id: 'urn:x:3', type: 'Building', name: name('C', 3) },
    { id: 'urn:x:4', type: 'Building' },
  ];
  for (const body of entities) {
    expect((await b.request('POST', P, { body })).status).toBe(201);
    b.clock.advance(1000);
  }
  for (const [id, n] of [['urn:x:2', 20], ['urn:x:1', 10]] as const) {
    const res = await b.request('POST', `/ngsi-ld/v1/temporal/entities/${id}/attrs`, {
      body: { t: [{ type: 'Property', value: n, observedAt: '2026-01-01T00:00:00Z' }] },
    });
    expect(res.status).toBe(204);
  }
});
afterAll(() => b.close());

const ids = async (query: string): Promise<string[]> => {
  const res = await b.request('GET', `${P}?type=Building&${query}`);
  expect(res.status, query).toBe(200);
  return res.json.map((e: { id: string }) => e.id);
};

describe('orderBy', () => {
  it('orders by an attribute value, its sub-attribute, id, or creation time', async () => {
    expect(await ids('orderBy=name')).toEqual(['urn:x:1', 'urn:x:2', 'urn:x:3', 'urn:x:4']);
    expect(await ids('orderBy=name.sub;desc')).toEqual(['urn:x:3', 'urn:x:2', 'urn:x:1', 'urn:x:4']);
    expect(await ids('orderBy=id;desc')).toEqual(['urn:x:4', 'urn:x:3', 'urn:x:2', 'urn:x:1']);
    expect(await ids('orderBy=createdAt')).toEqual(['urn:x:2', 'urn:x:1', 'urn:x:3', 'urn:x:4']);
    expect(await ids('orderBy=name.createdAt;desc')).toEqual(['urn:x:3', 'urn:x:1', 'urn:x:2', 'urn:x:4']);
    expect(await ids(`orderBy=${encodeURIComponent('type;asc,name;desc')}`)).toEqual(['urn:x:3', 'urn:x:2', 'urn:x:1', 'urn:x:4']);
  });

  it('pages and counts in that order, in GET and POST queries', async () => {
    const res = await b.request('GET', `${P}?type=Building&orderBy=name;desc&limit=2&offset=1&count=true`);
    expect(res.json.map((e: { id: string }) => e.id)).toEqual(['urn:x:2', 'urn:x:1']);
    expect(res.headers.get('ngsild-results-count')).toBe('4');
    expect(res.headers.get('link')).toContain('rel="next"');
    const post = await b.request('POST', '/ngsi-ld/v1/entityOperations/query?orderBy=id;desc&limit=2', {
      body: { type: 'Query', entities: [{ type: 'Building' }] },
    });
    expect(post.json.map((e: { id: string }) => e.id)).toEqual(['urn:x:4', 'urn:x:3']);
  });

  it('400 BadRequestData for a malformed orderBy', async () => {
    for (const bad of ['name;up', 'id.x', 'name;asc;desc', ',', 'a b']) {
      const res = await b.request('GET', `${P}?type=Building&orderBy=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(res.json.type, bad).toBe(ERR + 'BadRequestData');
    }
  });

  it('a temporal query orders by id only', async () => {
    const query = 'type=Building&timerel=after&timeAt=2025-01-01T00:00:00Z';
    const asc = await b.request('GET', `/ngsi-ld/v1/temporal/entities?${query}&orderBy=id`);
    expect(asc.json.map((e: { id: string }) => e.id)).toEqual(['urn:x:1', 'urn:x:2']);
    const desc = await b.request('GET', `/ngsi-ld/v1/temporal/entities?${query}&orderBy=id;desc`);
    expect(desc.json.map((e: { id: string }) => e.id)).toEqual(['urn:x:2', 'urn:x:1']);
    for (const bad of ['name', 'createdAt', 'id,name']) {
      const res = await b.request('GET', `/ngsi-ld/v1/temporal/entities?${query}&orderBy=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(res.json.type, bad).toBe(ERR + 'BadRequestData');
    }
  });
});

describe('attrs', () => {
  it('400 BadRequestData when attrs names core members or malformed names', async () => {
    for (const attrs of ['id,type', 'createdAt', 'na<me']) {
      const res = await b.request('GET', `${P}?attrs=${encodeURIComponent(attrs)}`);
      expect(res.status, attrs).toBe(400);
      expect(res.json.type, attrs).toBe(ERR + 'BadRequestData');
    }
    expect((await b.request('GET', `${P}?attrs=name`)).status).toBe(200);
  });
});
