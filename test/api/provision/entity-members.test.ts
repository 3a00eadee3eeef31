// Entity members in attribute writes: types added (NGSI-LD §4.16) and scope (§4.18) through
// POST/PATCH /entities/{id}/attrs, DELETE …/attrs/scope and batch update; the kind of an attribute
// kept by a partial update (§5.6.4); entity types that name no IRI refused (§5.6.1).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const P = '/ngsi-ld/v1/entities';
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const ID = 'urn:ngsi-ld:Building:b1';

let b: TestBroker;
beforeEach(async () => {
  b = await startTestBroker();
});
afterEach(() => b.close());

const create = async (extra: object = {}): Promise<void> => {
  const res = await b.request('POST', P, { body: { id: ID, type: 'Building', name: { type: 'Property', value: 'x' }, ...extra } });
  expect(res.status).toBe(201);
};
const entity = async (): Promise<Record<string, unknown>> => (await b.request('GET', `${P}/${ID}`)).json;

describe('types in attribute writes', () => {
  it('PATCH …/attrs adds the types given and keeps the others [§4.16]', async () => {
    await create();
    expect((await b.request('PATCH', `${P}/${ID}/attrs`, { body: { type: ['Vehicle', 'Building'] } })).status).toBe(204);
    expect((await entity())['type']).toEqual(['Building', 'Vehicle']);
  });

  it('POST …/attrs adds a type beside new attributes', async () => {
    await create();
    const res = await b.request('POST', `${P}/${ID}/attrs`, { body: { type: 'Car', height: { type: 'Property', value: 3 } } });
    expect(res.status).toBe(204);
    const e = await entity();
    expect(e['type']).toEqual(['Building', 'Car']);
    expect(e['height']).toEqual({ type: 'Property', value: 3 });
  });

  it('batch update adds the types of each entity', async () => {
    await create();
    const res = await b.request('POST', '/ngsi-ld/v1/entityOperations/update', { body: [{ id: ID, type: 'Vehicle' }] });
    expect(res.status).toBe(204);
    expect((await entity())['type']).toEqual(['Building', 'Vehicle']);
  });
});

describe('scope in attribute writes [§4.18]', () => {
  it('POST …/attrs replaces the scope, or with noOverwrite adds to it', async () => {
    await create({ scope: '/A/B' });
    expect((await b.request('POST', `${P}/${ID}/attrs`, { body: { scope: '/C' } })).status).toBe(204);
    expect((await entity())['scope']).toBe('/C');
    expect((await b.request('POST', `${P}/${ID}/attrs?options=noOverwrite`, { body: { scope: ['/D', '/C'] } })).status).toBe(204);
    expect((await entity())['scope']).toEqual(['/C', '/D']);
  });

  it('PATCH …/attrs replaces an existing scope, and reports 207 when the entity has none', async () => {
    await create({ scope: '/A' });
    expect((await b.request('PATCH', `${P}/${ID}/attrs`, { body: { scope: '/B' } })).status).toBe(204);
    expect((await entity())['scope']).toBe('/B');

    await b.request('DELETE', `${P}/${ID}`);
    await create();
    const res = await b.request('PATCH', `${P}/${ID}/attrs`, { body: { scope: '/B' } });
    expect(res.status).toBe(207);
    expect(res.json).toEqual({ updated: [], notUpdated: [{ attributeName: 'scope', reason: expect.any(String) }] });
    expect((await entity())['scope']).toBeUndefined();
  });

  it('DELETE …/attrs/scope removes the scope; 404 when there is none', async () => {
    await create({ scope: ['/A', '/B'] });
    expect((await b.request('DELETE', `${P}/${ID}/attrs/scope`)).status).toBe(204);
    expect((await entity())['scope']).toBeUndefined();
    const again = await b.request('DELETE', `${P}/${ID}/attrs/scope`);
    expect(again.status).toBe(404);
    expect(again.json.type).toBe(ERR + 'ResourceNotFound');
  });
});

describe('refused writes', () => {
  it('a partial update that changes the kind of an attribute is 400 BadRequestData [§5.6.4]', async () => {
    await create();
    const res = await b.request('PATCH', `${P}/${ID}/attrs/name`, { body: { type: 'Relationship', object: 'urn:x:1' } });
    expect(res.status).toBe(400);
    expect(res.json.type).toBe(ERR + 'BadRequestData');
    expect((await entity())['name']).toEqual({ type: 'Property', value: 'x' });
  });

  it('an entity type that expands to a keyword, not an IRI, is 400 BadRequestData', async () => {
    const res = await b.request('POST', P, { body: { id: ID, type: 'type' } });
    expect(res.status).toBe(400);
    expect(res.json.type).toBe(ERR + 'BadRequestData');
    expect((await b.request('GET', `${P}/${ID}`)).status).toBe(404);
  });

  it('a body that is JSON but not an object is 400 InvalidRequest', async () => {
    for (const raw of ['[]', '3', '"x"']) {
      const res = await b.request('POST', P, { raw, headers: { 'Content-Type': 'application/json' } });
      expect(res.status, raw).toBe(400);
      expect(res.json.type, raw).toBe(ERR + 'InvalidRequest');
    }
  });
});

describe('ids left out of the path', () => {
  it('an empty id segment is 400, not 404', async () => {
    await create();
    for (const [method, path] of [['POST', `${P}//attrs`], ['PATCH', `${P}//attrs/name`], ['DELETE', `${P}//attrs/name`]] as const) {
      const res = await b.request(method, path, { body: { name: { type: 'Property', value: 1 } } });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.json.type).toBe(ERR + 'BadRequestData');
    }
  });

  it('a method the collection does not take is 405 with or without the trailing slash', async () => {
    for (const method of ['PATCH', 'PUT']) {
      const res = await b.request(method, `${P}/`, { body: { name: { type: 'Property', value: 1 } } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('DELETE, GET, POST');
      expect((await b.request(method, P, { body: {} })).status, method).toBe(405);
    }
  });

  it('a trailing slash on a collection names the collection', async () => {
    expect((await b.request('POST', `${P}/`, { body: { id: ID, type: 'Building' } })).status).toBe(201);
    expect((await b.request('GET', `${P}/?type=Building`)).json).toHaveLength(1);
  });
});

describe('batch bodies with a misplaced @context', () => {
  it('fail the element alone: 207 with its error, the others written', async () => {
    const ok = { id: 'urn:ngsi-ld:Building:ok', type: 'Building' };
    const bad = { id: 'urn:ngsi-ld:Building:bad', type: 'Building', '@context': 'https://example.org/ctx.jsonld' };
    const res = await b.request('POST', '/ngsi-ld/v1/entityOperations/create', { body: [ok, bad] });
    expect(res.status).toBe(207);
    expect(res.json.success).toEqual([ok.id]);
    expect(res.json.errors).toEqual([{ entityId: bad.id, error: expect.objectContaining({ type: ERR + 'BadRequestData' }) }]);

    const ld = await b.request('POST', '/ngsi-ld/v1/entityOperations/upsert', {
      body: [{ ...ok, '@context': [] }, { id: 'urn:ngsi-ld:Building:noctx', type: 'Building' }],
      headers: { 'Content-Type': 'application/ld+json' },
    });
    expect(ld.status).toBe(207);
    expect(ld.json.errors).toEqual([{ entityId: 'urn:ngsi-ld:Building:noctx', error: expect.objectContaining({ type: ERR + 'BadRequestData' }) }]);
  });
});
