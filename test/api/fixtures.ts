// Entity fixtures shared by the API tests: every attribute kind, multi-attributes, sub-attributes.

export const BUILDING = {
  id: 'urn:ngsi-ld:Building:b1',
  type: 'Building',
  name: { type: 'Property', value: 'Main hall' },
  temperature: [
    {
      type: 'Property', value: 21.5, unitCode: 'CEL', observedAt: '2026-05-01T09:00:00.000Z',
      accuracy: { type: 'Property', value: 0.5 },
    },
    { type: 'Property', value: 19, datasetId: 'urn:ngsi-ld:Dataset:outside' },
  ],
  address: { type: 'Property', value: { streetAddress: '1 Main St' } },
  owner: { type: 'Relationship', object: 'urn:ngsi-ld:Person:p1' },
  location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [13.39, 52.55] } },
  category: { type: 'VocabProperty', vocab: 'commercial' },
  title: { type: 'LanguageProperty', languageMap: { en: 'Hall', fr: 'Salle' } },
  config: { type: 'JsonProperty', json: { any: { nested: true }, list: [1, 'a'] } },
  readings: { type: 'ListProperty', valueList: [1, 2, 3] },
  sensors: { type: 'ListRelationship', objectList: [{ object: 'urn:ngsi-ld:Sensor:s1' }, { object: 'urn:ngsi-ld:Sensor:s2' }] },
};

export const SENSOR = {
  id: 'urn:ngsi-ld:Sensor:s1',
  type: 'Sensor',
  humidity: { type: 'Property', value: 40 },
  isPartOf: { type: 'Relationship', object: 'urn:ngsi-ld:Building:b1' },
};

export function clone<T>(v: T): T {
  return structuredClone(v);
}
