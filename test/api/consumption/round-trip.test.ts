// Round trips of every attribute kind and representation through the HTTP API, with the user
// context given by Link header and by body @context, and with the core context only.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startContextServer, startTestBroker, USER_CONTEXT, type ContextServer, type TestBroker,
} from '../../helpers/broker.js';
import { BUILDING, SENSOR, clone } from '../fixtures.js';

const REL = 'http://www.w3.org/ns/json-ld#context';
const link = (url: string): string => `<${url}>; rel="${REL}"; type="application/ld+json"`;
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
const EX = 'https://example.org/ns#';

let ctxServer: ContextServer;
let b: TestBroker;
let ctxUrl: string;

beforeAll(async () => {
  ctxServer = await startContextServer();
  ctxServer.set('/ctx.jsonld', USER_CONTEXT);
  ctxUrl = ctxServer.url('/ctx.jsonld');
  b = await startTestBroker();
  const created = await b.request('POST', '/ngsi-ld/v1/entities', { body: BUILDING, headers: { Link: link(ctxUrl) } });
  expect(created.status).toBe(201);
  const sensor = await b.request('POST', '/ngsi-ld/v1/entities', {
    body: { ...SENSOR, '@context': [ctxUrl] }, headers: { 'Content-Type': 'application/ld+json' },
  });
  expect(sensor.status).toBe(201);
  await b.request('POST', '/ngsi-ld/v1/entities', {
    body: { ...clone(SENSOR), id: 'urn:ngsi-ld:Sensor:s2' }, headers: { Link: link(ctxUrl) },
  });
});

afterAll(async () => {
  await b.close();
  await ctxServer.close();
});

const get = (path: string, headers: Record<string, string> = {}) =>
  b.request('GET', path, { headers: { Link: link(ctxUrl), ...headers } });

describe('normalized round trip', () => {
  it('returns the entity exactly as created, with the same Link context', async () => {
    const res = await get(`/ngsi-ld/v1/entities/${BUILDING.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('link')).toBe(link(ctxUrl));
    expect(res.json).toEqual(BUILDING);
  });

  it('returns the entity created with a body @context, with @context in the body for ld+json', async () => {
    const res = await get(`/ngsi-ld/v1/entities/${SENSOR.id}`, { Accept: 'application/ld+json' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/ld+json');
    const { '@context': context, ...rest } = res.json;
    expect(rest).toEqual(SENSOR);
    expect(context).toEqual(ctxUrl);
  });

  it('returns expanded IRIs for user terms with the core context only', async () => {
    const res = await b.request('GET', `/ngsi-ld/v1/entities/${BUILDING.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('link')).toBe(link(CORE));
    expect(res.json.type).toBe(`${EX}Building`);
    expect(res.json[`${EX}temperature`]).toHaveLength(2);
    expect(res.json['https://schema.org/name']).toEqual({ type: 'Property', value: 'Main hall' });
    expect(res.json['https://schema.org/address'].value).toEqual({ 'https://schema.org/streetAddress': '1 Main St' });
    expect(res.json.location).toEqual(BUILDING.location);
    // A name undefined in every context lives in the default vocabulary.
    expect(res.json.title).toEqual(BUILDING.title);
    expect(res.json[`${EX}category`]).toEqual({ type: 'VocabProperty', vocab: `${EX}commercial` });
  });

  it('adds createdAt and modifiedAt everywhere with options=sysAttrs', async () => {
    const res = await get(`/ngsi-ld/v1/entities/${BUILDING.id}?options=sysAttrs`);
    const iso = '2026-05-01T10:00:00.000Z';
    expect(res.json.createdAt).toBe(iso);
    expect(res.json.modifiedAt).toBe(iso);
    expect(res.json.name.createdAt).toBe(iso);
    expect(res.json.temperature[0].accuracy.createdAt).toBe(iso);
  });

  it('details=true gives the same extra information on retrieval and query; a bad value is 400', async () => {
    const one = await get(`/ngsi-ld/v1/entities/${BUILDING.id}?details=true`);
    expect(one.status).toBe(200);
    expect(one.json.createdAt).toBe('2026-05-01T10:00:00.000Z');
    expect(one.json.name.modifiedAt).toBe('2026-05-01T10:00:00.000Z');
    const list = await get(`/ngsi-ld/v1/entities?type=Building&details=true`);
    expect(list.status).toBe(200);
    expect(list.json[0].createdAt).toBe('2026-05-01T10:00:00.000Z');
    expect((await get(`/ngsi-ld/v1/entities/${BUILDING.id}?details=false`)).json.createdAt).toBeUndefined();
    expect((await get(`/ngsi-ld/v1/entities/${BUILDING.id}?details=maybe`)).status).toBe(400);
  });
});

describe('other representations', () => {
  it('keyValues (options and format) reduces attributes to their values', async () => {
    for (const q of ['options=keyValues', 'format=keyValues', 'format=simplified', 'options=simplified']) {
      const res = await get(`/ngsi-ld/v1/entities/${BUILDING.id}?${q}`);
      expect(res.status).toBe(200);
      expect(res.json.id).toBe(BUILDING.id);
      expect(res.json.type).toBe('Building');
      expect(res.json.name).toBe('Main hall');
      expect(res.json.owner).toBe('urn:ngsi-ld:Person:p1');
      expect(res.json.location).toEqual(BUILDING.location.value);
      // NGSI-LD §4.5.4: the newer kinds keep their member name so they stay unambiguous.
      expect(res.json.category).toEqual({ vocab: 'commercial' });
      expect(res.json.config).toEqual({ json: BUILDING.config.json });
      expect(res.json.readings).toEqual({ valueList: [1, 2, 3] });
      expect(res.json.title).toEqual({ languageMap: BUILDING.title.languageMap });
      expect(res.json.temperature).toEqual({ dataset: { '@none': 21.5, 'urn:ngsi-ld:Dataset:outside': 19 } });
      expect(res.json.address).toEqual({ streetAddress: '1 Main St' });
    }
  });

  it('format wins over options', async () => {
    const res = await get(`/ngsi-ld/v1/entities/${BUILDING.id}?options=keyValues&format=normalized`);
    expect(res.json.name).toEqual({ type: 'Property', value: 'Main hall' });
  });

  it('concise output can be sent back and gives the same entity', async () => {
    const res = await get(`/ngsi-ld/v1/entities/${BUILDING.id}?format=concise`);
    expect(res.status).toBe(200);
    expect(res.json.name).toBe('Main hall');
    const copy = { ...res.json, id: 'urn:ngsi-ld:Building:concise' };
    const created = await b.request('POST', '/ngsi-ld/v1/entities', { body: copy, headers: { Link: link(ctxUrl) } });
    expect(created.status).toBe(201);
    const back = await get('/ngsi-ld/v1/entities/urn:ngsi-ld:Building:concise');
    expect(back.json).toEqual({ ...BUILDING, id: 'urn:ngsi-ld:Building:concise' });
  });

  it('pick and omit project top-level members', async () => {
    const picked = await get(`/ngsi-ld/v1/entities/${BUILDING.id}?pick=id,name`);
    expect(picked.json).toEqual({ id: BUILDING.id, name: BUILDING.name });
    const omitted = await get(`/ngsi-ld/v1/entities/${BUILDING.id}?omit=temperature,type,config,readings,sensors,title,category,location,address`);
    expect(omitted.json).toEqual({ id: BUILDING.id, name: BUILDING.name, owner: BUILDING.owner });
  });

  it('attrs keeps only the listed attributes', async () => {
    const res = await get(`/ngsi-ld/v1/entities/${BUILDING.id}?attrs=name,owner`);
    expect(res.json).toEqual({ id: BUILDING.id, type: 'Building', name: BUILDING.name, owner: BUILDING.owner });
  });

  it('lang picks one language of a LanguageProperty', async () => {
    const res = await get(`/ngsi-ld/v1/entities/${BUILDING.id}?lang=fr&attrs=title`);
    expect(res.json.title).toMatchObject({ type: 'Property', value: 'Salle', lang: 'fr' });
  });

  it('join=inline adds the related entity to each Relationship', async () => {
    const res = await get(`/ngsi-ld/v1/entities/${SENSOR.id}?join=inline`);
    expect(res.json.isPartOf.entity.id).toBe(BUILDING.id);
    expect(res.json.isPartOf.entity.name).toEqual(BUILDING.name);
  });

  it('join=flat returns the entity followed by the related entities', async () => {
    const res = await get(`/ngsi-ld/v1/entities/${SENSOR.id}?join=flat`);
    expect(Array.isArray(res.json)).toBe(true);
    expect(res.json.map((e: { id: string }) => e.id)).toEqual([SENSOR.id, BUILDING.id]);
  });

  it('serves GeoJSON with Accept application/geo+json', async () => {
    const res = await get(`/ngsi-ld/v1/entities/${BUILDING.id}`, { Accept: 'application/geo+json' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/geo+json');
    expect(res.json.type).toBe('Feature');
    expect(res.json.id).toBe(BUILDING.id);
    expect(res.json.geometry).toEqual(BUILDING.location.value);
    expect(res.json.properties.name).toEqual(BUILDING.name);
    // NGSI-LD §4.5.16: the request's context as a member of the Feature.
    expect(res.json['@context']).toBe(ctxUrl);
  });

  it('datasetId selects instances of a multi-attribute', async () => {
    const res = await get(`/ngsi-ld/v1/entities/${BUILDING.id}?attrs=temperature&datasetId=urn:ngsi-ld:Dataset:outside`);
    expect(res.json.temperature).toEqual(BUILDING.temperature[1]);
  });
});

describe('listing', () => {
  it('lists entities of a type with count, limit and next links', async () => {
    const res = await get('/ngsi-ld/v1/entities?type=Sensor&limit=1&count=true');
    expect(res.status).toBe(200);
    expect(res.headers.get('ngsild-results-count')).toBe('2');
    expect(res.json).toHaveLength(1);
    expect(res.json[0].id).toBe(SENSOR.id);
    expect(res.headers.get('link')).toContain('rel="next"');
    const next = await get('/ngsi-ld/v1/entities?type=Sensor&limit=1&offset=1');
    expect(next.json[0].id).toBe('urn:ngsi-ld:Sensor:s2');
    expect(next.headers.get('link')).toContain('rel="prev"');
  });

  it('returns a FeatureCollection for geo+json', async () => {
    const res = await get('/ngsi-ld/v1/entities?type=Building', { Accept: 'application/geo+json' });
    expect(res.json.type).toBe('FeatureCollection');
    expect(res.json.features.length).toBeGreaterThanOrEqual(1);
    expect(res.json['@context']).toBe(ctxUrl);
    expect(res.json.features[0]).not.toHaveProperty('@context');
  });
});
