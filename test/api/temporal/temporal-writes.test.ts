// Temporal writes (NGSI-LD §6.18.3.1, §6.20-6.22, §6.19.3.2): create with instances (201, then 204),
// the current state following the newest instance, add instances (same attribute, datasetId and
// observedAt overwrite), modify one instance, delete attribute history, delete the temporal entity.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { DAY, HOUR, idsOf, iso, O0, ok, TP } from './fixture.js';

const ID = 'urn:ngsi-ld:Room:w1';
const inst = (value: unknown, at: number, extra: Record<string, unknown> = {}) => ({ type: 'Property', value, observedAt: iso(at), ...extra });

let b: TestBroker;
beforeEach(async () => {
  b = await startTestBroker();
});
afterEach(() => b.close());

const temporal = async (query = ''): Promise<any> => (await b.request('GET', `${TP}/${ID}${query}`)).json;
const values = (e: any, attr: string): unknown[] => (e[attr] ?? []).map((i: any) => i.value);

describe('POST /temporal/entities', () => {
  it('201 with Location on create, 204 when the entity exists; the current state has the newest instance', async () => {
    const res = await b.request('POST', TP, {
      body: { id: ID, type: 'Room', temperature: [inst(21, O0 + HOUR), inst(20, O0), inst(19, O0 + 2 * HOUR, { datasetId: 'urn:ngsi-ld:Dataset:out' })] },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('location')).toBe(`${TP}/${ID}`);
    const current = (await b.request('GET', `/ngsi-ld/v1/entities/${ID}`)).json;
    expect(current.temperature).toEqual([
      { type: 'Property', value: 21, observedAt: iso(O0 + HOUR) },
      { type: 'Property', value: 19, observedAt: iso(O0 + 2 * HOUR), datasetId: 'urn:ngsi-ld:Dataset:out' },
    ]);
    // A back-fill adds history but leaves the newer current value; a newer instance moves it.
    await ok(b.request('POST', TP, { body: { id: ID, type: 'Room', temperature: [inst(10, O0 - DAY)], humidity: inst(40, O0) } }));
    expect((await b.request('GET', `/ngsi-ld/v1/entities/${ID}`)).json).toMatchObject({ temperature: [{ value: 21 }, { value: 19 }], humidity: { value: 40 } });
    expect(values(await temporal(), 'temperature')).toEqual([10, 20, 21, 19]);
  });

  it('400 for an instance without observedAt, NGSI-LD Null, or a body without id', async () => {
    for (const body of [
      { id: ID, type: 'Room', temperature: [{ type: 'Property', value: 1 }] },
      { id: ID, type: 'Room', temperature: [{ type: 'Property', value: 'urn:ngsi-ld:null', observedAt: iso(O0) }] },
      { type: 'Room', temperature: [inst(1, O0)] },
    ]) {
      const res = await b.request('POST', TP, { body });
      expect(res.status, res.text).toBe(400);
    }
    expect((await b.request('GET', `/ngsi-ld/v1/entities/${ID}`)).status).toBe(404);
  });
});

describe('POST /temporal/entities/{id}/attrs', () => {
  beforeEach(async () => {
    await ok(b.request('POST', TP, { body: { id: ID, type: 'Room', temperature: [inst(1, O0), inst(2, O0 + HOUR)] } }), 201);
  });

  it('adds instances; the same attribute, datasetId and observedAt overwrites instead of duplicating', async () => {
    await ok(b.request('POST', `${TP}/${ID}/attrs`, {
      body: { temperature: [inst(3, O0 + 2 * HOUR), inst(20, O0 + HOUR), inst(5, O0 + HOUR, { datasetId: 'urn:ngsi-ld:Dataset:x' })] },
    }));
    const e = await temporal();
    expect(e.temperature.map((i: any) => [i.value, i.observedAt, i.datasetId])).toEqual([
      [1, iso(O0), undefined], [20, iso(O0 + HOUR), undefined], [5, iso(O0 + HOUR), 'urn:ngsi-ld:Dataset:x'], [3, iso(O0 + 2 * HOUR), undefined],
    ]);
    await ok(b.request('POST', `${TP}/${ID}/attrs`, { body: { temperature: inst(21, O0 + HOUR) } }));
    // Equal instants keep write order: the overwriting instance is the newest write.
    expect(values(await temporal(), 'temperature')).toEqual([1, 5, 21, 3]);
  });

  it('400 without observedAt, 404 for an unknown entity', async () => {
    expect((await b.request('POST', `${TP}/${ID}/attrs`, { body: { temperature: [{ type: 'Property', value: 3 }] } })).status).toBe(400);
    expect((await b.request('POST', `${TP}/urn:ngsi-ld:Room:none/attrs`, { body: { temperature: [inst(3, O0)] } })).status).toBe(404);
  });
});

describe('PATCH /temporal/entities/{id}/attrs/{attr}/{instanceId}', () => {
  it('modifies one instance and keeps its id; 404 for an unknown instance or attribute', async () => {
    await ok(b.request('POST', TP, { body: { id: ID, type: 'Room', temperature: [inst(1, O0), inst(2, O0 + HOUR)] } }), 201);
    const [first] = idsOf(await temporal(), 'temperature');
    await ok(b.request('PATCH', `${TP}/${ID}/attrs/temperature/${first}`, { body: { value: 100, unitCode: 'CEL' } }));
    const e = await temporal('?options=sysAttrs');
    expect(e.temperature[0]).toMatchObject({ value: 100, unitCode: 'CEL', observedAt: iso(O0), instanceId: first });
    expect((await b.request('PATCH', `${TP}/${ID}/attrs/temperature/urn:ngsi-ld:Instance:none`, { body: { value: 1 } })).status).toBe(404);
    expect((await b.request('PATCH', `${TP}/${ID}/attrs/humidity/${first}`, { body: { value: 1 } })).status).toBe(404);
    expect((await b.request('PATCH', `${TP}/urn:ngsi-ld:Room:none/attrs/temperature/${first}`, { body: { value: 1 } })).status).toBe(404);
  });
});

describe('DELETE /temporal/entities/{id}/attrs/{attr}', () => {
  beforeEach(async () => {
    await ok(b.request('POST', TP, {
      body: { id: ID, type: 'Room', temperature: [inst(1, O0), inst(2, O0, { datasetId: 'urn:ngsi-ld:Dataset:a' }), inst(3, O0, { datasetId: 'urn:ngsi-ld:Dataset:b' })], humidity: [inst(9, O0)] },
    }), 201);
  });

  it('removes the default instances, one datasetId, or all of them from history', async () => {
    await ok(b.request('DELETE', `${TP}/${ID}/attrs/temperature`));
    expect(values(await temporal(), 'temperature')).toEqual([2, 3]);
    await ok(b.request('DELETE', `${TP}/${ID}/attrs/temperature?datasetId=urn:ngsi-ld:Dataset:a`));
    expect(values(await temporal(), 'temperature')).toEqual([3]);
    await ok(b.request('DELETE', `${TP}/${ID}/attrs/humidity?deleteAll=true`));
    expect(Object.keys(await temporal())).toEqual(['id', 'type', 'temperature']);
  });

  it('404 when there is nothing to delete, 400 for datasetId with deleteAll', async () => {
    expect((await b.request('DELETE', `${TP}/${ID}/attrs/pressure`)).status).toBe(404);
    expect((await b.request('DELETE', `${TP}/${ID}/attrs/temperature?datasetId=urn:ngsi-ld:Dataset:z`)).status).toBe(404);
    expect((await b.request('DELETE', `${TP}/${ID}/attrs/temperature?datasetId=urn:x&deleteAll=true`)).status).toBe(400);
  });
});

describe('DELETE /temporal/entities/{id}', () => {
  it('removes the entity and its whole history for good: temporal and normal GET are 404', async () => {
    await ok(b.request('POST', TP, { body: { id: ID, type: 'Room', temperature: [inst(1, O0)] } }), 201);
    await ok(b.request('DELETE', `/ngsi-ld/v1/entities/${ID}`));
    await ok(b.request('POST', TP, { body: { id: ID, type: 'Room', temperature: [inst(2, O0 + DAY)] } }), 201);
    await ok(b.request('DELETE', `${TP}/${ID}`));
    expect((await b.request('GET', `${TP}/${ID}`)).status).toBe(404);
    expect((await b.request('GET', `${TP}/${ID}?timeproperty=deletedAt`)).status).toBe(404);
    expect((await b.request('GET', `/ngsi-ld/v1/entities/${ID}`)).status).toBe(404);
    expect(b.broker.store.history.listForEntity({ tenant: '' }, ID)).toEqual([]);
    expect((await b.request('DELETE', `${TP}/${ID}`)).status).toBe(404);
    // The id is free again, with no history left over.
    await ok(b.request('POST', TP, { body: { id: ID, type: 'Room', temperature: [inst(3, O0)] } }), 201);
    expect(values(await temporal(), 'temperature')).toEqual([3]);
  });

  it('announces the deletion of a live entity to change listeners', async () => {
    await ok(b.request('POST', TP, { body: { id: ID, type: 'Room', temperature: [inst(1, O0)] } }), 201);
    const kinds: string[] = [];
    b.broker.events.on((e) => kinds.push(e.kind));
    await ok(b.request('DELETE', `${TP}/${ID}`));
    expect(kinds).toEqual(['entityDeleted']);
  });
});
