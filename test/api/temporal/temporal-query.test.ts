// Temporal query (NGSI-LD §6.18.3.2 GET, §6.24.3.1 POST): the entity filters, soft-deleted entities,
// entity pagination with Link headers and counts, and the required time and entity filters.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { DAY, HOUR, iso, O0, ok, TP, writeSensor } from './fixture.js';

const S1 = 'urn:ngsi-ld:Sensor:f1';
const S2 = 'urn:ngsi-ld:Sensor:f2';
const S3 = 'urn:ngsi-ld:Sensor:gone';
const B1 = 'urn:ngsi-ld:Building:b1';
const AFTER = `timerel=after&timeAt=${iso(O0 - 2 * DAY)}`;

let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
  await writeSensor(b, S1);
  await writeSensor(b, S2);
  await ok(b.request('POST', TP, { body: { id: B1, type: 'Building', temperature: [{ type: 'Property', value: 1, observedAt: iso(O0) }] } }), 201);
  await ok(b.request('POST', TP, { body: { id: S3, type: 'Sensor', temperature: [{ type: 'Property', value: 9, observedAt: iso(O0 + HOUR) }] } }), 201);
  await ok(b.request('DELETE', `/ngsi-ld/v1/entities/${S3}`));
});
afterAll(() => b.close());

const ids = async (query: string): Promise<string[]> => {
  const res = await b.request('GET', `${TP}?${query}`);
  expect(res.status, res.text).toBe(200);
  return res.json.map((e: any) => e.id);
};

describe('GET /temporal/entities', () => {
  it('selects by type (comma list), id, idPattern, attrs or local=true; deleted entities included', async () => {
    expect(await ids(`type=Sensor&${AFTER}`)).toEqual([S1, S2, S3]);
    expect(await ids(`type=Sensor,Building&${AFTER}`)).toEqual([S1, S2, B1, S3]);
    expect(await ids(`type=*&id=${S2},${B1}&${AFTER}`)).toEqual([S2, B1]);
    expect(await ids(`type=Sensor&idPattern=f[0-9]$&${AFTER}`)).toEqual([S1, S2]);
    // power was never observed: it has instances on createdAt only.
    expect(await ids(`attrs=power&timeproperty=createdAt&${AFTER}`)).toEqual([S1, S2]);
    expect(await ids(`local=true&${AFTER}`)).toEqual([S1, S2, B1, S3]);
  });

  it('takes the query language of Query Entities: type selections, q and scopeQ', async () => {
    expect(await ids(`type=(Sensor;Building)&${AFTER}`)).toEqual([]);
    // q is checked against the instances in the window (§5.7.4.4): humidity is never observed, so
    // it has instances on modifiedAt, not on observedAt.
    expect(await ids(`type=Sensor|Building&q=humidity>=60&timeproperty=modifiedAt&${AFTER}`)).toEqual([S1, S2]);
    expect(await ids(`type=Sensor|Building&q=humidity>=60&${AFTER}`)).toEqual([]);
    // The deleted sensor had temperature 9 within the window: it matches, deleted or not.
    expect(await ids(`type=Sensor&q=temperature==9&${AFTER}`)).toEqual([S3]);
    expect(await ids(`type=Sensor&q=temperature==9&timerel=before&timeAt=${iso(O0)}`)).toEqual([]);
    expect(await ids(`local=true&scopeQ=/Nowhere&${AFTER}`)).toEqual([]);
  });

  it('shows each entity with the instances of the window, and the same answer as retrieving it', async () => {
    const list = (await b.request('GET', `${TP}?type=Building,Sensor&attrs=temperature&timerel=before&timeAt=${iso(O0 + DAY)}&lastN=2`)).json;
    const one = (await b.request('GET', `${TP}/${S2}?attrs=temperature&timerel=before&timeAt=${iso(O0 + DAY)}&lastN=2`)).json;
    expect(list[1]).toEqual(one);
    expect(list.map((e: any) => e.temperature.map((i: any) => i.value))).toEqual([[20, 21], [20, 21], [1], [9]]);
  });

  it('pages over entities with limit, offset, count and Link headers', async () => {
    const res = await b.request('GET', `${TP}?type=Sensor&${AFTER}&limit=2&count=true`);
    expect(res.json.map((e: any) => e.id)).toEqual([S1, S2]);
    expect(res.headers.get('ngsild-results-count')).toBe('3');
    expect(res.headers.get('link')).toContain('rel="next"');
    const next = await b.request('GET', `${TP}?type=Sensor&${AFTER}&limit=2&offset=2`);
    expect(next.json.map((e: any) => e.id)).toEqual([S3]);
    expect(next.headers.get('link')).toContain('rel="prev"');
  });

  it('carries @context in the body for application/ld+json', async () => {
    const res = await b.request('GET', `${TP}?type=Building&${AFTER}`, { headers: { Accept: 'application/ld+json' } });
    expect(res.headers.get('content-type')).toBe('application/ld+json');
    expect(res.json[0]['@context']).toBeDefined();
  });

  it.each([
    ['type=Sensor', 400],
    [`type=Sensor&timerel=after`, 400],
    [`id=${S1}&${AFTER}`, 400],
    [`${AFTER}`, 400],
    [`type=Sensor&${AFTER}&limit=5000`, 403],
    [`type=Sensor&${AFTER}&q=temperature>`, 400],
    [`type=Sensor&${AFTER}&lang=en`, 501],
    [`type=Sensor&${AFTER}&join=flat`, 400],
    [`type=Sensor&${AFTER}&georel=near;maxDistance==10`, 400],
  ])('GET ?%s is %i', async (query, status) => {
    const res = await b.request('GET', `${TP}?${query}`);
    expect(res.status, res.text).toBe(status);
  });
});

describe('POST /temporal/entityOperations/query', () => {
  const post = (body: unknown, query = '') => b.request('POST', `/ngsi-ld/v1/temporal/entityOperations/query${query}`, { body });

  it('answers as the GET query with the same filters', async () => {
    const res = await post({
      type: 'Query', entities: [{ type: 'Sensor' }], attrs: ['temperature'],
      temporalQ: { timerel: 'before', timeAt: iso(O0 + DAY), lastN: 2 },
    }, '?count=true');
    expect(res.status, res.text).toBe(200);
    const get = await b.request('GET', `${TP}?type=Sensor&attrs=temperature&timerel=before&timeAt=${iso(O0 + DAY)}&lastN=2`);
    expect(res.json).toEqual(get.json);
    expect(res.headers.get('ngsild-results-count')).toBe('3');
  });

  it('takes one selector with id or idPattern, and representation options from the URL', async () => {
    const res = await post({ type: 'Query', entities: [{ type: 'Sensor', idPattern: '.*f2$' }], attrs: 'temperature',
      temporalQ: { timerel: 'after', timeAt: iso(O0 + 5 * DAY) } }, '?options=temporalValues');
    expect(res.json).toEqual([{ id: S2, type: 'Sensor', temperature: { type: 'Property', values: [[30, iso(O0 + 5 * DAY)], [31, iso(O0 + 5.5 * DAY)], [32, iso(O0 + 6 * DAY)]] } }]);
  });

  it('leaves out matching entities with no instance in the window, GET and POST [§5.7.4]', async () => {
    // B1's only instance is at O0; S1 and S2 have instances after O0 + 6 days.
    expect(await ids(`type=Sensor,Building&timerel=after&timeAt=${iso(O0 + 6 * DAY)}`)).toEqual([S1, S2]);
    const res = await post({ type: 'Query', entities: [{ type: 'Building' }, { type: 'Sensor', idPattern: 'f1$' }], attrs: ['temperature'],
      temporalQ: { timerel: 'after', timeAt: iso(O0 + 6 * DAY) } });
    expect(res.json.map((e: any) => e.id)).toEqual([S1]);
    // A datasetId no instance has: no entity at all.
    expect(await ids(`type=Sensor&datasetId=urn:ngsi-ld:Dataset:none&${AFTER}`)).toEqual([]);
  });

  it('takes several entity selectors as alternatives', async () => {
    const res = await post({ type: 'Query', entities: [{ type: 'Building' }, { type: 'Sensor', idPattern: 'f1$' }], attrs: ['temperature'],
      temporalQ: { timerel: 'after', timeAt: iso(O0 - 2 * DAY) } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.map((e: any) => e.id)).toEqual([S1, B1]);
  });

  it.each([
    [{ entities: [{ type: 'Sensor' }], temporalQ: { timerel: 'after', timeAt: iso(O0) } }, 400],
    [{ type: 'Query', entities: [{ type: 'Sensor' }] }, 400],
    [{ type: 'Query', temporalQ: { timerel: 'after', timeAt: iso(O0) } }, 400],
    [{ type: 'Query', entities: [{ type: 'Sensor' }], temporalQ: { timerel: 'after', timeAt: iso(O0) }, colour: 'red' }, 400],
    [{ type: 'Query', entities: [{ type: 'Sensor' }], temporalQ: { timerel: 'after', timeAt: iso(O0) }, lang: 'en' }, 501],
  ])('%j is %i', async (body, status) => {
    const res = await post(body);
    expect(res.status, res.text).toBe(status);
  });
});

describe('GET /temporal/entities with pick', () => {
  it('keeps the entities with instances in the window when pick shows none of their attributes [§4.21]', async () => {
    const res = await b.request('GET', `${TP}?type=Sensor,Building&pick=id&timerel=after&timeAt=${iso(O0 + 6 * DAY)}`);
    expect(res.json).toEqual([{ id: S1 }, { id: S2 }]);
  });
});
