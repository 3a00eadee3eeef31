// Temporal pagination (NGSI-LD §6.3.10, interface §8, behaviour §6): above the per-attribute cap the
// answer is 206 with `Content-Range: date-time <start>-<end>/<size>` (end: the last instance returned;
// size: lastN, else '*'), every attribute cut at the same instant and none dropped; following the
// ranges (forwards after end + 1 ms, or backwards before end with lastN) yields every instance once.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { expectedIds, idsOf, iso, ok, TP } from './fixture.js';

const ID = 'urn:ngsi-ld:Sensor:big';
const P0 = Date.parse('2026-01-01T00:00:00.000Z');
const MINUTE = 60_000;
const COUNT = 25_000;
const RANGE = /^date-time (\S+Z)-(\S+Z)\/(\d+|\*)$/;

function parseRange(header: string | null): { start: number; end: number; size: string } {
  const m = RANGE.exec(header ?? '');
  expect(m, `Content-Range ${header}`).not.toBeNull();
  return { start: Date.parse(m![1]!), end: Date.parse(m![2]!), size: m![3]! };
}

let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
  await ok(b.request('POST', '/ngsi-ld/v1/entities', { body: { id: ID, type: 'Sensor' } }), 201);
  for (let from = 0; from < COUNT; from += 5000) {
    const temperature = [];
    const pressure = [];
    for (let i = from; i < from + 5000; i++) {
      temperature.push({ type: 'Property', value: i, observedAt: iso(P0 + i * MINUTE) });
      if (i % 7 === 0) pressure.push({ type: 'Property', value: i, observedAt: iso(P0 + i * MINUTE + 30_000) });
    }
    await ok(b.request('POST', `${TP}/${ID}/attrs`, { body: { temperature, pressure } }));
  }
});
afterAll(() => b.close());

describe('forward pagination', () => {
  it('answers 206 with a Content-Range, and all attributes cut at the same instant', async () => {
    const res = await b.request('GET', `${TP}/${ID}`);
    expect(res.status).toBe(206);
    const range = parseRange(res.headers.get('content-range'));
    expect(range).toEqual({ start: P0, end: P0 + 9_999 * MINUTE, size: '*' });
    const temps = res.json.temperature.map((i: any) => i.value);
    expect(temps).toEqual(Array.from({ length: 10_000 }, (_, i) => i));
    const pressures: number[] = res.json.pressure.map((i: any) => Date.parse(i.observedAt));
    expect(pressures.every((t) => t < range.end)).toBe(true);
    expect(pressures).toHaveLength(Math.ceil(10_000 / 7));
  });

  it('following the ranges with timerel=after&timeAt=<end> returns every instance exactly once, in order', async () => {
    const seen = { temperature: [] as string[], pressure: [] as string[] };
    let query = '';
    for (let pages = 0; pages < 10; pages++) {
      const res = await b.request('GET', `${TP}/${ID}${query}`);
      for (const attr of ['temperature', 'pressure'] as const) seen[attr].push(...idsOf(res.json, attr));
      if (res.status === 200) break;
      expect(res.status).toBe(206);
      query = `?timerel=after&timeAt=${iso(parseRange(res.headers.get('content-range')).end + 1)}`;
    }
    expect(seen.temperature).toEqual(expectedIds(b, ID, 'temperature', 'observedAt'));
    expect(seen.pressure).toEqual(expectedIds(b, ID, 'pressure', 'observedAt'));
    expect(new Set(seen.temperature).size).toBe(COUNT);
  });

  it('cuts temporalValues the same way', async () => {
    const res = await b.request('GET', `${TP}/${ID}?options=temporalValues&timerel=between&timeAt=${iso(P0 + 100 * MINUTE)}&endTimeAt=${iso(P0 + 20_100 * MINUTE)}`);
    expect(res.status).toBe(206);
    expect(parseRange(res.headers.get('content-range'))).toEqual({ start: P0 + 100 * MINUTE, end: P0 + 10_099 * MINUTE, size: '*' });
    expect(res.json.temperature.values).toHaveLength(10_000);
    expect(res.json.temperature.values[0]).toEqual([100, iso(P0 + 100 * MINUTE)]);
  });
});

describe('backward pagination with lastN', () => {
  it('runs from the newest instance backwards; continuing before <end> returns the rest exactly once', async () => {
    const pages: string[][] = [];
    let query = '?lastN=30000';
    for (let n = 0; n < 10; n++) {
      const res = await b.request('GET', `${TP}/${ID}${query}`);
      pages.push(idsOf(res.json, 'temperature'));
      if (res.status === 200) break;
      expect(res.status).toBe(206);
      const range = parseRange(res.headers.get('content-range'));
      expect(range.start).toBeGreaterThan(range.end);
      expect(range.size).toBe('30000');
      const times: number[] = res.json.temperature.map((i: any) => Date.parse(i.observedAt));
      expect(Math.min(...times)).toBe(range.end);
      query = `?lastN=30000&timerel=before&timeAt=${iso(range.end)}`;
    }
    expect(pages.map((p) => p.length)).toEqual([10_000, 10_000, 5000]);
    expect(pages.reverse().flat()).toEqual(expectedIds(b, ID, 'temperature', 'observedAt'));
  });

  it('a lastN within the cap is answered whole (200)', async () => {
    const res = await b.request('GET', `${TP}/${ID}?lastN=10000&attrs=temperature`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-range')).toBeNull();
    expect(idsOf(res.json, 'temperature')).toEqual(expectedIds(b, ID, 'temperature', 'observedAt').slice(-10_000));
  });
});

describe('a small cap (temporal.limit)', () => {
  let s: TestBroker;
  beforeAll(async () => {
    s = await startTestBroker({ config: { temporal: { limit: 3 } } });
    const at = (m: number) => iso(P0 + m * MINUTE);
    const inst = (v: number, m: number, datasetId?: string) => ({ type: 'Property', value: v, observedAt: at(m), ...(datasetId ? { datasetId } : {}) });
    // Five instances share minute 2 (different datasets): more than the cap at one instant.
    await ok(s.request('POST', TP, {
      body: {
        id: 'urn:ngsi-ld:Sensor:s1', type: 'Sensor',
        a: [inst(1, 1), inst(2, 2), ...[1, 2, 3, 4].map((d) => inst(20 + d, 2, `urn:ngsi-ld:Dataset:${d}`)), inst(3, 3), inst(4, 4)],
        b: [inst(1, 0), inst(2, 5)],
      },
    }), 201);
    await ok(s.request('POST', TP, { body: { id: 'urn:ngsi-ld:Sensor:s2', type: 'Sensor', a: [0, 1, 2, 3, 4, 5].map((m) => inst(m, m)) } }), 201);
  });
  afterAll(() => s.close());

  it('keeps every instance of an instant that holds more than the cap, so each page moves on', async () => {
    const pages: number[][] = [];
    let query = '';
    for (let n = 0; n < 5; n++) {
      const res = await s.request('GET', `${TP}/urn:ngsi-ld:Sensor:s1?attrs=a${query}`);
      pages.push(res.json.a.map((i: any) => i.value));
      if (res.status === 200) break;
      query = `&timerel=after&timeAt=${iso(parseRange(res.headers.get('content-range')).end + 1)}`;
    }
    // The cut falls on minute 2 (first page: minute 1 only); minute 2 alone holds five instances.
    expect(pages).toEqual([[1], [2, 21, 22, 23, 24], [3, 4]]);
  });

  it('cuts every entity of a query at the same instant and pages through all of them', async () => {
    const values = (e: any): number[] => (e.a ?? []).map((i: any) => i.value);
    const r1 = await s.request('GET', `${TP}?type=Sensor&attrs=a&timerel=after&timeAt=${iso(P0)}`);
    expect(r1.status).toBe(206);
    const { end } = parseRange(r1.headers.get('content-range'));
    expect(end).toBe(P0 + 1 * MINUTE);
    expect(r1.json.map(values)).toEqual([[1], [0, 1]]);
    const r2 = await s.request('GET', `${TP}?type=Sensor&attrs=a&timerel=after&timeAt=${iso(end + 1)}`);
    expect(r2.json.map(values)).toEqual([[2, 21, 22, 23, 24], [2]]);
  });

  it('keeps an attribute whose instances all lie beyond the cut, empty (never dropped)', async () => {
    // b has instances at minutes 0 and 5; the cut of a falls at minute 2: b keeps minute 0 only.
    const later = await s.request('GET', `${TP}/urn:ngsi-ld:Sensor:s1?timerel=after&timeAt=${iso(P0 + MINUTE)}`);
    expect(later.status).toBe(206);
    expect(later.json.a.map((i: any) => i.value)).toEqual([1]);
    expect(later.json.b).toEqual([]);
    const simplified = await s.request('GET', `${TP}/urn:ngsi-ld:Sensor:s1?timerel=after&timeAt=${iso(P0 + MINUTE)}&format=temporalValues`);
    expect(simplified.json.b).toEqual({ type: 'Property', values: [] });
  });
});
