import { describe, expect, it } from 'vitest';
import {
  LOCATION, SCOPE, parseEntity, renderEntity, type Entity, type RenderOptions,
} from '../../src/ngsi/index.js';
import { EX, T0, T1, dc, mapper } from './fake-mapper.js';

/** A flat projection of these members. */
const names = (members: string[]): Map<string, undefined> => new Map(members.map((m) => [m, undefined]));

/** One attribute of every kind, in normalized compact form. */
const NORMALIZED = {
  id: 'urn:ngsi-ld:Building:1',
  type: 'Building',
  scope: '/A/B',
  temperature: {
    type: 'Property', value: 21.5, unitCode: 'CEL', observedAt: '2024-01-01T00:00:00.000Z',
    accuracy: { type: 'Property', value: 0.1 }, observedBy: { type: 'Relationship', object: 'urn:ngsi-ld:Sensor:1' },
  },
  address: { type: 'Property', value: { street: 'Main', lines: [{ no: 1 }], '@type': 'Address' } },
  shape: { type: 'Property', value: { type: 'Point', coordinates: [1, 2] } },
  owner: { type: 'Relationship', object: 'urn:ngsi-ld:Person:1', objectType: 'Person' },
  location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.35, 48.85] } },
  name: { type: 'LanguageProperty', languageMap: { en: 'Town hall', fr: 'Hôtel de ville', '@none': 'HdV' } },
  category: { type: 'VocabProperty', vocab: ['Public', 'Office'] },
  config: { type: 'JsonProperty', json: { Some: { raw: [1, null] } } },
  tags: { type: 'ListProperty', valueList: ['a', { k: 1 }] },
  members: { type: 'ListRelationship', objectList: [{ object: 'urn:ngsi-ld:Person:1' }, { object: 'urn:ngsi-ld:Person:2' }] },
  speed: [
    { type: 'Property', value: 1 },
    { type: 'Property', value: 2, datasetId: 'urn:ngsi-ld:Dataset:gps' },
  ],
};

const entity: Entity = parseEntity(NORMALIZED, mapper, { now: T0 });
const render = (opts: Partial<RenderOptions>, e: Entity = entity) =>
  renderEntity(e, mapper, { format: 'normalized', sysAttrs: false, ...opts });

describe('renderEntity: normalized [§4.5]', () => {
  it('gives back the normalized input for every attribute kind', () => {
    expect(render({})).toEqual(NORMALIZED);
  });

  it('renders several types as an array and several scopes as an array', () => {
    const e = { ...entity, types: [EX + 'Building', dc('Shop')], scope: ['/A', '/B'] };
    expect(render({}, e)).toMatchObject({ type: ['Building', 'Shop'], scope: ['/A', '/B'] });
  });

  it('adds createdAt/modifiedAt everywhere with sysAttrs [§4.8]', () => {
    const e = { ...entity, modifiedAt: T1 };
    const out = render({ sysAttrs: true }, e);
    expect(out).toMatchObject({ createdAt: '2024-01-01T00:00:00.000Z', modifiedAt: '2024-01-01T00:01:00.000Z' });
    expect(out.temperature).toMatchObject({ createdAt: '2024-01-01T00:00:00.000Z', accuracy: { createdAt: '2024-01-01T00:00:00.000Z' } });
    expect(out.speed).toMatchObject([{ modifiedAt: '2024-01-01T00:00:00.000Z' }, { modifiedAt: '2024-01-01T00:00:00.000Z' }]);
    expect(render({}, e)).not.toHaveProperty('createdAt');
  });
});

describe('renderEntity: keyValues [§4.5.4]', () => {
  it('reduces each attribute to its payload, wrapping the member of the newer kinds', () => {
    expect(render({ format: 'keyValues' })).toEqual({
      id: 'urn:ngsi-ld:Building:1', type: 'Building', scope: '/A/B',
      temperature: 21.5,
      address: NORMALIZED.address.value,
      shape: { type: 'Point', coordinates: [1, 2] },
      owner: 'urn:ngsi-ld:Person:1',
      location: { type: 'Point', coordinates: [2.35, 48.85] },
      name: { languageMap: NORMALIZED.name.languageMap },
      category: { vocab: ['Public', 'Office'] },
      config: { json: NORMALIZED.config.json },
      tags: { valueList: ['a', { k: 1 }] },
      members: { objectList: ['urn:ngsi-ld:Person:1', 'urn:ngsi-ld:Person:2'] },
      speed: { dataset: { '@none': 1, 'urn:ngsi-ld:Dataset:gps': 2 } },
    });
  });

  it('gives the string of the chosen language with lang', () => {
    expect(render({ format: 'keyValues', lang: 'fr' }).name).toBe('Hôtel de ville');
  });
});

describe('renderEntity: concise [§4.5 concise]', () => {
  it('drops inferable types and makes plain values bare', () => {
    const out = render({ format: 'concise' });
    expect(out).toMatchObject({
      temperature: { value: 21.5, unitCode: 'CEL', accuracy: 0.1, observedBy: { object: 'urn:ngsi-ld:Sensor:1' } },
      address: { value: NORMALIZED.address.value },
      shape: { type: 'Property', value: { type: 'Point', coordinates: [1, 2] } },
      owner: { object: 'urn:ngsi-ld:Person:1', objectType: 'Person' },
      location: { type: 'Point', coordinates: [2.35, 48.85] },
      name: { languageMap: NORMALIZED.name.languageMap },
      category: { vocab: ['Public', 'Office'] },
      speed: [{ value: 1 }, { value: 2, datasetId: 'urn:ngsi-ld:Dataset:gps' }],
    });
    expect(out.temperature).not.toHaveProperty('type');
  });

  it('parses back to the same entity, also with sysAttrs', () => {
    for (const sysAttrs of [false, true]) {
      expect(parseEntity(render({ format: 'concise', sysAttrs }), mapper, { now: T0 })).toEqual(entity);
    }
  });

  it('keeps type for a Property that would read as a GeoProperty', () => {
    const e = parseEntity({ id: 'urn:x:1', type: 'T', location: { type: 'Property', value: 'somewhere', unitCode: 'x' } }, mapper, { now: T0 });
    const out = render({ format: 'concise' }, e);
    expect(out.location).toEqual({ type: 'Property', value: 'somewhere', unitCode: 'x' });
    expect(parseEntity(out, mapper, { now: T0 })).toEqual(e);
  });

  it('never makes an array of objects bare', () => {
    const e = parseEntity({ id: 'urn:x:1', type: 'T', list: { value: [{ a: 1 }] }, empty: { value: [] } }, mapper, { now: T0 });
    const out = render({ format: 'concise' }, e);
    expect(out).toMatchObject({ list: { value: [{ a: 1 }] }, empty: [] });
    expect(parseEntity(out, mapper, { now: T0 })).toEqual(e);
  });
});

describe('renderEntity: normalized and keyValues parse back [§4.5]', () => {
  it('round-trips normalized output with sysAttrs', () => {
    expect(parseEntity(render({ sysAttrs: true }), mapper, { now: T0 })).toEqual(entity);
  });
});

describe('renderEntity: projection [§4.21]', () => {
  it('keeps only picked members', () => {
    expect(render({ pick: names(['id', EX + 'temperature']) })).toEqual({ id: NORMALIZED.id, temperature: NORMALIZED.temperature });
    expect(Object.keys(render({ pick: names(['type', 'scope']) }))).toEqual(['type', 'scope']);
    expect(Object.keys(render({ pick: names([SCOPE]) }))).toEqual(['scope']);
  });

  it('leaves out omitted members', () => {
    const out = render({ omit: names(['id', dc('speed'), LOCATION]) });
    expect(out).not.toHaveProperty('id');
    expect(out).not.toHaveProperty('speed');
    expect(out).not.toHaveProperty('location');
    expect(out).toHaveProperty('type');
  });

  it('limits attributes with attrs but keeps id, type and scope', () => {
    expect(Object.keys(render({ attrs: new Set([EX + 'owner']) }))).toEqual(['id', 'type', 'scope', 'owner']);
  });
});

describe('renderEntity: lang [§4.15]', () => {
  const name = (lang: string, map: Record<string, string> = { en: 'Hi', 'fr-CH': 'Grüezi', fr: 'Salut', '@none': 'None' }) => {
    const e = parseEntity({ id: 'urn:x:1', type: 'T', name: { languageMap: map, note: { languageMap: map } } }, mapper, { now: T0 });
    return render({ lang }, e).name;
  };

  it.each([
    ['fr-CH', 'Grüezi', 'fr-CH'],
    ['FR', 'Salut', 'fr'],
    ['fr-BE', 'Salut', 'fr'],
    ['de,en;q=0.5', 'Hi', 'en'],
    ['en;q=0.2,fr', 'Salut', 'fr'],
    ['de', 'None', '@none'],
  ])('picks the best entry for %s', (lang, value, tag) => {
    expect(name(lang)).toMatchObject({ type: 'Property', value, lang: tag });
  });

  it('falls back to any entry, filters sub-attributes too; * shows one entry of any language', () => {
    expect(name('de', { it: 'Ciao' })).toMatchObject({ value: 'Ciao', lang: 'it', note: { type: 'Property', value: 'Ciao' } });
    expect(name('*')).toMatchObject({ type: 'Property', value: 'None', lang: '@none' });
    expect(name('*', { nl: 'Hallo', fr: 'Salut' })).toMatchObject({ type: 'Property', value: 'Hallo', lang: 'nl' });
    expect(name('fr-CH,fr;q=0.9,en;q=0.8,*;q=0.5')).toMatchObject({ value: 'Grüezi', lang: 'fr-CH' });
  });
});

describe('renderEntity: join=inline [§4.5.23]', () => {
  const person = (n: number): Entity => parseEntity({ id: `urn:ngsi-ld:Person:${n}`, type: 'Person', age: 30 + n, secret: 1 }, mapper, { now: T0 });
  const linked = (id: string) => [person(1), person(2)].find((p) => p.id === id);

  it('adds the linked entity, rendered normalized with the projection below its relationship, one level', () => {
    const out = render({ linked, omit: new Map([[EX + 'owner', names([dc('secret')])]]) });
    expect(out.owner).toEqual({ ...NORMALIZED.owner, entity: { id: 'urn:ngsi-ld:Person:1', type: 'Person', age: { type: 'Property', value: 31 } } });
    expect(out.members).toMatchObject({ entityList: [{ id: 'urn:ngsi-ld:Person:1' }, { id: 'urn:ngsi-ld:Person:2' }] });
    expect(out.temperature).toMatchObject({ observedBy: { object: 'urn:ngsi-ld:Sensor:1' } });
    expect(out.temperature).not.toHaveProperty('observedBy.entity');
  });

  it('replaces the relationship by the linked entity in keyValues', () => {
    expect(render({ format: 'keyValues', linked }).owner).toEqual({ id: 'urn:ngsi-ld:Person:1', type: 'Person', age: 31, secret: 1 });
  });

  it('inlines linked entities of linked entities up to joinLevel, each level projected by its subtree', () => {
    const pick = new Map<string, Map<string, undefined> | undefined>([['id', undefined], [EX + 'owner', names(['id', dc('age')])]]);
    const out = render({ linked, pick, joinLevel: 2 });
    expect(out).toEqual({ id: NORMALIZED.id, owner: { ...NORMALIZED.owner, entity: { id: 'urn:ngsi-ld:Person:1', age: { type: 'Property', value: 31 } } } });
    expect(render({ linked, joinLevel: 0 }).owner).toEqual(NORMALIZED.owner);
  });

  it('leaves relationships alone when the target is unknown', () => {
    expect(render({ linked: () => undefined }).owner).toEqual(NORMALIZED.owner);
  });
});
