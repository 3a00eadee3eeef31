// Temporal retrieve (NGSI-LD §6.19.3.1): every timerel × timeproperty returns exactly the stored
// instances in ascending order; lastN/firstN/offsetN; normalized arrays; temporalValues; sysAttrs;
// attrs, pick/omit and datasetId; errors.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, T0, type TestBroker } from '../../helpers/broker.js';
import { DAY, expectedIds, HOUR, idsOf, iso, O0, STEP, TP, writeSensor } from './fixture.js';

const ID = 'urn:ngsi-ld:Sensor:f1';
let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
  await writeSensor(b);
});
afterAll(() => b.close());

const get = async (query: string): Promise<any> => {
  const res = await b.request('GET', `${TP}/${ID}${query}`);
  expect(res.status, res.text).toBe(200);
  return res.json;
};

/** Instants per time property that fall exactly on a stored instant (to test inclusive/exclusive ends). */
const INSTANTS = {
  observedAt: [O0 + 2 * 12 * HOUR, O0 + 7 * 12 * HOUR],
  createdAt: [T0 + 4 * STEP, T0 + 10 * STEP],
  modifiedAt: [T0 + 3 * STEP, T0 + 8 * STEP],
  deletedAt: [T0 + 9 * STEP, T0 + 9 * STEP + 1],
} as const;

describe('timerel × timeproperty [§6.19.3.1, behaviour §6]', () => {
  for (const tp of ['observedAt', 'createdAt', 'modifiedAt', 'deletedAt'] as const) {
    const [a, z] = INSTANTS[tp];
    for (const [timerel, query, args] of [
      [undefined, '', []],
      ['before', `&timerel=before&timeAt=${iso(a)}`, [a]],
      ['after', `&timerel=after&timeAt=${iso(a)}`, [a]],
      ['between', `&timerel=between&timeAt=${iso(a)}&endTimeAt=${iso(z)}`, [a, z]],
    ] as const) {
      it(`returns exactly the stored instances for timeproperty=${tp} timerel=${timerel ?? '(none)'}, oldest first`, async () => {
        const e = await get(`?timeproperty=${tp}${query}`);
        for (const attr of ['temperature', 'humidity', 'power']) {
          const expected = expectedIds(b, ID, attr, tp, timerel, ...args);
          expect(idsOf(e, attr), attr).toEqual(expected);
        }
      });
    }
  }

  it('pins the boundaries: before excludes timeAt, after and between include timeAt, between excludes endTimeAt', async () => {
    const values = (e: any): number[] => e.temperature.map((i: any) => i.value);
    expect(values(await get(`?timerel=before&timeAt=${iso(O0 + DAY)}`))).toEqual([5, 20, 21]);
    expect(values(await get(`?timerel=after&timeAt=${iso(O0 + 5 * DAY)}`))).toEqual([30, 31, 32]);
    expect(values(await get(`?timerel=between&timeAt=${iso(O0 + DAY)}&endTimeAt=${iso(O0 + 2 * DAY)}`))).toEqual([22, 23]);
  });

  it('finds instances without observedAt only under createdAt and modifiedAt', async () => {
    expect((await get('')).humidity).toBeUndefined();
    expect(idsOf(await get('?timeproperty=modifiedAt'), 'humidity')).toHaveLength(13);
    expect(idsOf(await get('?timeproperty=createdAt'), 'humidity')).toHaveLength(13);
  });
});

describe('slicing [behaviour §6]', () => {
  const all = (): string[] => expectedIds(b, ID, 'temperature', 'observedAt');

  it('lastN keeps the newest N, oldest first; firstN the oldest N; offsetN skips first', async () => {
    expect(idsOf(await get('?lastN=3'), 'temperature')).toEqual(all().slice(-3));
    expect(idsOf(await get('?firstN=4'), 'temperature')).toEqual(all().slice(0, 4));
    expect(idsOf(await get('?firstN=4&offsetN=2'), 'temperature')).toEqual(all().slice(2, 6));
    expect(idsOf(await get('?lastN=2&offsetN=1'), 'temperature')).toEqual(all().slice(-3, -1));
    expect(idsOf(await get('?offsetN=11'), 'temperature')).toEqual(all().slice(11));
    expect(idsOf(await get(`?lastN=2&timerel=before&timeAt=${iso(O0 + 2 * DAY)}`), 'temperature'))
      .toEqual(expectedIds(b, ID, 'temperature', 'observedAt', 'before', O0 + 2 * DAY).slice(-2));
  });
});

describe('representations [§4.5.7, §4.5.9]', () => {
  it('normalized: every attribute is an array of instances with instanceId, also for a single instance', async () => {
    const e = await get('?lastN=1');
    expect(e).toEqual({
      id: ID, type: 'Sensor',
      temperature: [{ type: 'Property', value: 32, observedAt: iso(O0 + 12 * 12 * HOUR), instanceId: expect.stringMatching(/^urn:ngsi-ld:Instance:/) }],
    });
  });

  it('shows the time property read on, sysAttrs and deletion instances as NGSI-LD Null with deletedAt', async () => {
    const e = await get('?timeproperty=modifiedAt&attrs=power');
    expect(Object.keys(e)).toEqual(['id', 'type', 'power']);
    expect(e.power).toEqual([
      { type: 'Property', value: 'on', instanceId: expect.any(String), modifiedAt: iso(T0 + 4 * STEP) },
      { type: 'Property', value: 'urn:ngsi-ld:null', instanceId: expect.any(String), modifiedAt: iso(T0 + 9 * STEP), deletedAt: iso(T0 + 9 * STEP) },
    ]);
    const s = await get('?timeproperty=deletedAt&options=sysAttrs');
    expect(s.createdAt).toBe(iso(T0));
    expect(s.power).toEqual([{
      type: 'Property', value: 'urn:ngsi-ld:null', createdAt: iso(T0 + 9 * STEP), modifiedAt: iso(T0 + 9 * STEP),
      instanceId: expect.any(String), deletedAt: iso(T0 + 9 * STEP),
    }]);
  });

  it('temporalValues: {type, values: [[value, time], ...]} on the time property', async () => {
    const e = await get(`?options=temporalValues&timerel=before&timeAt=${iso(O0 + DAY)}`);
    expect(e.temperature).toEqual({ type: 'Property', values: [[5, iso(O0 - DAY)], [20, iso(O0)], [21, iso(O0 + 12 * HOUR)]] });
    const m = await get(`?format=temporalValues&timeproperty=modifiedAt&attrs=power`);
    expect(m.power).toEqual({ type: 'Property', values: [['on', iso(T0 + 4 * STEP)], ['urn:ngsi-ld:null', iso(T0 + 9 * STEP)]] });
  });

  it('attrs, pick and omit project the members; datasetId selects instances', async () => {
    expect(Object.keys(await get('?timeproperty=modifiedAt&attrs=humidity'))).toEqual(['id', 'type', 'humidity']);
    expect(Object.keys(await get('?timeproperty=modifiedAt&pick=id,power'))).toEqual(['id', 'power']);
    expect(Object.keys(await get('?timeproperty=modifiedAt&omit=type,temperature,power'))).toEqual(['id', 'humidity']);
    expect(Object.keys(await get('?timeproperty=modifiedAt&datasetId=urn:ngsi-ld:Dataset:none'))).toEqual(['id', 'type']);
    expect(Object.keys(await get('?timeproperty=modifiedAt&datasetId=@none'))).toEqual(['id', 'type', 'humidity', 'power', 'temperature']);
  });
});

describe('errors', () => {
  it.each([
    ['?timerel=after', 400],
    ['?timerel=between&timeAt=2026-04-01T00:00:00Z', 400],
    ['?timeAt=2026-04-01T00:00:00Z', 400],
    ['?lastN=0', 400],
    ['?lastN=1&firstN=1', 400],
    ['?timeproperty=seenAt', 400],
    ['?options=aggregatedValues', 400],
    ['?aggrMethods=sum', 400],
    ['?attrs=temperature&pick=id', 400],
    ['?colour=red', 400],
    ['?lang=en', 501],
    ['?format=concise', 501],
  ])('GET %s is %i', async (query, status) => {
    const res = await b.request('GET', `${TP}/${ID}${query}`);
    expect(res.status, res.text).toBe(status);
    expect(res.json.type).toMatch(/^https:\/\/uri\.etsi\.org\/ngsi-ld\/errors\//);
  });

  it('404 for an entity that never existed, 400 for an id that is not a URI, 406 for GeoJSON', async () => {
    expect((await b.request('GET', `${TP}/urn:ngsi-ld:Sensor:none`)).status).toBe(404);
    expect((await b.request('GET', `${TP}/not-a-uri`)).status).toBe(400);
    expect((await b.request('GET', `${TP}/${ID}`, { headers: { Accept: 'application/geo+json' } })).status).toBe(406);
  });
});
