// The NGSILD-Warning hint of a temporal read by observedAt (the default timeproperty) that finds no
// instance while the entities' instances were written without observedAt in the range: they are
// listed with timeproperty=modifiedAt.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, T0, type TestBroker } from '../../helpers/broker.js';
import { HOUR, iso, ok, TP } from './fixture.js';

const HINT = '199 edgeld "no instance has observedAt in this range; instances without observedAt are listed with timeproperty=modifiedAt"';
const PLAIN = 'urn:ngsi-ld:Meter:plain';
const OBSERVED = 'urn:ngsi-ld:Gauge:observed';

let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
  b.clock.set(T0);
  await ok(b.request('POST', '/ngsi-ld/v1/entities', { body: { id: PLAIN, type: 'Meter', power: { type: 'Property', value: 1 } } }), 201);
  await ok(b.request('POST', '/ngsi-ld/v1/entities', {
    body: { id: OBSERVED, type: 'Gauge', level: { type: 'Property', value: 1, observedAt: iso(T0) } },
  }), 201);
  for (let k = 1; k <= 3; k++) {
    b.clock.set(T0 + k * HOUR);
    await ok(b.request('PATCH', `/ngsi-ld/v1/entities/${PLAIN}/attrs`, { body: { power: { type: 'Property', value: 1 + k } } }));
    await ok(b.request('PATCH', `/ngsi-ld/v1/entities/${OBSERVED}/attrs`, {
      body: { level: { type: 'Property', value: 1 + k, observedAt: iso(T0 + k * HOUR) } },
    }));
  }
});
afterAll(() => b.close());

const WARNING = 'NGSILD-Warning';
const after = `timerel=after&timeAt=${iso(T0 - HOUR)}`;

describe('temporal retrieve of an entity written without observedAt', () => {
  it('answers no instance by observedAt (the default) and hints at timeproperty=modifiedAt', async () => {
    for (const query of ['', `?${after}`, `?timeproperty=observedAt&${after}`]) {
      const res = await b.request('GET', `${TP}/${PLAIN}${query}`);
      expect(res.status, res.text).toBe(200);
      expect(res.json.id).toBe(PLAIN);
      expect(res.json.power, query).toBeUndefined();
      expect(res.headers.get(WARNING), query).toBe(HINT);
    }
  });

  it('lists the instances with timeproperty=modifiedAt, without the hint', async () => {
    const res = await b.request('GET', `${TP}/${PLAIN}?timeproperty=modifiedAt&${after}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.power.map((i: { value: number }) => i.value)).toEqual([1, 2, 3, 4]);
    expect(res.headers.get(WARNING)).toBeNull();
  });

  it('gives no hint when no instance was modified in the range either', async () => {
    const res = await b.request('GET', `${TP}/${PLAIN}?timerel=before&timeAt=${iso(T0)}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.power).toBeUndefined();
    expect(res.headers.get(WARNING)).toBeNull();
  });
});

describe('temporal retrieve of an entity written with observedAt', () => {
  it('lists its instances by observedAt, without the hint', async () => {
    const res = await b.request('GET', `${TP}/${OBSERVED}?${after}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.level.map((i: { value: number }) => i.value)).toEqual([1, 2, 3, 4]);
    expect(res.headers.get(WARNING)).toBeNull();
  });
});

describe('temporal query', () => {
  it('answers no entity by observedAt and hints at modifiedAt when the selected entities were written without observedAt', async () => {
    const res = await b.request('GET', `${TP}?type=Meter&${after}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual([]);
    expect(res.headers.get(WARNING)).toBe(HINT);
  });

  it('lists them with timeproperty=modifiedAt, without the hint', async () => {
    const res = await b.request('GET', `${TP}?type=Meter&timeproperty=modifiedAt&${after}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.map((e: { id: string }) => e.id)).toEqual([PLAIN]);
    expect(res.headers.get(WARNING)).toBeNull();
  });

  it('gives no hint when the answer holds instances', async () => {
    const res = await b.request('GET', `${TP}?type=Meter,Gauge&${after}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.map((e: { id: string }) => e.id)).toEqual([OBSERVED]);
    expect(res.headers.get(WARNING)).toBeNull();
  });

  it('hints through POST /temporal/entityOperations/query too', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/temporal/entityOperations/query', {
      body: { type: 'Query', entities: [{ type: 'Meter' }], temporalQ: { timerel: 'after', timeAt: iso(T0 - HOUR) } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual([]);
    expect(res.headers.get(WARNING)).toBe(HINT);
  });
});
