// Linked entity retrieval (NGSI-LD §4.5.23) with projections (§4.21): join=inline and join=flat up
// to joinLevel, pick and omit with braced subtrees for the linked entities, the projection grammar,
// and join in the POST query body.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const P = '/ngsi-ld/v1/entities';
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const rel = (object: string) => ({ type: 'Relationship', object });
const prop = (value: unknown) => ({ type: 'Property', value });

let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
  const entities = [
    { id: 'urn:x:building', type: 'Building', name: prop('Tower'), locatedAt: rel('urn:x:paris') },
    { id: 'urn:x:paris', type: 'City', name: prop('Paris'), description: prop('capital'), isInCountry: rel('urn:x:france') },
    { id: 'urn:x:france', type: 'Country', name: prop('France'), description: prop('country') },
    { id: 'urn:x:lonely', type: 'Building', name: prop('Hut'), locatedAt: rel('urn:x:nowhere') },
  ];
  for (const body of entities) expect((await b.request('POST', P, { body })).status).toBe(201);
});
afterAll(() => b.close());

const get = async (query: string) => b.request('GET', `${P}/urn:x:building?${query}`);

describe('join with projections', () => {
  it('inline, two levels, each projected by its subtree', async () => {
    const res = await get(`join=inline&joinLevel=2&pick=${encodeURIComponent('id,locatedAt{id,name,isInCountry{id,description}}')}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      id: 'urn:x:building',
      locatedAt: { ...rel('urn:x:paris'), entity: {
        id: 'urn:x:paris', name: prop('Paris'),
        isInCountry: { ...rel('urn:x:france'), entity: { id: 'urn:x:france', description: prop('country') } },
      } },
    });
  });

  it('inline stops at joinLevel, and a relationship without subtree shows its whole target', async () => {
    const res = await get('join=inline');
    expect(res.json.locatedAt.entity).toEqual({ id: 'urn:x:paris', type: 'City', name: prop('Paris'), description: prop('capital'), isInCountry: rel('urn:x:france') });
  });

  it('flat lists the linked entities reached through projected relationships, each projected', async () => {
    const res = await get(`join=flat&joinLevel=2&pick=${encodeURIComponent('id,locatedAt{id,name}')}`);
    expect(res.json).toEqual([
      { id: 'urn:x:building', locatedAt: rel('urn:x:paris') },
      { id: 'urn:x:paris', name: prop('Paris') },
    ]);
    const omitted = await get(`join=flat&joinLevel=2&omit=${encodeURIComponent('type,locatedAt{name,isInCountry{description}}')}`);
    expect(omitted.json).toEqual([
      { id: 'urn:x:building', name: prop('Tower'), locatedAt: rel('urn:x:paris') },
      { id: 'urn:x:paris', type: 'City', description: prop('capital'), isInCountry: rel('urn:x:france') },
      { id: 'urn:x:france', type: 'Country', name: prop('France') },
    ]);
  });

  it('attrs selects the attributes of the entity asked for; the entities it links to show in full', async () => {
    const city = { id: 'urn:x:paris', type: 'City', name: prop('Paris'), description: prop('capital'), isInCountry: rel('urn:x:france') };
    const inline = await get('attrs=locatedAt&join=inline');
    expect(inline.json).toEqual({ id: 'urn:x:building', type: 'Building', locatedAt: { ...rel('urn:x:paris'), entity: city } });
    const flat = await get('attrs=locatedAt&join=flat');
    expect(flat.json).toEqual([{ id: 'urn:x:building', type: 'Building', locatedAt: rel('urn:x:paris') }, city]);
  });

  it('flat with no linked entity found answers the entity alone', async () => {
    const res = await b.request('GET', `${P}/urn:x:lonely?join=flat`);
    expect(res.json).toEqual({ id: 'urn:x:lonely', type: 'Building', name: prop('Hut'), locatedAt: rel('urn:x:nowhere') });
  });

  it('join in the body of a POST query', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/entityOperations/query', {
      body: { type: 'Query', entities: [{ type: 'Building' }], join: 'inline', joinLevel: 1, pick: 'id,locatedAt{name}' },
    });
    expect(res.status).toBe(200);
    expect(res.json).toContainEqual({ id: 'urn:x:building', locatedAt: { ...rel('urn:x:paris'), entity: { name: prop('Paris') } } });
  });
});

describe('projection grammar and empty projections', () => {
  it('400 BadRequestData for malformed pick expressions', async () => {
    for (const pick of ['id;name', 'id,locatedAt{name', 'id,locatedAt{{name}', 'id,,name', 'id,locatedAt{,name}', 'id,locatedAt{}', '', 'a}']) {
      const res = await get(`pick=${encodeURIComponent(pick)}`);
      expect(res.status, pick).toBe(400);
      expect(res.json.type, pick).toBe(ERR + 'BadRequestData');
    }
  });

  it('404 when pick or omit leave nothing of the entity', async () => {
    expect((await get('pick=nothingHere')).status).toBe(404);
    expect((await get('omit=id,type,name,locatedAt')).status).toBe(404);
    expect((await get('pick=id')).json).toEqual({ id: 'urn:x:building' });
  });

  it('a query leaves out the entities a projection leaves empty', async () => {
    const res = await b.request('GET', `${P}?type=Building,Country&pick=locatedAt`);
    expect(res.json).toEqual([{ locatedAt: rel('urn:x:paris') }, { locatedAt: rel('urn:x:nowhere') }]);
  });
});
