// Soft-deleted entities stay visible to temporal reads with their deletedAt instances (interface §3,
// behaviour §5-6), and options=audit shows the writer's subject where one was recorded (interface §2.9).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, T0, type TestBroker } from '../../helpers/broker.js';
import { DEFAULT_VOCAB, iso, O0, ok, TP } from './fixture.js';

const ID = 'urn:ngsi-ld:Room:d1';
let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
  // Written without a subject (no authentication) through HTTP...
  await ok(b.request('POST', '/ngsi-ld/v1/entities', { body: { id: ID, type: 'Room', temperature: { type: 'Property', value: 20, observedAt: iso(O0) } } }), 201);
  b.clock.set(T0 + 1000);
  // ...and by a subject through the entity service.
  await b.broker.entities.update({ tenant: '', subject: 'urn:ngsi-ld:Subject:alice', admin: true, assignees: [], groups: [] }, ID, (current, now) => {
    const next = { ...current.attrs[DEFAULT_VOCAB + 'temperature']![0]!, kind: 'Property' as const, value: 21, observedAt: O0 + 1000, modifiedAt: now };
    return { entity: { ...current, attrs: { [DEFAULT_VOCAB + 'temperature']: [next] }, modifiedAt: now },
      changes: [{ attr: DEFAULT_VOCAB + 'temperature', instance: next }], updated: [DEFAULT_VOCAB + 'temperature'], notUpdated: [] };
  });
  b.clock.set(T0 + 2000);
  await ok(b.request('DELETE', `/ngsi-ld/v1/entities/${ID}`));
});
afterAll(() => b.close());

describe('soft-deleted entities [interface §3]', () => {
  it('normal GET is 404 but the temporal representation is kept, typed from its last document', async () => {
    expect((await b.request('GET', `/ngsi-ld/v1/entities/${ID}`)).status).toBe(404);
    const e = (await b.request('GET', `${TP}/${ID}`)).json;
    expect(e.type).toBe('Room');
    expect(e.temperature.map((i: any) => i.value)).toEqual([20, 21]);
  });

  it('shows the deletion instance under deletedAt (and modifiedAt), and the entity in temporal queries', async () => {
    const d = (await b.request('GET', `${TP}/${ID}?timeproperty=deletedAt&options=sysAttrs`)).json;
    expect(d.deletedAt).toBe(iso(T0 + 2000));
    expect(d.temperature).toEqual([expect.objectContaining({ value: 'urn:ngsi-ld:null', deletedAt: iso(T0 + 2000) })]);
    const m = (await b.request('GET', `${TP}/${ID}?timeproperty=modifiedAt`)).json;
    expect(m.temperature.map((i: any) => i.value)).toEqual([20, 21, 'urn:ngsi-ld:null']);
    const q = await b.request('GET', `${TP}?type=Room&timerel=after&timeAt=${iso(O0)}`);
    expect(q.json.map((x: any) => x.id)).toEqual([ID]);
  });
});

describe('options=audit [interface §2.9]', () => {
  it('adds sub where a subject was recorded, and omits it elsewhere', async () => {
    const e = (await b.request('GET', `${TP}/${ID}?timeproperty=modifiedAt&options=audit`)).json;
    expect(e.temperature.map((i: any) => i.sub)).toEqual([undefined, { type: 'Property', value: 'urn:ngsi-ld:Subject:alice' }, undefined]);
  });

  it('has no effect on observedAt reads or the simplified representations', async () => {
    const o = (await b.request('GET', `${TP}/${ID}?options=audit`)).json;
    expect(o.temperature.every((i: any) => i.sub === undefined)).toBe(true);
    const v = (await b.request('GET', `${TP}/${ID}?timeproperty=modifiedAt&options=audit,temporalValues`)).json;
    expect(v.temperature).toEqual({ type: 'Property', values: [[20, iso(T0)], [21, iso(T0 + 1000)], ['urn:ngsi-ld:null', iso(T0 + 2000)]] });
  });
});
