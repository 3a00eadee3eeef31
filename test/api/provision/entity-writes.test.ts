// Entity and attribute writes through the HTTP API (NGSI-LD §6.4-§6.7): status codes, the 207
// UpdateResult, NGSI-LD Null, multi-attributes, and the history instance every write leaves.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startContextServer, startTestBroker, T0, type TestBroker } from '../../helpers/broker.js';

const ID = 'urn:ngsi-ld:Room:w1';
const P = `/ngsi-ld/v1/entities/${ID}`;
let b: TestBroker;

const get = async (q = ''): Promise<any> => (await b.request('GET', `${P}${q}`)).json;
const history = (attr?: string) =>
  b.broker.store.history.listForEntity({ tenant: '' }, ID, attr === undefined ? undefined : `https://uri.etsi.org/ngsi-ld/default-context/${attr}`);

beforeEach(async () => {
  b = await startTestBroker();
  const res = await b.request('POST', '/ngsi-ld/v1/entities', {
    body: { id: ID, type: 'Room', temperature: { type: 'Property', value: 20, unitCode: 'CEL' }, humidity: { type: 'Property', value: 40 } },
  });
  expect(res.status).toBe(201);
  expect(res.headers.get('location')).toBe(P);
  expect(res.text).toBe('');
  // An empty body of known length, not an empty chunked stream.
  expect(res.headers.get('content-length')).toBe('0');
  b.clock.advance(1000);
});
afterEach(() => b.close());

describe('create', () => {
  it('records one history instance per attribute', () => {
    const h = history();
    expect(h).toHaveLength(2);
    expect(h.every((i) => i.instanceId.startsWith('urn:ngsi-ld:Instance:'))).toBe(true);
    expect(h.find((i) => i.attr.endsWith('temperature'))?.attribute).toMatchObject({ kind: 'Property', value: 20, unitCode: 'CEL' });
  });
});

describe('append attributes (POST .../attrs)', () => {
  it('204 and adds or overwrites attributes', async () => {
    const res = await b.request('POST', `${P}/attrs`, { body: { pressure: { type: 'Property', value: 1013 }, temperature: { type: 'Property', value: 22 } } });
    expect(res.status).toBe(204);
    const e = await get();
    expect(e.pressure.value).toBe(1013);
    expect(e.temperature).toEqual({ type: 'Property', value: 22 });
    expect(history('temperature')).toHaveLength(2);
  });
  it('207 with notUpdated for existing attributes with options=noOverwrite', async () => {
    const res = await b.request('POST', `${P}/attrs?options=noOverwrite`, { body: { pressure: { type: 'Property', value: 1 }, temperature: { type: 'Property', value: 99 } } });
    expect(res.status).toBe(207);
    expect(res.json.updated).toEqual(['pressure']);
    expect(res.json.notUpdated).toEqual([{ attributeName: 'temperature', reason: expect.any(String) }]);
    expect((await get()).temperature.value).toBe(20);
  });
});

describe('update attributes (PATCH .../attrs)', () => {
  it('204 when all exist', async () => {
    const res = await b.request('PATCH', `${P}/attrs`, { body: { temperature: { type: 'Property', value: 25 } } });
    expect(res.status).toBe(204);
    expect((await get()).temperature).toEqual({ type: 'Property', value: 25 });
  });
  it('207 UpdateResult naming the attributes that do not exist', async () => {
    const res = await b.request('PATCH', `${P}/attrs`, { body: { temperature: { type: 'Property', value: 25 }, nothere: { type: 'Property', value: 1 } } });
    expect(res.status).toBe(207);
    expect(res.json.updated).toEqual(['temperature']);
    expect(res.json.notUpdated[0].attributeName).toBe('nothere');
  });
  it('NGSI-LD Null deletes the attribute and leaves a deletion instance', async () => {
    const res = await b.request('PATCH', `${P}/attrs`, { body: { humidity: { type: 'Property', value: 'urn:ngsi-ld:null' } } });
    expect(res.status).toBe(204);
    expect((await get()).humidity).toBeUndefined();
    const h = history('humidity');
    expect(h).toHaveLength(2);
    expect(h[1]?.deletedAt).toBe(T0 + 1000);
    expect(h[1]?.attribute).toBeUndefined();
  });
});

describe('partial attribute update (PATCH .../attrs/{attr})', () => {
  it('changes only the given members and records an instance', async () => {
    const res = await b.request('PATCH', `${P}/attrs/temperature`, { body: { value: 23, observedAt: '2026-05-01T10:00:00.000Z' } });
    expect(res.status).toBe(204);
    const t = (await get('?options=sysAttrs')).temperature;
    expect(t).toMatchObject({ type: 'Property', value: 23, unitCode: 'CEL', observedAt: '2026-05-01T10:00:00.000Z' });
    expect(t.createdAt).toBe(new Date(T0).toISOString());
    expect(t.modifiedAt).toBe(new Date(T0 + 1000).toISOString());
    const h = history('temperature');
    expect(h).toHaveLength(2);
    expect(h[1]?.observedAt).toBe(Date.parse('2026-05-01T10:00:00.000Z'));
  });
});

describe('replace attribute (PUT .../attrs/{attr})', () => {
  it('replaces the attribute completely', async () => {
    const res = await b.request('PUT', `${P}/attrs/temperature`, { body: { type: 'Property', value: 30 } });
    expect(res.status).toBe(204);
    expect((await get()).temperature).toEqual({ type: 'Property', value: 30 });
  });
});

describe('delete attribute', () => {
  it('204, then 404 on a second delete; the deletion is in the history', async () => {
    expect((await b.request('DELETE', `${P}/attrs/humidity`)).status).toBe(204);
    expect((await b.request('DELETE', `${P}/attrs/humidity`)).status).toBe(404);
    expect(history('humidity').at(-1)?.deletedAt).toBe(T0 + 1000);
  });
  it('datasetId and deleteAll select instances of a multi-attribute', async () => {
    await b.request('POST', `${P}/attrs`, { body: { temperature: [{ type: 'Property', value: 5, datasetId: 'urn:ngsi-ld:Dataset:a' }, { type: 'Property', value: 6, datasetId: 'urn:ngsi-ld:Dataset:b' }] } });
    expect((await get()).temperature).toHaveLength(3);
    expect((await b.request('DELETE', `${P}/attrs/temperature?datasetId=urn:ngsi-ld:Dataset:a`)).status).toBe(204);
    expect((await get()).temperature).toHaveLength(2);
    expect((await b.request('DELETE', `${P}/attrs/temperature?deleteAll=true`)).status).toBe(204);
    expect((await get()).temperature).toBeUndefined();
  });
});

describe('merge entity (PATCH /entities/{id})', () => {
  it('merges attributes and sub-attributes, NGSI-LD Null deletes', async () => {
    const res = await b.request('PATCH', P, { body: { temperature: { value: 21, accuracy: { type: 'Property', value: 0.1 } }, humidity: 'urn:ngsi-ld:null', light: { type: 'Property', value: 300 } } });
    expect(res.status).toBe(204);
    const e = await get();
    expect(e.temperature).toEqual({ type: 'Property', value: 21, unitCode: 'CEL', accuracy: { type: 'Property', value: 0.1 } });
    expect(e.humidity).toBeUndefined();
    expect(e.light.value).toBe(300);
  });
});

describe('replace entity (PUT /entities/{id})', () => {
  it('replaces all attributes and keeps createdAt', async () => {
    const res = await b.request('PUT', P, { body: { type: 'Room', light: { type: 'Property', value: 1 } } });
    expect(res.status).toBe(204);
    const e = await get('?options=sysAttrs');
    expect(e.temperature).toBeUndefined();
    expect(e.light.value).toBe(1);
    expect(e.createdAt).toBe(new Date(T0).toISOString());
    expect(e.modifiedAt).toBe(new Date(T0 + 1000).toISOString());
    expect(history('temperature').at(-1)?.deletedAt).toBe(T0 + 1000);
  });
});

describe('delete entity', () => {
  it('204; then 404, while the history remains and the id can be created again', async () => {
    expect((await b.request('DELETE', P)).status).toBe(204);
    expect((await b.request('GET', P)).status).toBe(404);
    const h = history();
    expect(h.length).toBe(4);
    expect(h.filter((i) => i.deletedAt !== undefined)).toHaveLength(2);
    const again = await b.request('POST', '/ngsi-ld/v1/entities', { body: { id: ID, type: 'Room' } });
    expect(again.status).toBe(201);
  });

  it('continues the series of an attribute when the entity is created again with it', async () => {
    const seriesBefore = b.broker.store.history.series({ tenant: '' }, [ID]);
    expect(seriesBefore).toHaveLength(2);
    expect((await b.request('DELETE', P)).status).toBe(204);
    b.clock.advance(1000);
    const again = await b.request('POST', '/ngsi-ld/v1/entities', { body: { id: ID, type: 'Room', temperature: { type: 'Property', value: 25 } } });
    expect(again.status).toBe(201);
    expect(b.broker.store.history.series({ tenant: '' }, [ID])).toEqual(seriesBefore);
    expect(history('temperature').map((i) => (i.attribute !== undefined && 'value' in i.attribute ? i.attribute.value : null))).toEqual([20, null, 25]);
  });
});

describe('tenants', () => {
  it('keeps tenants apart', async () => {
    const headers = { 'NGSILD-Tenant': 'site2' };
    expect((await b.request('GET', P, { headers })).status).toBe(404);
    expect((await b.request('POST', '/ngsi-ld/v1/entities', { body: { id: ID, type: 'Room' }, headers })).status).toBe(201);
    expect((await b.request('GET', P, { headers })).json.temperature).toBeUndefined();
  });
});

describe('specificAccessPolicy', () => {
  it('is accepted and stored under the authorization IRI, and rendered back by name', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/entities', {
      body: { id: 'urn:ngsi-ld:Room:sap', type: 'Room', specificAccessPolicy: { type: 'Property', value: 'read' } },
    });
    expect(res.status).toBe(201);
    const stored = b.broker.store.entities.get({ tenant: '' }, 'urn:ngsi-ld:Room:sap');
    expect(Object.keys(stored?.attrs ?? {})).toEqual(['https://ontology.eglobalmark.com/authorization#specificAccessPolicy']);
    const back = await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:sap');
    expect(back.json.specificAccessPolicy).toEqual({ type: 'Property', value: 'read' });
  });
  it('refuses a value other than read or write', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/entities', {
      body: { id: 'urn:ngsi-ld:Room:sap2', type: 'Room', specificAccessPolicy: { type: 'Property', value: 'admin' } },
    });
    expect(res.status).toBe(400);
  });
});

describe('ids with URL-significant characters', () => {
  it('answers a Location that leads back to the entity', async () => {
    const id = 'https://example.org/things/a#b?c';
    const res = await b.request('POST', '/ngsi-ld/v1/entities', { body: { id, type: 'Thing' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe('/ngsi-ld/v1/entities/https:%2F%2Fexample.org%2Fthings%2Fa%23b%3Fc');
    const back = await b.request('GET', res.headers.get('location') ?? '');
    expect(back.status).toBe(200);
    expect(back.json.id).toBe(id);
  });
});

describe('ids with characters beyond ASCII [RFC 3987 §3.1]', () => {
  const ids = ['urn:x:€', 'urn:x:café', 'urn:x:é-ÿ', 'urn:x:🌡️', 'urn:x:100%25', 'urn:x:a"b'.replace('"', 'ß')];

  it('201 with an ASCII Location, percent-encoded as UTF-8, that leads back to the entity', async () => {
    for (const id of ids) {
      const res = await b.request('POST', '/ngsi-ld/v1/entities', { body: { id, type: 'Thing' } });
      expect(res.status, id).toBe(201);
      const location = res.headers.get('location') ?? '';
      expect(location, id).toMatch(/^[\x21-\x7e]+$/);
      expect(decodeURIComponent(location.slice(location.lastIndexOf('/') + 1)), id).toBe(id);
      const back = await b.request('GET', location);
      expect(back.status, id).toBe(200);
      expect(back.json.id, id).toBe(id);
    }
  });

  it('the same for a temporal entity created with POST /temporal/entities', async () => {
    const id = 'urn:x:température';
    const res = await b.request('POST', '/ngsi-ld/v1/temporal/entities', {
      body: { id, type: 'Thing', t: [{ type: 'Property', value: 1, observedAt: '2026-01-01T00:00:00Z' }] },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe('/ngsi-ld/v1/temporal/entities/urn:x:temp%C3%A9rature');
    expect((await b.request('GET', res.headers.get('location') ?? '')).status).toBe(200);
  });

  it('an id holding a lone surrogate is 400 and nothing is stored', async () => {
    const raw = '{"id":"urn:x:\\ud800","type":"Thing"}';
    const res = await b.request('POST', '/ngsi-ld/v1/entities', { raw, headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/BadRequestData');
    expect(b.broker.store.entities.list({ tenant: '' }, { limit: 10, offset: 0, count: false, types: ['https://uri.etsi.org/ngsi-ld/default-context/Thing'] }).entities
      .map((e) => e.id)).not.toContain('urn:x:\ud800');
  });
});

describe('a JSON-LD Link header naming a context URL beyond ASCII', () => {
  it('is sent as a URI (UTF-8 percent-encoded), the URL a client can fetch the context from', async () => {
    const server = await startContextServer();
    try {
      server.set('/ctx-%E2%82%AC.jsonld', { '@context': { Room: 'https://example.org/ns#Room' } });
      const url = server.url('/ctx-€.jsonld');
      const body = { id: 'urn:ngsi-ld:Room:ctx1', type: 'Room', '@context': url };
      expect((await b.request('POST', '/ngsi-ld/v1/entities', { body, headers: { 'Content-Type': 'application/ld+json' } })).status).toBe(201);
      const res = await b.request('POST', '/ngsi-ld/v1/entityOperations/query', {
        body: { type: 'Query', entities: [{ type: 'Room' }], '@context': url },
        headers: { 'Content-Type': 'application/ld+json', Accept: 'application/json' },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('link')).toBe(`<${server.url('/ctx-%E2%82%AC.jsonld')}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`);
    } finally {
      await server.close();
    }
  });
});
