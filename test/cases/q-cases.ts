// The q case table (NGSI-LD §4.9): twelve fixture entities and the ids each q must select. The same
// table runs against the in-memory evaluator and against the SQL translation over a real store.

import type { Attribute, Entity, Json } from '../../src/ngsi/index.js';
import { mapper } from '../ngsi/fake-mapper.js';

export interface QCase {
  q: string;
  /** Entity numbers (1..12) the q selects, in creation order. */
  expect: number[];
}

const x = (term: string): string => mapper.expandTerm(term);
export const T0 = Date.parse('2024-01-01T00:00:00Z');
const at = (iso: string): number => Date.parse(iso);
export const entityId = (n: number): string => `urn:ngsi-ld:Q:${String(n).padStart(2, '0')}`;

type Extra = Partial<Pick<Attribute, 'datasetId' | 'observedAt' | 'unitCode' | 'modifiedAt'>> & { sub?: Record<string, Attribute> };
const base = (extra: Extra) => ({ createdAt: T0, modifiedAt: T0, sub: {}, ...extra });
const prop = (value: Json, extra: Extra = {}): Attribute => ({ kind: 'Property', value, ...base(extra) });
const rel = (object: string | string[], extra: Extra = {}): Attribute => ({ kind: 'Relationship', object, ...base(extra) });

/** Keys of compound Property values are expanded, as ngsi/parse leaves them. */
function expanded(v: Json): Json {
  if (Array.isArray(v)) return v.map(expanded);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, item]) => [x(k), expanded(item)]));
}

function entity(n: number, types: string[], attrs: Record<string, Attribute | Attribute[]>, scope?: string[]): Entity {
  const e: Entity = {
    id: entityId(n),
    types: types.map(x),
    attrs: Object.fromEntries(Object.entries(attrs).map(([k, a]) => [x(k), Array.isArray(a) ? a : [a]])),
    createdAt: T0,
    modifiedAt: T0,
  };
  if (scope) e.scope = scope;
  return e;
}

/** Twelve entities covering every attribute kind and value shape q can meet. */
export const Q_FIXTURES: Entity[] = [
  entity(1, ['Room'], {
    temperature: prop(21.5, { observedAt: at('2024-01-01T10:00:00Z'), unitCode: 'CEL', sub: { [x('accuracy')]: prop(0.5) } }),
    name: prop('Alpha'),
    isOpen: prop(true),
    owner: rel('urn:ngsi-ld:Person:alice'),
    tags: prop(['red', 'blue']),
    address: prop(expanded({ streetAddress: { streetName: 'Main Street', number: 10 }, city: 'Berlin' })),
    dateObserved: prop('2024-01-15T10:00:00Z'),
  }, ['/Madrid/Gardens/ParqueNorte']),
  entity(2, ['Room'], {
    temperature: prop(18, { observedAt: at('2024-01-01T12:00:00Z'), unitCode: 'FAH' }),
    name: prop('Beta'),
    isOpen: prop(false),
    owner: rel('urn:ngsi-ld:Person:bob'),
    tags: prop(['green']),
    address: prop(expanded({ streetAddress: { streetName: 'Rue Haute', number: 5 }, city: 'Paris' })),
    dateObserved: prop('2024-02-01T00:00:00+01:00'),
    birthDate: prop('2020-05-01'),
    openingTime: prop('08:30:00'),
  }, ['/Madrid/Gardens/ParqueSur', '/Valencia']),
  entity(3, ['Room', 'Building'], {
    temperature: [
      prop(20, { observedAt: at('2024-01-02T00:00:00Z') }),
      prop(30, { observedAt: at('2024-01-03T00:00:00Z'), datasetId: 'urn:ngsi-ld:Dataset:raw' }),
    ],
    name: prop('Gamma'),
    count: prop(3),
    birthDate: prop('2021-12-31'),
  }, ['/Madrid']),
  entity(4, ['Room'], {
    temperature: prop('hot'),
    name: prop('alpha'),
    isOpen: prop('true'),
    count: prop('3'),
    openingTime: prop('18:00:00'),
  }, ['/Madrid/Centro/Sol']),
  entity(5, ['Building'], {
    humidity: prop(60),
    members: { kind: 'ListRelationship', objectList: ['urn:ngsi-ld:Person:alice', 'urn:ngsi-ld:Person:carol'], ...base({}) },
    owner: rel(['urn:ngsi-ld:Person:bob', 'urn:ngsi-ld:Person:dave']),
  }, ['/Valencia/Centro']),
  entity(6, ['Sensor'], {
    readings: { kind: 'ListProperty', valueList: [1, 5, 9], ...base({}) },
    temperature: prop(25, {
      observedAt: at('2024-01-05T00:00:00Z'), unitCode: 'CEL', modifiedAt: at('2024-03-01T00:00:00Z'),
      sub: { [x('sensor')]: rel('urn:ngsi-ld:Device:1'), [x('accuracy')]: prop(0.2) },
    }),
  }),
  entity(7, ['Sensor'], {
    temperature: prop([10, 40]),
    readings: { kind: 'ListProperty', valueList: ['a', 'b'], ...base({}) },
  }),
  entity(8, ['Sensor'], {}),
  entity(9, ['Device'], {
    config: { kind: 'JsonProperty', json: { mode: 'eco', level: 2 }, ...base({}) },
    location: { kind: 'GeoProperty', value: { type: 'Point', coordinates: [2.35, 48.85] }, ...base({}) },
    name: prop('He said "hi"'),
  }, ['/Lyon']),
  entity(10, ['Device'], {
    category: { kind: 'VocabProperty', vocab: [x('Office'), x('Public')], ...base({}) },
    label: { kind: 'LanguageProperty', languageMap: { en: 'Kitchen', fr: ['Cuisine', 'Coin cuisine'] }, ...base({}) },
    name: prop('Delta'),
  }),
  entity(11, ['Device', 'Sensor'], {
    category: { kind: 'VocabProperty', vocab: x('Home'), ...base({}) },
    label: { kind: 'LanguageProperty', languageMap: { en: 'Living room', de: 'Wohnzimmer' }, ...base({}) },
    description: prop('urn:ngsi-ld:Person:alice'),
    temperature: prop(-5),
  }, ['/Madrid/Gardens']),
  entity(12, ['Room'], {
    temperature: [prop(22, { datasetId: 'urn:ngsi-ld:Dataset:a' }), prop('warm', { datasetId: 'urn:ngsi-ld:Dataset:b' })],
    address: prop(expanded({ city: 'Berlin', zip: '10115' })),
    data: prop(expanded({ values: [1, 2, 3] })),
  }, ['/Madrid/Gardens/ParqueNorte/Rosaleda']),
];

const ALL = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
const WITH_TEMPERATURE = [1, 2, 3, 4, 6, 7, 11, 12];
const WITH_NAME = [1, 2, 3, 4, 9, 10];

export const Q_CASES: QCase[] = [
  // Existence, of attributes, sub-attributes, members and keys.
  { q: 'temperature', expect: WITH_TEMPERATURE },
  { q: '!temperature', expect: [5, 8, 9, 10] },
  { q: 'humidity', expect: [5] },
  { q: 'nonExisting', expect: [] },
  { q: '!nonExisting', expect: ALL },
  { q: 'temperature.accuracy', expect: [1, 6] },
  { q: '!temperature.accuracy', expect: [2, 3, 4, 5, 7, 8, 9, 10, 11, 12] },
  { q: 'temperature.observedAt', expect: [1, 2, 3, 6] },
  { q: 'temperature.unitCode', expect: [1, 2, 6] },
  { q: 'temperature.datasetId', expect: [3, 12] },
  { q: 'address[streetAddress]', expect: [1, 2] },
  { q: 'address[streetAddress.streetName]', expect: [1, 2] },
  { q: '!address[streetAddress]', expect: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12] },
  { q: 'address[city]', expect: [1, 2, 12] },
  { q: 'location', expect: [9] },
  { q: 'config[mode]', expect: [9] },
  { q: 'config[nothing]', expect: [] },
  { q: 'name[first]', expect: [] },
  { q: 'temperature.accuracy.observedAt', expect: [] },

  // Numbers: every operator, any instance (datasetId) and any array element.
  { q: 'temperature==21.5', expect: [1] },
  { q: 'temperature==20', expect: [3] },
  { q: 'temperature==30', expect: [3] },
  { q: 'temperature==22', expect: [12] },
  { q: 'temperature==-5', expect: [11] },
  { q: 'temperature==10', expect: [7] },
  { q: 'temperature==40', expect: [7] },
  { q: 'temperature>20', expect: [1, 3, 6, 7, 12] },
  { q: 'temperature>25', expect: [3, 7] },
  { q: 'temperature>=25', expect: [3, 6, 7] },
  { q: 'temperature<20', expect: [2, 7, 11] },
  { q: 'temperature<=18', expect: [2, 7, 11] },
  { q: 'temperature<-1', expect: [11] },
  { q: 'temperature<=1e1', expect: [7, 11] },
  { q: 'temperature!=20', expect: WITH_TEMPERATURE },
  { q: 'temperature!=10', expect: [1, 2, 3, 4, 6, 11, 12] },
  { q: 'temperature==15..25', expect: [1, 2, 3, 6, 12] },
  { q: 'temperature==20.5..21.5', expect: [1] },
  { q: 'temperature!=15..25', expect: [3, 4, 7, 11, 12] },
  { q: 'temperature==18,25,99', expect: [2, 6] },
  { q: 'temperature!=18,25', expect: [1, 3, 4, 7, 11, 12] },
  { q: 'temperature>20.5;temperature<22', expect: [1, 3, 7] },
  { q: 'count==3', expect: [3] },
  { q: 'count=="3"', expect: [4] },
  { q: 'humidity>=60;humidity<=60', expect: [5] },
  { q: 'readings==5', expect: [6] },
  { q: 'readings>8', expect: [6] },
  { q: 'readings==1..3', expect: [6] },
  { q: 'readings!=5', expect: [7] },

  // Strings: equality, ordering, ranges, lists, escapes; other types never equal a string.
  { q: 'name=="Alpha"', expect: [1] },
  { q: 'name=="alpha"', expect: [4] },
  { q: 'name!="Alpha"', expect: [2, 3, 4, 9, 10] },
  { q: 'name>"B"', expect: [2, 3, 4, 9, 10] },
  { q: 'name<"C"', expect: [1, 2] },
  { q: 'name=="Alpha","Gamma"', expect: [1, 3] },
  { q: 'name=="A".."C"', expect: [1, 2] },
  { q: 'name=="He said \\"hi\\""', expect: [9] },
  { q: 'readings=="a"', expect: [7] },
  { q: 'tags=="blue"', expect: [1] },
  { q: 'tags!="blue"', expect: [2] },
  { q: 'tags=="green","red"', expect: [1, 2] },
  { q: 'temperature=="hot"', expect: [4] },
  { q: 'temperature=="warm"', expect: [12] },
  { q: 'temperature!="hot"', expect: [1, 2, 3, 6, 7, 11, 12] },
  { q: 'temperature==22;temperature=="warm"', expect: [12] },

  // Keys inside compound values: [k], [k1.k2], [k1][k2], arrays at a key, raw keys of JSON/GeoJSON.
  { q: 'address[city]=="Berlin"', expect: [1, 12] },
  { q: 'address[city]!="Berlin"', expect: [2] },
  { q: 'address[streetAddress.streetName]=="Main Street"', expect: [1] },
  { q: 'address[streetAddress][number]>6', expect: [1] },
  { q: 'address[streetAddress.number]==5', expect: [2] },
  { q: 'address[zip]=="10115"', expect: [12] },
  { q: 'address[zip]==10115', expect: [] },
  { q: 'data[values]==2', expect: [12] },
  { q: 'data[values]!=5', expect: [12] },
  { q: 'address[city]~="^Ber"', expect: [1, 12] },
  { q: 'config[mode]=="eco"', expect: [9] },
  { q: 'config[level]>=2', expect: [9] },
  { q: 'location[type]=="Point"', expect: [9] },
  { q: 'address!="Berlin"', expect: [1, 2, 12] },
  { q: 'address=="Berlin"', expect: [] },
  { q: 'config==2', expect: [] },
  { q: 'location!=1', expect: [9] },

  // Booleans.
  { q: 'isOpen==true', expect: [1] },
  { q: 'isOpen==false', expect: [2] },
  { q: 'isOpen!=true', expect: [2, 4] },
  { q: 'isOpen=="true"', expect: [4] },

  // Regular expressions: raw, quoted, (?i), groups and classes holding ; and |.
  { q: 'name~=^A', expect: [1] },
  { q: 'name~=(?i)^a', expect: [1, 4] },
  { q: 'name!~=^A', expect: [2, 3, 4, 9, 10] },
  { q: 'name~=a$', expect: [1, 2, 3, 4, 10] },
  { q: 'name~="hi\\"$"', expect: [9] },
  { q: 'name~=(Al|Be)', expect: [1, 2] },
  { q: 'name~=[;|]', expect: [] },
  { q: 'temperature~=^h', expect: [4] },
  { q: 'owner~=alice', expect: [] },
  { q: 'label~=^Coin', expect: [10] },
  { q: 'name~=a$;name!~=^B', expect: [1, 3, 4, 10] },
  { q: 'temperature!~=^h', expect: [12] },
  { q: 'owner!~=alice', expect: [] },
  { q: 'readings!~=a', expect: [] },
  { q: 'readings!~=^c', expect: [7] },
  { q: 'label!~=^K', expect: [11] },
  { q: 'address[city]!~=^B', expect: [2] },
  { q: 'temperature.unitCode!~=C', expect: [2] },

  // Relationships and URIs: objects compare with == and != only.
  { q: 'owner==urn:ngsi-ld:Person:alice', expect: [1] },
  { q: 'owner=="urn:ngsi-ld:Person:bob"', expect: [2, 5] },
  { q: 'owner==urn:ngsi-ld:Person:dave', expect: [5] },
  { q: 'owner!=urn:ngsi-ld:Person:bob', expect: [1] },
  { q: 'owner==urn:ngsi-ld:Person:alice,urn:ngsi-ld:Person:dave', expect: [1, 5] },
  { q: 'owner>"urn"', expect: [] },
  { q: 'members==urn:ngsi-ld:Person:carol', expect: [5] },
  { q: 'description==urn:ngsi-ld:Person:alice', expect: [11] },
  { q: 'temperature.sensor==urn:ngsi-ld:Device:1', expect: [6] },
  { q: 'temperature.sensor', expect: [6] },
  { q: '"https://example.org/ns#owner"==urn:ngsi-ld:Person:bob', expect: [2, 5] },

  // VocabProperty (expanded literal) and LanguageProperty (any language).
  { q: 'category=="Office"', expect: [10] },
  { q: 'category=="Home"', expect: [11] },
  { q: 'category!="Office"', expect: [11] },
  { q: 'category==https://uri.etsi.org/ngsi-ld/default-context/Public', expect: [10] },
  { q: 'label=="Kitchen"', expect: [10] },
  { q: 'label=="Wohnzimmer"', expect: [11] },
  { q: 'label=="Cuisine"', expect: [10] },
  { q: 'label!="Kitchen"', expect: [11] },

  // Date-times (as instants), dates and times (as text), timestamp members.
  { q: 'dateObserved>2024-01-20T00:00:00Z', expect: [2] },
  { q: 'dateObserved<2024-01-31T23:30:00Z', expect: [1, 2] },
  { q: 'dateObserved==2024-01-31T23:00:00Z', expect: [2] },
  { q: 'dateObserved=="2024-01-15T10:00:00Z"', expect: [1] },
  { q: 'dateObserved==2024-01-01T00:00:00Z..2024-01-31T00:00:00Z', expect: [1] },
  { q: 'dateObserved>2024-01-20', expect: [2] },
  { q: 'birthDate<2021-01-01', expect: [2] },
  { q: 'birthDate==2020-01-01..2022-01-01', expect: [2, 3] },
  { q: 'birthDate>"2021"', expect: [3] },
  { q: 'openingTime<12:00:00', expect: [2] },
  { q: 'openingTime>=08:30:00', expect: [2, 4] },
  { q: 'temperature.observedAt>=2024-01-01T12:00:00Z', expect: [2, 3, 6] },
  { q: 'temperature.observedAt<=2024-01-01T11:00:00+01:00', expect: [1] },
  { q: 'temperature.observedAt==2024-01-01T00:00:00Z..2024-01-02T00:00:00Z', expect: [1, 2, 3] },
  { q: 'temperature.observedAt>2024-01-02', expect: [3, 6] },
  { q: 'temperature.observedAt!=2024-01-02T00:00:00Z', expect: [1, 2, 3, 6] },
  { q: 'temperature.modifiedAt>2024-02-01T00:00:00Z', expect: [6] },
  { q: 'temperature.createdAt==2024-01-01T00:00:00Z', expect: WITH_TEMPERATURE },

  // String members and sub-attribute values.
  { q: 'temperature.unitCode=="CEL"', expect: [1, 6] },
  { q: 'temperature.unitCode!="CEL"', expect: [2] },
  { q: 'temperature.datasetId==urn:ngsi-ld:Dataset:raw', expect: [3] },
  { q: 'temperature.datasetId=="urn:ngsi-ld:Dataset:b"', expect: [12] },
  { q: 'temperature.datasetId!=urn:ngsi-ld:Dataset:raw', expect: [12] },
  { q: 'temperature.accuracy<0.3', expect: [6] },
  { q: 'temperature.accuracy==0.5', expect: [1] },
  { q: 'temperature.accuracy!=0.5', expect: [6] },

  // Precedence: ; binds tighter than |; parentheses override.
  { q: 'name=="Alpha"|name=="Beta";isOpen==false', expect: [1, 2] },
  { q: 'name=="Alpha"|name=="Beta";isOpen==true', expect: [1] },
  { q: '(name=="Alpha"|name=="Beta");isOpen==false', expect: [2] },
  { q: '(name=="Alpha"|name=="Beta");isOpen==true', expect: [1] },
  { q: 'isOpen==true;name=="Beta"|humidity', expect: [5] },
  { q: 'isOpen==true;(name=="Beta"|humidity)', expect: [] },
  { q: '((temperature>20;temperature<25))|(humidity==60)', expect: [1, 3, 5, 7, 12] },
  { q: '!temperature;!humidity', expect: [8, 9, 10] },
  { q: '!temperature|humidity', expect: [5, 8, 9, 10] },
  { q: 'count==3|count=="3"', expect: [3, 4] },
  { q: '(((name)))', expect: WITH_NAME },

  // Attributes never stored anywhere.
  { q: 'unknownAttr==1', expect: [] },
  { q: 'unknownAttr!=1', expect: [] },
  { q: '!unknownAttr;name=="Delta"', expect: [10] },
  { q: 'unknownAttr.observedAt>2024-01-01T00:00:00Z', expect: [] },
  { q: 'unknownAttr|name=="Delta"', expect: [10] },
];
