// Temporal representation details (NGSI-LD §4.5.7, §4.5.9, §4.5.19): observedAt as written, computed
// period bounds without a zero fraction, the wrapped simplified values of LanguageProperty,
// VocabProperty and JsonProperty, and deletion instances shown with the kind of the deleted attribute.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { ok, TP } from './fixture.js';

const ID = 'urn:ngsi-ld:Vehicle:r1';
let b: TestBroker;
beforeEach(async () => {
  b = await startTestBroker();
});
afterEach(() => b.close());

describe('observedAt', () => {
  it('is answered as written, without milliseconds or with an offset, in both APIs', async () => {
    await ok(b.request('POST', TP, {
      body: {
        id: ID, type: 'Vehicle',
        speed: [
          { type: 'Property', value: 120, observedAt: '2020-08-01T12:03:00Z' },
          { type: 'Property', value: 80, observedAt: '2020-08-01T14:05:00+02:00' },
          { type: 'Property', value: 90, observedAt: '2020-08-01T12:07:00.000Z' },
        ],
      },
    }), 201);
    const normalized = await b.request('GET', `${TP}/${ID}`);
    expect(normalized.json.speed.map((i: any) => i.observedAt)).toEqual(['2020-08-01T12:03:00Z', '2020-08-01T14:05:00+02:00', '2020-08-01T12:07:00.000Z']);
    const simplified = await b.request('GET', `${TP}/${ID}?format=temporalValues`);
    expect(simplified.json.speed.values).toEqual([[120, '2020-08-01T12:03:00Z'], [80, '2020-08-01T14:05:00+02:00'], [90, '2020-08-01T12:07:00.000Z']]);
    const entity = await b.request('GET', `/ngsi-ld/v1/entities/${ID}`);
    expect(entity.json.speed.observedAt).toBe('2020-08-01T12:07:00.000Z');
    await ok(b.request('PATCH', `/ngsi-ld/v1/entities/${ID}/attrs/speed`, { body: { value: 95, observedAt: '2020-08-01T12:09:00Z' } }));
    expect((await b.request('GET', `/ngsi-ld/v1/entities/${ID}`)).json.speed.observedAt).toBe('2020-08-01T12:09:00Z');
    // A partial update without observedAt keeps the one written before, as written.
    await ok(b.request('PATCH', `/ngsi-ld/v1/entities/${ID}/attrs/speed`, { body: { value: 96 } }));
    expect((await b.request('GET', `/ngsi-ld/v1/entities/${ID}`)).json.speed.observedAt).toBe('2020-08-01T12:09:00Z');
  });

  it('period bounds of aggregations are whole seconds without a fraction', async () => {
    await ok(b.request('POST', TP, {
      body: { id: ID, type: 'Vehicle', speed: [{ type: 'Property', value: 1, observedAt: '2020-08-01T12:03:00Z' }] },
    }), 201);
    const res = await b.request('GET', `${TP}/${ID}?format=aggregatedValues&aggrMethods=max&aggrPeriodDuration=PT1H`
      + '&timerel=between&timeAt=2020-08-01T12:03:00Z&endTimeAt=2020-08-01T13:03:00Z');
    expect(res.json.speed.max).toEqual([[1, '2020-08-01T12:03:00Z', '2020-08-01T13:03:00Z']]);
  });
});

describe('simplified values and deletions by kind', () => {
  it('wraps VocabProperty, LanguageProperty and JsonProperty values in their member [§4.5.9]', async () => {
    const at = '2020-08-01T12:03:00Z';
    await ok(b.request('POST', TP, {
      body: {
        id: ID, type: 'Vehicle',
        category: [{ type: 'VocabProperty', vocab: 'monument', observedAt: at }],
        street: [{ type: 'LanguageProperty', languageMap: { fr: 'Grand Place' }, observedAt: at }],
        info: [{ type: 'JsonProperty', json: { value: 120 }, observedAt: at }],
      },
    }), 201);
    const res = await b.request('GET', `${TP}/${ID}?format=temporalValues`);
    expect(res.json.category).toEqual({ type: 'VocabProperty', vocabs: [[{ vocab: 'monument' }, at]] });
    expect(res.json.street).toEqual({ type: 'LanguageProperty', languageMaps: [[{ languageMap: { fr: 'Grand Place' } }, at]] });
    expect(res.json.info).toEqual({ type: 'JsonProperty', jsons: [[{ json: { value: 120 } }, at]] });
  });

  it('shows the deletion of a Relationship or a LanguageProperty with its own kind and null payload', async () => {
    await ok(b.request('POST', '/ngsi-ld/v1/entities', {
      body: {
        id: ID, type: 'Vehicle',
        isParkedIn: { type: 'Relationship', object: 'urn:ngsi-ld:Parking:1' },
        name: { type: 'LanguageProperty', languageMap: { en: 'Car' } },
      },
    }), 201);
    await ok(b.request('DELETE', `/ngsi-ld/v1/entities/${ID}/attrs/isParkedIn`));
    await ok(b.request('DELETE', `/ngsi-ld/v1/entities/${ID}/attrs/name`));
    const res = await b.request('GET', `${TP}/${ID}?timeproperty=deletedAt`);
    expect(res.json.isParkedIn).toEqual([expect.objectContaining({ type: 'Relationship', object: 'urn:ngsi-ld:null' })]);
    expect(res.json.name).toEqual([expect.objectContaining({ type: 'LanguageProperty', languageMap: { '@none': 'urn:ngsi-ld:null' } })]);
    const simplified = await b.request('GET', `${TP}/${ID}?timeproperty=deletedAt&format=temporalValues`);
    expect(simplified.json.isParkedIn.type).toBe('Relationship');
    expect(simplified.json.isParkedIn.objects[0][0]).toBe('urn:ngsi-ld:null');
    expect(simplified.json.name.languageMaps[0][0]).toEqual({ languageMap: { '@none': 'urn:ngsi-ld:null' } });
  });
});

describe('DELETE /temporal/entities/{id}/attrs/{attr}/{instanceId} [§6.22.3.2]', () => {
  const write = () => ok(b.request('POST', TP, {
    body: {
      id: ID, type: 'Vehicle',
      speed: [{ type: 'Property', value: 1, observedAt: '2020-08-01T12:00:00Z' }, { type: 'Property', value: 2, observedAt: '2020-08-01T13:00:00Z' }],
    },
  }), 201);

  it('removes that one instance (204) and leaves the others', async () => {
    await write();
    const before = (await b.request('GET', `${TP}/${ID}`)).json.speed;
    await ok(b.request('DELETE', `${TP}/${ID}/attrs/speed/${before[0].instanceId}`));
    const after = (await b.request('GET', `${TP}/${ID}`)).json.speed;
    expect(after.map((i: any) => i.instanceId)).toEqual([before[1].instanceId]);
    expect((await b.request('DELETE', `${TP}/${ID}/attrs/speed/${before[0].instanceId}`)).status).toBe(404);
  });

  it('answers 404 for an unknown entity or attribute, 400 for an invalid instance id or attribute name', async () => {
    await write();
    const iid = (await b.request('GET', `${TP}/${ID}`)).json.speed[0].instanceId;
    expect((await b.request('DELETE', `${TP}/urn:ngsi-ld:Vehicle:none/attrs/speed/${iid}`)).status).toBe(404);
    expect((await b.request('DELETE', `${TP}/${ID}/attrs/fuel/${iid}`)).status).toBe(404);
    expect((await b.request('DELETE', `${TP}/${ID}/attrs/speed/not-a-uri`)).status).toBe(400);
    expect((await b.request('DELETE', `${TP}/${ID}/attrs/sp%3Ceed/${iid}`)).status).toBe(400);
  });
});

describe('retrieve: attrs, pick and omit that leave nothing [§5.7.3]', () => {
  beforeEach(() => ok(b.request('POST', TP, {
    body: { id: ID, type: 'Vehicle', speed: [{ type: 'Property', value: 1, observedAt: '2020-08-01T12:00:00Z' }] },
  }), 201));

  it('answers 404 when no requested attribute has a history, or pick/omit leave no member', async () => {
    expect((await b.request('GET', `${TP}/${ID}?attrs=fuel`)).status).toBe(404);
    expect((await b.request('GET', `${TP}/${ID}?pick=unknown`)).status).toBe(404);
    expect((await b.request('GET', `${TP}/${ID}?omit=id,type,speed`)).status).toBe(404);
    expect((await b.request('GET', `${TP}/${ID}?pick=id`)).json).toEqual({ id: ID });
  });
});

describe('format and options [§6.3.12]', () => {
  beforeEach(() => ok(b.request('POST', TP, {
    body: { id: ID, type: 'Vehicle', speed: [{ type: 'Property', value: 1, observedAt: '2020-08-01T12:00:00Z' }] },
  }), 201));

  it('lets format win over options=aggregatedValues, its aggrMethods unused', async () => {
    const res = await b.request('GET', `${TP}/${ID}?format=temporalValues&options=aggregatedValues&aggrMethods=sum`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.speed).toEqual({ type: 'Property', values: [[1, '2020-08-01T12:00:00Z']] });
  });

  it('answers 400 InvalidRequest to an unknown format or option', async () => {
    for (const q of ['format=invalidFormat', 'options=invalidOptions', 'options=temporalValues,invalidOptions']) {
      const res = await b.request('GET', `${TP}/${ID}?${q}`);
      expect(res.status).toBe(400);
      expect(res.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/InvalidRequest');
    }
  });
});
