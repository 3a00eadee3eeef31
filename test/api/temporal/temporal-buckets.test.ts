// The same history stored in day buckets and in month buckets answers every temporal read the same
// way (reads across many bucket tables or within one), including aggregation and pagination.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { DAY, HOUR, iso, O0, ok, TP, writeSensor } from './fixture.js';

const ID = 'urn:ngsi-ld:Sensor:f1';
const M = 'urn:ngsi-ld:Meter:m1';

async function broker(bucket: 'day' | 'month'): Promise<TestBroker> {
  const b = await startTestBroker({ config: { history: { bucket }, temporal: { limit: 7 } } });
  await writeSensor(b, ID);
  const power = Array.from({ length: 90 }, (_, i) => ({ type: 'Property', value: (i * 17) % 11, observedAt: iso(O0 - 20 * DAY + i * 9 * HOUR) }));
  await ok(b.request('POST', TP, { body: { id: M, type: 'Meter', power } }), 201);
  return b;
}

const withoutIds = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (k, x: unknown) => (k === 'instanceId' ? undefined : x)));

let day: TestBroker;
let month: TestBroker;
beforeAll(async () => {
  [day, month] = await Promise.all([broker('day'), broker('month')]);
});
afterAll(async () => {
  await Promise.all([day.close(), month.close()]);
});

const QUERIES = [
  `${TP}/${ID}`,
  `${TP}/${ID}?timeproperty=modifiedAt&timerel=between&timeAt=${iso(Date.parse('2026-05-01T20:00:00Z'))}&endTimeAt=${iso(Date.parse('2026-05-03T20:00:00Z'))}`,
  `${TP}/${ID}?timeproperty=createdAt&lastN=4`,
  `${TP}/${ID}?timeproperty=deletedAt`,
  `${TP}/${M}?timerel=after&timeAt=${iso(O0 - 10 * DAY)}`,
  `${TP}/${M}?lastN=20&timerel=before&timeAt=${iso(O0)}`,
  `${TP}/${M}?firstN=5&offsetN=30&options=temporalValues`,
  `${TP}/${M}?options=aggregatedValues&aggrMethods=totalCount,distinctCount,sum,avg,min,max,stddev,sumsq&aggrPeriodDuration=P1D`,
  `${TP}/${M}?options=aggregatedValues&aggrMethods=sum,max&aggrPeriodDuration=P1W&timerel=between&timeAt=${iso(O0 - 21 * DAY)}&endTimeAt=${iso(O0 + 21 * DAY)}`,
  `${TP}/${M}?options=aggregatedValues&aggrMethods=avg,stddev`,
  `${TP}?type=Sensor,Meter&timerel=after&timeAt=${iso(O0 - 30 * DAY)}`,
];

describe('day and month buckets', () => {
  it('store the fixture in many day tables and few month tables', () => {
    expect(day.broker.store.history.buckets().length).toBeGreaterThan(20);
    expect(month.broker.store.history.buckets().length).toBeLessThanOrEqual(3);
  });

  it.each(QUERIES)('answer %s identically', async (path) => {
    const [a, c] = await Promise.all([day.request('GET', path), month.request('GET', path)]);
    expect(a.status, a.text).toBeLessThan(300);
    expect(a.status).toBe(c.status);
    expect(a.headers.get('content-range')).toBe(c.headers.get('content-range'));
    expect(withoutIds(a.json)).toEqual(withoutIds(c.json));
  });
});
