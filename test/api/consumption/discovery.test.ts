// Discovery through the HTTP API (NGSI-LD §5.7.5-5.7.9, interface §2.5, §4.5): entity types and
// attributes, with and without details, compacted with the request context, following every write.

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  startContextServer, startTestBroker, USER_CONTEXT, type ContextServer, type TestBroker,
} from '../../helpers/broker.js';
import { BUILDING, SENSOR, clone } from '../fixtures.js';

const REL = 'http://www.w3.org/ns/json-ld#context';
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const EX = 'https://example.org/ns#';
const DEFAULT = 'https://uri.etsi.org/ngsi-ld/default-context/';
const link = (url: string): string => `<${url}>; rel="${REL}"; type="application/ld+json"`;

let ctxServer: ContextServer;
let ctxUrl: string;
let b: TestBroker;

beforeAll(async () => {
  ctxServer = await startContextServer();
  ctxServer.set('/ctx.jsonld', USER_CONTEXT);
  ctxUrl = ctxServer.url('/ctx.jsonld');
});
afterAll(() => ctxServer.close());

beforeEach(async () => {
  b = await startTestBroker();
  const headers = { Link: link(ctxUrl) };
  for (const body of [BUILDING, SENSOR, { ...clone(SENSOR), id: 'urn:ngsi-ld:Sensor:s2' }]) {
    expect((await b.request('POST', '/ngsi-ld/v1/entities', { body, headers })).status).toBe(201);
  }
  const room = { id: 'urn:ngsi-ld:Room:r1', type: 'Room', temperature: { type: 'Property', value: 20 } };
  expect((await b.request('POST', '/ngsi-ld/v1/entities', { body: room })).status).toBe(201);
});
afterEach(() => b.close());

const withCtx = (path: string, headers: Record<string, string> = {}) =>
  b.request('GET', path, { headers: { Link: link(ctxUrl), ...headers } });
const coreOnly = (path: string) => b.request('GET', path);

describe('GET /types [§5.7.5]', () => {
  it('EntityTypeList with names compacted by the Link context', async () => {
    const res = await withCtx('/ngsi-ld/v1/types');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('link')).toBe(link(ctxUrl));
    expect(res.json).toEqual({ id: expect.stringMatching(/^urn:ngsi-ld:EntityTypeList:[0-9a-f-]{36}$/), type: 'EntityTypeList', typeList: ['Building', 'Room', 'Sensor'] });
  });

  it('with the core context only, user types stay expanded IRIs', async () => {
    const res = await coreOnly('/ngsi-ld/v1/types');
    expect(res.json.typeList).toEqual(['Room', `${EX}Building`, `${EX}Sensor`]);
  });

  it('application/ld+json carries @context in the body', async () => {
    const res = await withCtx('/ngsi-ld/v1/types', { Accept: 'application/ld+json' });
    expect(res.headers.get('content-type')).toContain('application/ld+json');
    expect(res.json['@context']).toEqual(ctxUrl);
  });

  it('details=true: one EntityType per type with its attribute names [§5.7.6]', async () => {
    const res = await withCtx('/ngsi-ld/v1/types?details=true');
    expect(res.status).toBe(200);
    expect(res.json).toEqual([
      {
        id: `${EX}Building`, type: 'EntityType', typeName: 'Building',
        attributeNames: ['address', 'category', 'config', 'location', 'name', 'owner', 'readings', 'sensors', 'temperature', 'title'],
      },
      // The user context maps `temperature` elsewhere: the core one compacts to a compact IRI, as in JSON-LD.
      { id: `${DEFAULT}Room`, type: 'EntityType', typeName: 'Room', attributeNames: ['ngsi-ld:default-context/temperature'] },
      { id: `${EX}Sensor`, type: 'EntityType', typeName: 'Sensor', attributeNames: ['humidity', 'isPartOf'] },
    ]);
  });

  it('the same temperature term names two attributes under the core context', async () => {
    const res = await coreOnly('/ngsi-ld/v1/types?details=true');
    const room = res.json.find((t: any) => t.typeName === 'Room');
    const building = res.json.find((t: any) => t.typeName === `${EX}Building`);
    expect(room.attributeNames).toEqual(['temperature']);
    expect(building.attributeNames).toContain(`${EX}temperature`);
  });
});

describe('GET /types/{type} [§5.7.7]', () => {
  it('EntityTypeInfo with entity count and attribute kinds', async () => {
    const res = await withCtx('/ngsi-ld/v1/types/Sensor');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      id: `${EX}Sensor`, type: 'EntityTypeInfo', typeName: 'Sensor', entityCount: 2,
      attributeDetails: [
        { id: `${EX}humidity`, type: 'Attribute', attributeName: 'humidity', attributeTypes: ['Property'] },
        { id: `${EX}isPartOf`, type: 'Attribute', attributeName: 'isPartOf', attributeTypes: ['Relationship'] },
      ],
    });
  });

  it('reports every attribute kind', async () => {
    const res = await withCtx('/ngsi-ld/v1/types/Building');
    const kinds = Object.fromEntries(res.json.attributeDetails.map((a: any) => [a.attributeName, a.attributeTypes]));
    expect(kinds).toMatchObject({
      location: ['GeoProperty'], owner: ['Relationship'], category: ['VocabProperty'], title: ['LanguageProperty'],
      config: ['JsonProperty'], readings: ['ListProperty'], sensors: ['ListRelationship'], temperature: ['Property'],
    });
  });

  it('accepts the expanded IRI of the type, URL-encoded', async () => {
    const res = await coreOnly(`/ngsi-ld/v1/types/${encodeURIComponent(`${EX}Sensor`)}`);
    expect(res.status).toBe(200);
    expect(res.json.typeName).toBe(`${EX}Sensor`);
    expect(res.json.attributeDetails[0].attributeName).toBe(`${EX}humidity`);
  });

  it('404 ResourceNotFound for a type no live entity has', async () => {
    const res = await withCtx('/ngsi-ld/v1/types/Nothing');
    expect(res.status).toBe(404);
    expect(res.json.type).toBe(ERR + 'ResourceNotFound');
    expect((await coreOnly('/ngsi-ld/v1/types/Sensor')).status).toBe(404);
  });
});

describe('GET /attributes [§5.7.8, §5.7.9]', () => {
  it('AttributeList of every attribute name', async () => {
    const res = await withCtx('/ngsi-ld/v1/attributes');
    expect(res.status).toBe(200);
    expect(res.json.id).toMatch(/^urn:ngsi-ld:AttributeList:/);
    expect(res.json.type).toBe('AttributeList');
    expect(res.json.attributeList).toEqual([
      'address', 'category', 'config', 'humidity', 'isPartOf', 'location', 'name', 'ngsi-ld:default-context/temperature',
      'owner', 'readings', 'sensors', 'temperature', 'title',
    ]);
  });

  it('details=true: each Attribute with kinds, type names and instance count', async () => {
    const res = await withCtx('/ngsi-ld/v1/attributes?details=true');
    const temperature = res.json.find((a: any) => a.id === `${EX}temperature`);
    expect(temperature).toEqual({
      id: `${EX}temperature`, type: 'Attribute', attributeName: 'temperature',
      attributeTypes: ['Property'], typeNames: ['Building'], attributeCount: 2,
    });
    const humidity = res.json.find((a: any) => a.attributeName === 'humidity');
    expect(humidity).toMatchObject({ typeNames: ['Sensor'], attributeCount: 2 });
  });

  it('GET /attributes/{attr}: one Attribute; 404 when no live entity has it', async () => {
    const res = await withCtx('/ngsi-ld/v1/attributes/isPartOf');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      id: `${EX}isPartOf`, type: 'Attribute', attributeName: 'isPartOf',
      attributeTypes: ['Relationship'], typeNames: ['Sensor'], attributeCount: 2,
    });
    expect((await withCtx('/ngsi-ld/v1/attributes/nothere')).status).toBe(404);
  });
});

describe('discovery follows writes', () => {
  const typeList = async (): Promise<string[]> => (await withCtx('/ngsi-ld/v1/types')).json.typeList;
  const sensorAttrs = async (): Promise<string[]> =>
    (await withCtx('/ngsi-ld/v1/types/Sensor')).json.attributeDetails.map((a: any) => a.attributeName);

  it('attribute appends and deletes', async () => {
    const headers = { Link: link(ctxUrl) };
    await b.request('POST', `/ngsi-ld/v1/entities/${SENSOR.id}/attrs`, { body: { accuracy: { type: 'Property', value: 1 } }, headers });
    expect(await sensorAttrs()).toEqual(['accuracy', 'humidity', 'isPartOf']);
    await b.request('DELETE', `/ngsi-ld/v1/entities/${SENSOR.id}/attrs/accuracy`, { headers });
    expect(await sensorAttrs()).toEqual(['humidity', 'isPartOf']);
    // humidity is still on s2
    await b.request('DELETE', `/ngsi-ld/v1/entities/${SENSOR.id}/attrs/humidity`, { headers });
    expect(await sensorAttrs()).toEqual(['humidity', 'isPartOf']);
    expect((await withCtx('/ngsi-ld/v1/attributes/humidity')).json.attributeCount).toBe(1);
  });

  it('entity replaces and deletes; a type vanishes with its last entity', async () => {
    const headers = { Link: link(ctxUrl) };
    await b.request('PUT', `/ngsi-ld/v1/entities/${SENSOR.id}`, { body: { type: 'Sensor', name: { type: 'Property', value: 'x' } }, headers });
    expect(await sensorAttrs()).toEqual(['humidity', 'isPartOf', 'name']);
    expect((await withCtx('/ngsi-ld/v1/types/Sensor')).json.entityCount).toBe(2);
    await b.request('DELETE', `/ngsi-ld/v1/entities/${SENSOR.id}`);
    expect(await sensorAttrs()).toEqual(['humidity', 'isPartOf']);
    await b.request('POST', '/ngsi-ld/v1/entityOperations/delete', { body: ['urn:ngsi-ld:Sensor:s2'] });
    expect(await typeList()).toEqual(['Building', 'Room']);
    expect((await withCtx('/ngsi-ld/v1/types/Sensor')).status).toBe(404);
    expect((await withCtx('/ngsi-ld/v1/attributes/isPartOf')).status).toBe(404);
  });

  it('keeps tenants apart', async () => {
    const res = await b.request('GET', '/ngsi-ld/v1/types', { headers: { 'NGSILD-Tenant': 'other' } });
    expect(res.json.typeList).toEqual([]);
  });
});

describe('discovery parameters and media types', () => {
  it('400 for an unknown parameter or a bad details value, 406 for GeoJSON', async () => {
    expect((await withCtx('/ngsi-ld/v1/types?foo=1')).status).toBe(400);
    expect((await withCtx('/ngsi-ld/v1/attributes?details=yes')).status).toBe(400);
    expect((await withCtx('/ngsi-ld/v1/types/Sensor?details=true')).status).toBe(400);
    expect((await withCtx('/ngsi-ld/v1/types', { Accept: 'application/geo+json' })).status).toBe(406);
  });

  it('405 for a write method', async () => {
    expect((await b.request('POST', '/ngsi-ld/v1/types', { body: {} })).status).toBe(405);
    expect((await b.request('DELETE', '/ngsi-ld/v1/attributes/name')).status).toBe(405);
  });
});
