// The values filter of a temporal query (NGSI-LD v1.9 §5.7.4.4): q and the geo-query are checked
// against the attribute instances in the query's window, not against the current state; the page
// and its count follow that filter.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { iso, O0, ok, TP } from './fixture.js';

const HOUR = 3_600_000;
const WINDOW = `timerel=between&timeAt=${iso(O0)}&endTimeAt=${iso(O0 + 24 * HOUR)}`;
const FAST = 'urn:ngsi-ld:Vehicle:fast';
const SLOW = 'urn:ngsi-ld:Vehicle:slow';
const NOW_FAST = 'urn:ngsi-ld:Vehicle:now-fast';
const MOVED = 'urn:ngsi-ld:Vehicle:moved';

const at = (value: unknown, ms: number, type = 'Property'): Record<string, unknown> => ({ type, value, observedAt: iso(ms) });
const point = (lon: number, lat: number) => ({ type: 'Point', coordinates: [lon, lat] });

let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
  // In the window: fast reaches 30; slow stays at 10 (its 80 is a day before the window).
  await ok(b.request('POST', TP, { body: { id: FAST, type: 'Vehicle', speed: [at(10, O0 + HOUR), at(30, O0 + 2 * HOUR)] } }), 201);
  await ok(b.request('POST', TP, { body: { id: SLOW, type: 'Vehicle', speed: [at(80, O0 - 24 * HOUR), at(10, O0 + HOUR)] } }), 201);
  // Fast now (after the window), slow within it: the current state must not decide.
  await ok(b.request('POST', TP, { body: { id: NOW_FAST, type: 'Vehicle', speed: [at(5, O0 + HOUR), at(99, O0 + 48 * HOUR)] } }), 201);
  // Near the point within the window, far from it now.
  await ok(b.request('POST', TP, {
    body: { id: MOVED, type: 'Vehicle', location: [at(point(4.83, 45.75), O0 + HOUR, 'GeoProperty'), at(point(10, 50), O0 + 48 * HOUR, 'GeoProperty')] },
  }), 201);
});
afterAll(() => b.close());

const ids = async (query: string): Promise<string[]> => {
  const res = await b.request('GET', `${TP}?${query}`);
  expect(res.status, res.text).toBe(200);
  return res.json.map((e: { id: string }) => e.id).sort();
};

describe('temporal query values filter [§5.7.4.4]', () => {
  it('q holds when an instance in the window satisfies it; instances outside the window never do', async () => {
    expect(await ids(`type=Vehicle&q=speed>25&${WINDOW}`)).toEqual([FAST]);
  });

  it('the current state does not decide: a value reached after the window does not match', async () => {
    expect(await ids(`type=Vehicle&q=speed>90&${WINDOW}`)).toEqual([]);
    expect(await ids(`type=Vehicle&q=speed<6&${WINDOW}`)).toEqual([NOW_FAST]);
  });

  it('the geo-query is checked against the GeoProperty instances in the window', async () => {
    expect(await ids(`type=Vehicle&georel=near;maxDistance==1000&geometry=Point&coordinates=[4.83,45.75]&${WINDOW}`)).toEqual([MOVED]);
  });

  it('counts and pages the entities that pass the filter', async () => {
    const res = await b.request('GET', `${TP}?type=Vehicle&q=speed>=5&limit=1&count=true&${WINDOW}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('ngsild-results-count')).toBe('3');
    expect(res.json).toHaveLength(1);
    expect(res.headers.get('link')).toContain('rel="next"');
  });
});
