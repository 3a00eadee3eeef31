// Query Entities over HTTP (NGSI-LD §6.4.3.2, §6.23.3.1): q, type selection, id/idPattern, scopeQ,
// geo-queries, the POST Query body, and pagination through the Link headers.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

let b: TestBroker;
const ids = (res: { json: Array<{ id: string }> }): string[] => res.json.map((e) => e.id).sort();
const room = (n: number, extra: Record<string, unknown> = {}) => ({
  id: `urn:ngsi-ld:Room:${n}`, type: 'Room',
  temperature: { type: 'Property', value: 15 + n },
  name: { type: 'Property', value: `room ${n}` },
  location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [4.83 + n * 0.01, 45.75] } },
  ...extra,
});

beforeAll(async () => {
  b = await startTestBroker();
  const batch = [
    room(1, { scope: '/lyon/east' }),
    room(2, { scope: '/lyon/west', owner: { type: 'Relationship', object: 'urn:ngsi-ld:Person:ann' } }),
    room(3, { scope: '/paris' }),
    { id: 'urn:ngsi-ld:Sensor:1', type: ['Sensor', 'Device'], temperature: { type: 'Property', value: 30 } },
    { id: 'urn:ngsi-ld:Device:1', type: 'Device', battery: { type: 'Property', value: 0.4 } },
  ];
  const res = await b.request('POST', '/ngsi-ld/v1/entityOperations/create', { body: batch });
  expect(res.status).toBe(201);
  const many = Array.from({ length: 250 }, (_, i) => ({ id: `urn:ngsi-ld:Meter:${String(i).padStart(3, '0')}`, type: 'Meter', reading: { type: 'Property', value: i } }));
  for (let i = 0; i < many.length; i += 100) {
    expect((await b.request('POST', '/ngsi-ld/v1/entityOperations/create', { body: many.slice(i, i + 100) })).status).toBe(201);
  }
});
afterAll(() => b.close());

describe('GET /entities filters', () => {
  it('q on numbers, strings and relationships', async () => {
    expect(ids(await b.request('GET', '/ngsi-ld/v1/entities?type=Room&q=temperature>16'))).toEqual(['urn:ngsi-ld:Room:2', 'urn:ngsi-ld:Room:3']);
    expect(ids(await b.request('GET', '/ngsi-ld/v1/entities?type=Room&q=name=="room 1"'))).toEqual(['urn:ngsi-ld:Room:1']);
    expect(ids(await b.request('GET', `/ngsi-ld/v1/entities?q=${encodeURIComponent('owner==urn:ngsi-ld:Person:ann')}`))).toEqual(['urn:ngsi-ld:Room:2']);
    expect(ids(await b.request('GET', `/ngsi-ld/v1/entities?q=${encodeURIComponent('temperature>=30|battery<0.5')}`))).toEqual(['urn:ngsi-ld:Device:1', 'urn:ngsi-ld:Sensor:1']);
  });
  it('type selections with AND, OR and parentheses', async () => {
    expect(ids(await b.request('GET', '/ngsi-ld/v1/entities?type=Sensor;Device'))).toEqual(['urn:ngsi-ld:Sensor:1']);
    expect(ids(await b.request('GET', '/ngsi-ld/v1/entities?type=Sensor|Room&q=temperature>17'))).toEqual(['urn:ngsi-ld:Room:3', 'urn:ngsi-ld:Sensor:1']);
    expect(ids(await b.request('GET', `/ngsi-ld/v1/entities?type=${encodeURIComponent('(Sensor;Device),Room')}&q=temperature>17`))).toEqual(['urn:ngsi-ld:Room:3', 'urn:ngsi-ld:Sensor:1']);
  });
  it('id, idPattern and attrs', async () => {
    expect(ids(await b.request('GET', '/ngsi-ld/v1/entities?type=Room&id=urn:ngsi-ld:Room:1,urn:ngsi-ld:Room:3'))).toEqual(['urn:ngsi-ld:Room:1', 'urn:ngsi-ld:Room:3']);
    expect(ids(await b.request('GET', '/ngsi-ld/v1/entities?type=*&idPattern=^urn:ngsi-ld:(Sensor|Device):'))).toEqual(['urn:ngsi-ld:Device:1', 'urn:ngsi-ld:Sensor:1']);
    const res = await b.request('GET', '/ngsi-ld/v1/entities?attrs=battery');
    expect(res.json).toEqual([{ id: 'urn:ngsi-ld:Device:1', type: 'Device', battery: { type: 'Property', value: 0.4 } }]);
  });
  it('scopeQ', async () => {
    expect(ids(await b.request('GET', '/ngsi-ld/v1/entities?type=Room&scopeQ=/lyon/%23'))).toEqual(['urn:ngsi-ld:Room:1', 'urn:ngsi-ld:Room:2']);
    expect(ids(await b.request('GET', '/ngsi-ld/v1/entities?type=Room&scopeQ=/lyon/east,/paris'))).toEqual(['urn:ngsi-ld:Room:1', 'urn:ngsi-ld:Room:3']);
  });
  it('geo near and within', async () => {
    const near = await b.request('GET', `/ngsi-ld/v1/entities?type=Room&georel=${encodeURIComponent('near;maxDistance==1000')}&geometry=Point&coordinates=${encodeURIComponent('[4.84,45.75]')}`);
    expect(ids(near)).toEqual(['urn:ngsi-ld:Room:1', 'urn:ngsi-ld:Room:2']);
    const box = JSON.stringify([[[4.845, 45.74], [4.87, 45.74], [4.87, 45.76], [4.845, 45.76], [4.845, 45.74]]]);
    expect(ids(await b.request('GET', `/ngsi-ld/v1/entities?type=Room&georel=within&geometry=Polygon&coordinates=${encodeURIComponent(box)}`))).toEqual(['urn:ngsi-ld:Room:2', 'urn:ngsi-ld:Room:3']);
  });
  it('400 with the position for a malformed q, and for malformed geo-queries', async () => {
    const res = await b.request('GET', '/ngsi-ld/v1/entities?type=Room&q=temperature>>1');
    expect(res.status).toBe(400);
    expect(res.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/BadRequestData');
    expect(res.json.title).toMatch(/position \d+/);
    expect((await b.request('GET', '/ngsi-ld/v1/entities?type=Room&georel=near;maxDistance==10&geometry=Point&coordinates=[1,')).status).toBe(400);
    expect((await b.request('GET', '/ngsi-ld/v1/entities?type=Room&georel=within&geometry=Point')).status).toBe(400);
    expect((await b.request('GET', '/ngsi-ld/v1/entities?type=Room&scopeQ=lyon')).status).toBe(400);
    expect((await b.request('GET', '/ngsi-ld/v1/entities?type=Room&idPattern=(')).status).toBe(400);
  });
});

describe('POST /entityOperations/query', () => {
  it('takes entity selectors as alternatives, with q and geoQ', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/entityOperations/query?count=true', {
      body: {
        type: 'Query',
        entities: [{ type: 'Room', idPattern: ':(1|3)$' }, { type: 'Device', id: 'urn:ngsi-ld:Device:1' }],
        q: 'temperature>15|battery>0',
      },
    });
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(['urn:ngsi-ld:Device:1', 'urn:ngsi-ld:Room:1', 'urn:ngsi-ld:Room:3']);
    expect(res.headers.get('ngsild-results-count')).toBe('3');
    const geo = await b.request('POST', '/ngsi-ld/v1/entityOperations/query', {
      body: { type: 'Query', entities: [{ type: 'Room' }], geoQ: { georel: 'near;maxDistance==600', geometry: 'Point', coordinates: [4.84, 45.75] }, pick: ['id'] },
    });
    expect(geo.json).toEqual([{ id: 'urn:ngsi-ld:Room:1' }]);
  });
  it('refuses a body that is not a Query or has unknown members', async () => {
    expect((await b.request('POST', '/ngsi-ld/v1/entityOperations/query', { body: { entities: [{ type: 'Room' }] } })).status).toBe(400);
    expect((await b.request('POST', '/ngsi-ld/v1/entityOperations/query', { body: { type: 'Query', entities: [{ type: 'Room' }], bogus: 1 } })).status).toBe(400);
    expect((await b.request('POST', '/ngsi-ld/v1/entityOperations/query', { body: { type: 'Query' } })).status).toBe(400);
  });
});

describe('pagination', () => {
  it('walks 250 entities with limit=20 through the next links, each exactly once', async () => {
    const seen: string[] = [];
    let path: string | undefined = '/ngsi-ld/v1/entities?type=Meter&limit=20&count=true';
    let pages = 0;
    while (path !== undefined && pages < 50) {
      const res = await b.request('GET', path);
      expect(res.status).toBe(200);
      expect(res.headers.get('ngsild-results-count')).toBe('250');
      seen.push(...res.json.map((e: { id: string }) => e.id));
      const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '');
      path = next?.[1];
      pages++;
    }
    expect(pages).toBe(13);
    expect(seen).toHaveLength(250);
    expect(new Set(seen).size).toBe(250);
  });
  it('403 TooManyResults above the maximum; limit=0 only with count', async () => {
    expect((await b.request('GET', '/ngsi-ld/v1/entities?type=Meter&limit=1001')).status).toBe(403);
    expect((await b.request('GET', '/ngsi-ld/v1/entities?type=Meter&limit=0')).status).toBe(400);
    const res = await b.request('GET', '/ngsi-ld/v1/entities?type=Meter&limit=0&count=true');
    expect(res.json).toEqual([]);
    expect(res.headers.get('ngsild-results-count')).toBe('250');
  });
});

describe('listings answered from the rendered text of unchanged entities', () => {
  const list = (query: string, headers: Record<string, string> = {}) => b.request('GET', `/ngsi-ld/v1/entities?${query}`, { headers });

  it('gives what rendering gives, under each context and representation, and follows every change', async () => {
    const normalized = await list('type=Meter&limit=3');
    expect(normalized.status).toBe(200);
    // The same page again (from the kept texts), then other representations of the same entities.
    expect((await list('type=Meter&limit=3')).text).toBe(normalized.text);
    const keyValues = await list('type=Meter&limit=3&format=keyValues');
    expect(keyValues.json).toEqual(normalized.json.map((e: { id: string; reading: { value: number } }) => ({ id: e.id, type: 'Meter', reading: e.reading.value })));
    const sys = await list('type=Meter&limit=3&options=sysAttrs');
    expect(sys.json[0]).toHaveProperty('modifiedAt');
    expect((await list('type=Meter&limit=3')).text).toBe(normalized.text);
    // The ld+json form carries the context in each entity; projections and languages are rendered as before.
    const ld = await list('type=Meter&limit=3', { Accept: 'application/ld+json' });
    expect(ld.json.map((e: Record<string, unknown>) => { const { '@context': _c, ...rest } = e; return rest; })).toEqual(normalized.json);
    expect((await list('type=Meter&limit=3&pick=id')).json).toEqual(normalized.json.map((e: { id: string }) => ({ id: e.id })));
    // Another context names the attribute otherwise: the text kept for the core context is not served.
    const added = await b.request('POST', '/ngsi-ld/v1/jsonldContexts', {
      body: { '@context': { rd: 'https://uri.etsi.org/ngsi-ld/default-context/reading' } },
    });
    expect(added.status).toBe(201);
    const link = `<http://127.0.0.1${added.headers.get('location') ?? ''}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;
    const other = await list('type=Meter&limit=3', { Link: link });
    expect(other.status).toBe(200);
    expect(other.json.map((e: { id: string; rd: unknown }) => ({ id: e.id, rd: e.rd })))
      .toEqual(normalized.json.map((e: { id: string; reading: unknown }) => ({ id: e.id, rd: e.reading })));
    expect((await list('type=Meter&limit=3')).text).toBe(normalized.text);
    // An update shows at once.
    const first = (normalized.json as Array<{ id: string; reading: { value: number } }>)[0]!;
    expect((await b.request('PATCH', `/ngsi-ld/v1/entities/${first.id}/attrs/reading`, { body: { type: 'Property', value: -1 } })).status).toBe(204);
    const after = await list('type=Meter&limit=3');
    expect(after.json[0]).toMatchObject({ id: first.id, reading: { value: -1 } });
    expect(after.json.slice(1)).toEqual(normalized.json.slice(1));
    expect((await b.request('PATCH', `/ngsi-ld/v1/entities/${first.id}/attrs/reading`, { body: { type: 'Property', value: first.reading.value } })).status).toBe(204);
    expect((await list('type=Meter&limit=3')).json).toEqual(normalized.json);
  });

  it('answers a page again only for the same entities: another length, a change deep in the page, a deletion', async () => {
    const three = await list('type=Meter&limit=3');
    const two = await list('type=Meter&limit=2');
    expect(two.json).toEqual(three.json.slice(0, 2));
    expect((await list('type=Meter&limit=3')).json).toEqual(three.json);
    const [, second, third] = three.json as Array<{ id: string; reading: { value: number } }>;
    expect((await b.request('PATCH', `/ngsi-ld/v1/entities/${third!.id}/attrs/reading`, { body: { type: 'Property', value: -7 } })).status).toBe(204);
    expect((await list('type=Meter&limit=3')).json[2]).toMatchObject({ id: third!.id, reading: { value: -7 } });
    expect((await list('type=Meter&limit=2')).json).toEqual(three.json.slice(0, 2));
    expect((await b.request('DELETE', `/ngsi-ld/v1/entities/${second!.id}`)).status).toBe(204);
    const after = await list('type=Meter&limit=3');
    expect(after.json.map((e: { id: string }) => e.id)).not.toContain(second!.id);
    expect(after.json[1]).toMatchObject({ id: third!.id, reading: { value: -7 } });
  });

  it('tags a page given again, answers 304 to its tag with the page headers, and a new tag once it changed', async () => {
    const first = await list('type=Meter&limit=2&count=true');
    const again = await list('type=Meter&limit=2&count=true');
    const tag = again.headers.get('etag');
    expect(tag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const notModified = await list('type=Meter&limit=2&count=true', { 'If-None-Match': tag! });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.get('etag')).toBe(tag);
    expect(notModified.headers.get('ngsild-results-count')).toBe(first.headers.get('ngsild-results-count'));
    expect((await list('type=Meter&limit=2&count=true', { 'If-None-Match': '"other"' })).text).toBe(first.text);
    const id = (first.json as Array<{ id: string }>)[0]!.id;
    expect((await b.request('PATCH', `/ngsi-ld/v1/entities/${id}/attrs/reading`, { body: { type: 'Property', value: -3 } })).status).toBe(204);
    const changed = await list('type=Meter&limit=2&count=true', { 'If-None-Match': tag! });
    expect(changed.status).toBe(200);
    expect(changed.json[0]).toMatchObject({ id, reading: { value: -3 } });
    expect(changed.headers.get('etag')).not.toBe(tag);
  });

  it('builds the pagination links of each request, whatever page was asked before', async () => {
    const nextOf = async (query: string): Promise<string | undefined> => /<([^>]+)>;\s*rel="next"/.exec((await list(query)).headers.get('link') ?? '')?.[1];
    expect(await nextOf('type=Meter&limit=2')).toBe('/ngsi-ld/v1/entities?type=Meter&limit=2&offset=2');
    expect(await nextOf('type=Meter&limit=2&format=keyValues')).toBe('/ngsi-ld/v1/entities?type=Meter&limit=2&format=keyValues&offset=2');
    expect(await nextOf('type=Meter&limit=2&offset=2')).toBe('/ngsi-ld/v1/entities?type=Meter&limit=2&offset=4');
    expect(await nextOf('type=Meter&limit=2')).toBe('/ngsi-ld/v1/entities?type=Meter&limit=2&offset=2');
    const res = await list('type=Meter&limit=2&offset=2');
    expect(res.headers.get('link')).toContain('</ngsi-ld/v1/entities?type=Meter&limit=2&offset=0>; rel="prev"');
    // A URL too long for its links to be kept gets them all the same.
    const pick = ['id', 'type', ...Array.from({ length: 300 }, (_, i) => `extra${i}`)].join(',');
    expect(await nextOf(`type=Meter&limit=2&pick=${pick}`)).toBe(`/ngsi-ld/v1/entities?type=Meter&limit=2&pick=${encodeURIComponent(pick)}&offset=2`);
  });
});
