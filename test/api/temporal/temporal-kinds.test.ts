// Temporal representations of every attribute kind (NGSI-LD §4.5.7, §4.5.9): normalized instances
// keep their payload member, temporalValues use the member of each kind (values, objects, ...).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { HOUR, iso, O0, ok, TP } from './fixture.js';

const ID = 'urn:ngsi-ld:Vehicle:k1';
const at = (h: number) => iso(O0 + h * HOUR);
let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
  await ok(b.request('POST', TP, {
    body: {
      id: ID, type: 'Vehicle',
      owner: [{ type: 'Relationship', object: 'urn:ngsi-ld:Person:a', observedAt: at(0) }, { type: 'Relationship', object: 'urn:ngsi-ld:Person:b', observedAt: at(1) }],
      location: [{ type: 'GeoProperty', value: { type: 'Point', coordinates: [1, 2] }, observedAt: at(0) }],
      title: [{ type: 'LanguageProperty', languageMap: { en: 'Car', fr: 'Voiture' }, observedAt: at(0) }],
      tags: [{ type: 'ListProperty', valueList: ['a', 'b'], observedAt: at(0) }],
      info: [{ type: 'JsonProperty', json: { any: [1, null] }, observedAt: at(0) }],
      speed: [{ type: 'Property', value: 50, observedAt: at(0), accuracy: { type: 'Property', value: 0.5 } }],
    },
  }), 201);
});
afterAll(() => b.close());

describe('attribute kinds', () => {
  it('normalized keeps each kind with its payload member and sub-attributes', async () => {
    const e = (await b.request('GET', `${TP}/${ID}`)).json;
    expect(e.owner.map((i: any) => [i.type, i.object])).toEqual([['Relationship', 'urn:ngsi-ld:Person:a'], ['Relationship', 'urn:ngsi-ld:Person:b']]);
    expect(e.location[0]).toMatchObject({ type: 'GeoProperty', value: { type: 'Point', coordinates: [1, 2] } });
    expect(e.title[0]).toMatchObject({ type: 'LanguageProperty', languageMap: { en: 'Car', fr: 'Voiture' } });
    expect(e.speed[0]).toMatchObject({ type: 'Property', value: 50, accuracy: { type: 'Property', value: 0.5 } });
  });

  it('temporalValues uses the member of each kind', async () => {
    const e = (await b.request('GET', `${TP}/${ID}?options=temporalValues`)).json;
    expect(e.owner).toEqual({ type: 'Relationship', objects: [['urn:ngsi-ld:Person:a', at(0)], ['urn:ngsi-ld:Person:b', at(1)]] });
    expect(e.location).toEqual({ type: 'GeoProperty', values: [[{ type: 'Point', coordinates: [1, 2] }, at(0)]] });
    expect(e.title).toEqual({ type: 'LanguageProperty', languageMaps: [[{ languageMap: { en: 'Car', fr: 'Voiture' } }, at(0)]] });
    expect(e.tags).toEqual({ type: 'ListProperty', valueLists: [[['a', 'b'], at(0)]] });
    expect(e.info).toEqual({ type: 'JsonProperty', jsons: [[{ json: { any: [1, null] } }, at(0)]] });
    expect(e.speed).toEqual({ type: 'Property', values: [[50, at(0)]] });
  });

  it('counts relationships in aggregatedValues, and refuses sums over them', async () => {
    const e = (await b.request('GET', `${TP}/${ID}?options=aggregatedValues&aggrMethods=totalCount,distinctCount&attrs=owner`)).json;
    const bound = (h: number) => at(h).replace('.000Z', 'Z');
    expect(e.owner).toEqual({ type: 'Relationship', totalCount: [[2, bound(0), bound(1)]], distinctCount: [[2, bound(0), bound(1)]] });
    expect((await b.request('GET', `${TP}/${ID}?options=aggregatedValues&aggrMethods=sum&attrs=owner`)).status).toBe(400);
  });
});
