// aggregatedValues (NGSI-LD §4.5.19): every method checked against values computed here, for P1D and
// PT1H periods aligned on timeAt, for the whole range, and for calendar months; the kind rules
// (booleans as 0/1, strings for counts and min/max, 400 and 422 otherwise).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { DAY, HOUR, iso, ok, TP } from './fixture.js';

const ID = 'urn:ngsi-ld:Meter:a1';
const A0 = Date.parse('2026-03-10T00:00:00.000Z');
const METHODS = ['totalCount', 'distinctCount', 'sum', 'avg', 'min', 'max', 'stddev', 'sumsq'] as const;

interface Sample { t: number; v: number | boolean | string }
const power: Sample[] = [];
const flag: Sample[] = [];
const label: Sample[] = [];
for (let i = 0; i < 144; i++) {
  const t = A0 + Math.floor(i / 2) * HOUR + (i % 2 === 0 ? 10 : 40) * 60_000;
  power.push({ t, v: ((i * 37) % 23) + (i % 3) * 0.25 });
  if (i % 6 === 0) flag.push({ t, v: i % 12 === 0 });
  if (i % 10 === 0) label.push({ t, v: ['delta', 'alpha', 'echo', 'bravo'][i % 4] ?? 'x' });
}
const mixed: Sample[] = [{ t: A0 + HOUR, v: 1 }, { t: A0 + 2 * HOUR, v: 'one' }];

/** Period bounds are computed instants: whole seconds carry no fraction (NGSI-LD §4.5.19 examples). */
const bound = (ms: number): string => iso(ms).replace('.000Z', 'Z');
const body = (samples: Sample[]) => samples.map((s) => ({ type: 'Property', value: s.v, observedAt: iso(s.t) }));

let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
  await ok(b.request('POST', TP, { body: { id: ID, type: 'Meter', power: body(power), flag: body(flag), label: body(label), mixed: body(mixed) } }), 201);
});
afterAll(() => b.close());

/** Every method over a group of values, computed independently of the broker. */
function expected(values: Array<number | boolean | string>): Record<string, unknown> {
  const nums = values.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v)).filter((v): v is number => typeof v === 'number');
  const strings = values.filter((v): v is string => typeof v === 'string');
  const n = nums.length;
  const sum = nums.reduce((a, x) => a + x, 0);
  const mean = sum / n;
  const out: Record<string, unknown> = { totalCount: values.length, distinctCount: new Set(values.map(String)).size };
  if (strings.length === values.length) {
    out.min = [...strings].sort()[0];
    out.max = [...strings].sort().at(-1);
    return out;
  }
  return {
    ...out, sum, avg: mean, min: Math.min(...nums), max: Math.max(...nums),
    stddev: n < 2 ? 0 : Math.sqrt(nums.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1)), sumsq: nums.reduce((a, x) => a + x * x, 0),
  };
}

/** Samples grouped into periods of `ms` aligned on `origin` (only periods with samples). */
function periods(samples: Sample[], origin: number, ms: number | undefined, end: number): Array<{ start: number; end: number; values: Sample['v'][] }> {
  const groups = new Map<number, Sample['v'][]>();
  for (const s of samples) {
    if (s.t < origin || s.t >= end) continue;
    const k = ms === undefined ? 0 : Math.floor((s.t - origin) / ms);
    groups.set(k, [...(groups.get(k) ?? []), s.v]);
  }
  return [...groups.entries()].sort((a, c) => a[0] - c[0]).map(([k, values]) => ({
    start: ms === undefined ? origin : origin + k * ms, end: ms === undefined ? end : origin + (k + 1) * ms, values,
  }));
}

function checkAttribute(actual: any, samples: Sample[], methods: readonly string[], origin: number, ms: number | undefined, end: number): void {
  const want = periods(samples, origin, ms, end);
  expect(actual.type).toBe('Property');
  for (const m of methods) {
    const got: Array<[unknown, string, string]> = actual[m];
    expect(got.map((p) => [p[1], p[2]]), m).toEqual(want.map((p) => [bound(p.start), bound(p.end)]));
    got.forEach((p, i) => {
      const e = expected(want[i]!.values)[m];
      if (typeof e === 'number') expect(p[0], `${m} of period ${i}`).toBeCloseTo(e, 9);
      else expect(p[0], `${m} of period ${i}`).toEqual(e);
    });
  }
}

const aggregated = async (query: string): Promise<any> => {
  const res = await b.request('GET', `${TP}/${ID}?options=aggregatedValues${query}`);
  expect(res.status, res.text).toBe(200);
  return res.json;
};

describe('aggregation methods against an independent computation', () => {
  const timeAt = A0 + 30 * 60_000;
  const end = A0 + 3 * DAY;
  const range = `&timerel=between&timeAt=${iso(timeAt)}&endTimeAt=${iso(end)}`;

  for (const [label_, duration, ms] of [['P1D', '&aggrPeriodDuration=P1D', DAY], ['PT1H', '&aggrPeriodDuration=PT1H', HOUR], ['the whole range', '', undefined]] as const) {
    it(`computes every method per period for ${label_}, aligned on timeAt`, async () => {
      const e = await aggregated(`&aggrMethods=${METHODS.join(',')}${duration}${range}&attrs=power,flag`);
      checkAttribute(e.power, power, METHODS, timeAt, ms, end);
      checkAttribute(e.flag, flag, METHODS, timeAt, ms, end);
    });
  }

  it('aggregates strings with counts, min and max', async () => {
    const e = await aggregated(`&aggrMethods=totalCount,distinctCount,min,max&aggrPeriodDuration=P1D${range}&attrs=label`);
    checkAttribute(e.label, label, ['totalCount', 'distinctCount', 'min', 'max'], timeAt, DAY, end);
  });

  it('aligns periods on the oldest instance without timeAt, and spans calendar months', async () => {
    const e = await aggregated('&aggrMethods=sum&aggrPeriodDuration=P1D&attrs=power');
    checkAttribute(e.power, power, ['sum'], power[0]!.t, DAY, Infinity);
    const id = 'urn:ngsi-ld:Meter:monthly';
    const monthly: Sample[] = [0, 1, 1, 3, 4].map((m, i) => ({ t: Date.UTC(2026, m, 15, i), v: i + 1 }));
    await ok(b.request('POST', TP, { body: { id, type: 'Meter', power: body(monthly) } }), 201);
    const res = await b.request('GET', `${TP}/${id}?options=aggregatedValues&aggrMethods=sum,totalCount&aggrPeriodDuration=P1M`
      + `&timerel=between&timeAt=${iso(Date.UTC(2026, 0, 1))}&endTimeAt=${iso(Date.UTC(2026, 5, 1))}`);
    expect(res.json.power.sum).toEqual([
      [1, '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z'],
      [5, '2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z'],
      [4, '2026-04-01T00:00:00Z', '2026-05-01T00:00:00Z'],
      [5, '2026-05-01T00:00:00Z', '2026-06-01T00:00:00Z'],
    ]);
    expect(res.json.power.totalCount.map((p: unknown[]) => p[0])).toEqual([1, 2, 1, 1]);
  });
});

describe('aggregation errors', () => {
  it.each([
    ['sum', 'label', 400, 'BadRequestData'],
    ['stddev', 'label', 400, 'BadRequestData'],
    ['sum', 'mixed', 422, 'OperationNotSupported'],
    ['avg', 'mixed', 422, 'OperationNotSupported'],
    ['max', 'mixed', 422, 'OperationNotSupported'],
  ])('%s over %s is %i %s', async (method, attr, status, type) => {
    const res = await b.request('GET', `${TP}/${ID}?options=aggregatedValues&aggrMethods=${method}&attrs=${attr}`);
    expect(res.status, res.text).toBe(status);
    expect(res.json.type).toBe(`https://uri.etsi.org/ngsi-ld/errors/${type}`);
  });

  it('counts mixed values, and needs aggrMethods', async () => {
    expect((await aggregated('&aggrMethods=totalCount,distinctCount&attrs=mixed')).mixed.totalCount[0][0]).toBe(2);
    const res = await b.request('GET', `${TP}/${ID}?options=aggregatedValues`);
    expect(res.status).toBe(400);
    expect((await b.request('GET', `${TP}/${ID}?options=aggregatedValues&aggrMethods=sum&aggrPeriodDuration=P1X`)).status).toBe(400);
  });
});
