import { describe, expect, it } from 'vitest';
import {
  BadRequestDataError, LOCATION, NGSI_LD, OBSERVATION_SPACE, parseEntity, type Attribute, type Entity,
} from '../../src/ngsi/index.js';
import { EX, T0, dc, mapper } from './fake-mapper.js';

const parse = (doc: unknown): Entity => parseEntity(doc, mapper, { now: T0 });
const base = { id: 'urn:ngsi-ld:Building:1', type: 'Building' };
const attr = (doc: Record<string, unknown>, name: string, iri = dc(name)): Attribute => {
  const instances = parse({ ...base, ...doc }).attrs[iri];
  expect(instances).toHaveLength(1);
  return instances![0]!;
};
const rejects = (doc: unknown, title: RegExp): void => {
  expect(() => parse(doc)).toThrow(BadRequestDataError);
  expect(() => parse(doc)).toThrow(title);
};

describe('parseEntity: entity members [§5.6.1]', () => {
  it('reads id, expanded types, scope and stamps createdAt/modifiedAt with now', () => {
    const e = parse({ ...base, type: ['Building', 'Shop'], scope: ['/A/B', '/C'], '@context': ['x'], createdAt: 'x' });
    expect(e).toEqual({
      id: base.id, types: [EX + 'Building', dc('Shop')], scope: ['/A/B', '/C'], attrs: {}, createdAt: T0, modifiedAt: T0,
    });
  });

  it('accepts one scope as a string', () => {
    expect(parse({ ...base, scope: '/A' }).scope).toEqual(['/A']);
  });

  it('takes the id from the path when the body has none, and refuses a different one', () => {
    expect(parseEntity({ type: 'Building' }, mapper, { now: T0, id: 'urn:x:1' }).id).toBe('urn:x:1');
    expect(() => parseEntity({ ...base }, mapper, { now: T0, id: 'urn:x:2' })).toThrow(/does not match/);
  });

  it.each([
    [{ type: 'Building' }, /id is missing/],
    [{ ...base, id: 'not a uri' }, /not an absolute URI/],
    [{ ...base, id: 'noscheme' }, /not an absolute URI/],
    [{ ...base, id: 42 }, /id must be a string/],
    [{ id: base.id }, /type is missing/],
    [{ ...base, type: [] }, /non-empty array/],
    [{ ...base, type: 'Bad(Type)' }, /forbidden character/],
    [{ ...base, scope: 'A/B' }, /scope path/],
    [{ ...base, scope: '/A/+' }, /scope path/],
    [[], /must be a JSON object/],
    ['x', /must be a JSON object/],
  ])('rejects invalid entity %j with BadRequestData', (doc, title) => rejects(doc, title));
});

describe('parseEntity: attribute kinds (normalized input) [§4.5]', () => {
  it('reads a Property with unitCode, observedAt and sub-attributes, expanding value keys', () => {
    const a = attr({
      temperature: {
        type: 'Property', value: { reading: 21.5, '@type': 'x', id: 'keep', nested: [{ inner: 1 }] },
        unitCode: 'CEL', observedAt: '2024-01-01T10:00:00+01:00', createdAt: 'ignored', instanceId: 'ignored',
        accuracy: { type: 'Property', value: 0.1 },
        observedBy: { type: 'Relationship', object: 'urn:ngsi-ld:Sensor:1' },
      },
    }, 'temperature', EX + 'temperature');
    expect(a).toEqual({
      kind: 'Property', value: { [dc('reading')]: 21.5, '@type': 'x', id: 'keep', [dc('nested')]: [{ [dc('inner')]: 1 }] },
      unitCode: 'CEL', observedAt: Date.UTC(2024, 0, 1, 9), observedAtText: '2024-01-01T10:00:00+01:00', createdAt: T0, modifiedAt: T0,
      sub: {
        [dc('accuracy')]: { kind: 'Property', value: 0.1, createdAt: T0, modifiedAt: T0, sub: {} },
        [dc('observedBy')]: { kind: 'Relationship', object: 'urn:ngsi-ld:Sensor:1', createdAt: T0, modifiedAt: T0, sub: {} },
      },
    });
  });

  it('reads a Relationship with objectType, and one with several objects', () => {
    expect(attr({ owner: { type: 'Relationship', object: 'urn:p:1', objectType: 'Person' } }, 'owner', EX + 'owner'))
      .toMatchObject({ kind: 'Relationship', object: 'urn:p:1', objectType: dc('Person') });
    expect(attr({ rel: { type: 'Relationship', object: ['urn:a:1', 'urn:a:2'] } }, 'rel'))
      .toMatchObject({ object: ['urn:a:1', 'urn:a:2'] });
  });

  it('reads a GeoProperty verbatim, also from JSON text', () => {
    const point = { type: 'Point', coordinates: [2.35, 48.85] };
    expect(attr({ location: { type: 'GeoProperty', value: point } }, 'location', LOCATION)).toMatchObject({ kind: 'GeoProperty', value: point });
    expect(attr({ location: { type: 'GeoProperty', value: JSON.stringify(point) } }, 'location', LOCATION)).toMatchObject({ value: point });
  });

  it('reads LanguageProperty, VocabProperty (expanded), JsonProperty (verbatim), ListProperty, ListRelationship', () => {
    expect(attr({ name: { type: 'LanguageProperty', languageMap: { en: 'Hi', 'fr-CH': ['Salut', 'Allô'], '@none': 'x' } } }, 'name'))
      .toMatchObject({ kind: 'LanguageProperty', languageMap: { en: 'Hi', 'fr-CH': ['Salut', 'Allô'], '@none': 'x' } });
    expect(attr({ cat: { type: 'VocabProperty', vocab: ['Shop', 'https://x.org/y'] } }, 'cat'))
      .toMatchObject({ kind: 'VocabProperty', vocab: [dc('Shop'), 'https://x.org/y'] });
    expect(attr({ cfg: { type: 'JsonProperty', json: { a: { b: [1, null] } } } }, 'cfg'))
      .toMatchObject({ kind: 'JsonProperty', json: { a: { b: [1, null] } } });
    expect(attr({ l: { type: 'ListProperty', valueList: [1, { k: 2 }] } }, 'l'))
      .toMatchObject({ kind: 'ListProperty', valueList: [1, { [dc('k')]: 2 }] });
    expect(attr({ lr: { type: 'ListRelationship', objectList: ['urn:a:1', { object: 'urn:a:2' }], objectType: 'T' } }, 'lr'))
      .toMatchObject({ kind: 'ListRelationship', objectList: ['urn:a:1', 'urn:a:2'], objectType: dc('T') });
  });

  it('accepts the kind as a full IRI', () => {
    expect(attr({ p: { type: NGSI_LD + 'Property', value: 1 } }, 'p')).toMatchObject({ kind: 'Property', value: 1 });
  });

  it('reads a multi-attribute', () => {
    const e = parse({ ...base, speed: [{ type: 'Property', value: 1 }, { type: 'Property', value: 2, datasetId: 'urn:ds:gps' }] });
    expect(e.attrs[dc('speed')]!.map((a) => a.datasetId)).toEqual([undefined, 'urn:ds:gps']);
  });
});

describe('parseEntity: concise input inference [§4.5 concise]', () => {
  it.each([
    ['a number', 21, { kind: 'Property', value: 21 }],
    ['a string', 'x', { kind: 'Property', value: 'x' }],
    ['a boolean', false, { kind: 'Property', value: false }],
    ['an array of scalars', [1, 'a'], { kind: 'Property', value: [1, 'a'] }],
    ['an empty array', [], { kind: 'Property', value: [] }],
    ['{value}', { value: { a: 1 } }, { kind: 'Property', value: { [dc('a')]: 1 } }],
    ['{value: geometry}', { value: { type: 'Point', coordinates: [1, 2] } }, { kind: 'GeoProperty' }],
    ['a bare geometry', { type: 'Point', coordinates: [1, 2] }, { kind: 'GeoProperty', value: { type: 'Point', coordinates: [1, 2] } }],
    ['{object}', { object: 'urn:a:1' }, { kind: 'Relationship', object: 'urn:a:1' }],
    ['{languageMap}', { languageMap: { en: 'a' } }, { kind: 'LanguageProperty' }],
    ['{vocab}', { vocab: 'Shop' }, { kind: 'VocabProperty', vocab: dc('Shop') }],
    ['{json}', { json: { a: 1 } }, { kind: 'JsonProperty', json: { a: 1 } }],
    ['{valueList}', { valueList: [1] }, { kind: 'ListProperty' }],
    ['{objectList}', { objectList: ['urn:a:1'] }, { kind: 'ListRelationship' }],
  ])('reads %s as its kind', (_what, raw, expected) => {
    expect(attr({ thing: raw }, 'thing')).toMatchObject(expected);
  });

  it('makes {value} of location, observationSpace and operationSpace a GeoProperty', () => {
    expect(attr({ location: { value: '{"type":"Point","coordinates":[1,2]}' } }, 'location', LOCATION)).toMatchObject({ kind: 'GeoProperty' });
    expect(() => parse({ ...base, observationSpace: { value: 5 } })).toThrow(/invalid GeoProperty value/);
    expect(parse({ ...base, observationSpace: { type: 'Property', value: 5 } }).attrs[OBSERVATION_SPACE]![0]!.kind).toBe('Property');
  });

  it('reads concise sub-attributes', () => {
    expect(attr({ t: { value: 1, accuracy: 0.5, by: { object: 'urn:s:1' } } }, 't').sub).toMatchObject({
      [dc('accuracy')]: { kind: 'Property', value: 0.5 }, [dc('by')]: { kind: 'Relationship', object: 'urn:s:1' },
    });
  });

  it('refuses an object from which no kind can be inferred', () => {
    rejects({ ...base, address: { street: 'x' } }, /no value, object/);
  });
});

describe('parseEntity: validation [§4.6.2, §4.5.5]', () => {
  it.each([
    ['a forbidden character in an attribute name', { 'temp<1>': 1 }, /forbidden character/],
    ['an equals sign in a sub-attribute name', { t: { value: 1, 'a=b': 1 } }, /forbidden character.*at t\.a=b/],
    ['a control character in a name', { 'a\u0001': 1 }, /forbidden character/],
    ['JSON null as an attribute', { t: null }, /JSON null is not allowed \(at t\)/],
    ['JSON null deep in a value', { t: { value: { a: [1, null] } } }, /JSON null is not allowed \(at t\.value\.a\[1\]\)/],
    ['JSON null as a member', { t: { value: 1, unitCode: null } }, /JSON null.*t\.unitCode/],
    ['NGSI-LD Null as a value', { t: { value: 'urn:ngsi-ld:null' } }, /only allowed in updates/],
    ['NGSI-LD Null as a concise attribute', { t: 'urn:ngsi-ld:null' }, /only allowed in updates/],
    ['NGSI-LD Null in a sub-attribute', { t: { value: 1, s: { value: 'urn:ngsi-ld:null' } } }, /only allowed in updates/],
    ['two default instances', { t: [{ value: 1 }, { value: 2 }] }, /more than one instance without datasetId/],
    ['a duplicate datasetId', { t: [{ value: 1, datasetId: 'urn:d:1' }, { value: 2, datasetId: 'urn:d:1' }] }, /appears more than once/],
    ['a datasetId that is not a URI', { t: { value: 1, datasetId: 'x' } }, /datasetId must be an absolute URI/],
    ['a Property without value', { t: { type: 'Property', unitCode: 'C' } }, /needs a 'value'/],
    ['a Property with object', { t: { type: 'Property', object: 'urn:a:1' } }, /carries 'value', not 'object'/],
    ['conflicting payload members', { t: { value: 1, object: 'urn:a:1' } }, /conflicting members/],
    ['a Relationship whose object is not a URI', { t: { type: 'Relationship', object: 'nope' } }, /object must be an absolute URI/],
    ['objectType on a Property', { t: { value: 1, objectType: 'T' } }, /objectType is only allowed/],
    ['an unknown attribute type', { t: { type: 'Thing', value: 1 } }, /unknown attribute type 'Thing'/],
    ['a bad observedAt', { t: { value: 1, observedAt: '2024-13-01T00:00:00Z' } }, /observedAt must be an ISO 8601/],
    ['an observedAt without zone', { t: { value: 1, observedAt: '2024-01-01T00:00:00' } }, /observedAt/],
    ['an impossible date', { t: { value: 1, observedAt: '2023-02-29T00:00:00Z' } }, /observedAt/],
    ['a bad language tag', { t: { languageMap: { 'e n': 'x' } } }, /not a language tag/],
    ['an empty vocab', { t: { vocab: '' } }, /vocab must be/],
    ['a JSON-LD keyword as attribute', { '@id': 'x' }, /JSON-LD keyword/],
    ['a bare geometry without coordinates', { where: { type: 'Point' } }, /invalid GeoProperty value/],
    ['JSON null as scope', { scope: null }, /JSON null is not allowed \(at scope\)/],
    ['JSON null as type', { type: null }, /JSON null is not allowed \(at type\)/],
  ])('rejects %s', (_what, doc, title) => rejects({ ...base, ...doc }, title));

  it.each([
    ['a longitude out of range', { type: 'Point', coordinates: [181, 0] }, /longitude 181/],
    ['a latitude out of range', { type: 'Point', coordinates: [0, -91] }, /latitude -91/],
    ['a short position', { type: 'Point', coordinates: [1] }, /position/],
    ['an open polygon ring', { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1]]] }, /closed/],
    ['a ring of three positions', { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [0, 0]]] }, /at least 4/],
    ['a one-point LineString', { type: 'LineString', coordinates: [[0, 0]] }, /at least 2/],
    ['an unknown geometry type', { type: 'Circle', coordinates: [0, 0] }, /not a GeoJSON geometry type/],
    ['a collection with a bad member', { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: 'x' }] }, /position/],
    ['text that is not JSON', '{"type": Point', /neither a GeoJSON object/],
  ])('rejects a GeoProperty with %s', (_what, value, title) => {
    rejects({ ...base, location: { type: 'GeoProperty', value } }, title);
  });

  it('accepts every geometry type', () => {
    const ring = [[0, 0], [1, 0], [1, 1], [0, 0]];
    for (const value of [
      { type: 'MultiPoint', coordinates: [[0, 0], [1, 1]] },
      { type: 'LineString', coordinates: [[0, 0], [1, 1, 10]] },
      { type: 'MultiLineString', coordinates: [[[0, 0], [1, 1]]] },
      { type: 'Polygon', coordinates: [ring] },
      { type: 'MultiPolygon', coordinates: [[ring], [ring]] },
      { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [0, 0] }] },
    ]) {
      expect(attr({ location: { type: 'GeoProperty', value } }, 'location', LOCATION)).toMatchObject({ value });
    }
  });
});
