// application/merge-patch+json (behaviour §1): read as application/json on the PATCH routes and on
// Append Entity Attributes (POST /entities/{id}/attrs, which ngsijs sends with it); 415 on the
// routes that create resources.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const ID = 'urn:ngsi-ld:Room:mp1';
const MERGE_PATCH = { 'Content-Type': 'application/merge-patch+json' };
let b: TestBroker;

beforeAll(async () => {
  b = await startTestBroker();
  const created = await b.request('POST', '/ngsi-ld/v1/entities', { body: { id: ID, type: 'Room', temperature: { type: 'Property', value: 20 } } });
  expect(created.status, created.text).toBe(201);
});
afterAll(() => b.close());

describe('application/merge-patch+json', () => {
  it('appends attributes on POST /entities/{id}/attrs [§6.6.3.1], as application/json', async () => {
    const res = await b.request('POST', `/ngsi-ld/v1/entities/${ID}/attrs`, { raw: JSON.stringify({ humidity: { type: 'Property', value: 40 } }), headers: MERGE_PATCH });
    expect(res.status, res.text).toBe(204);
    const got = await b.request('GET', `/ngsi-ld/v1/entities/${ID}`);
    expect(got.json).toMatchObject({ temperature: { value: 20 }, humidity: { type: 'Property', value: 40 } });
  });

  it('keeps the rules of application/json there: a body @context is 400 BadRequestData', async () => {
    const res = await b.request('POST', `/ngsi-ld/v1/entities/${ID}/attrs`, {
      raw: JSON.stringify({ '@context': 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld', pressure: { type: 'Property', value: 1 } }),
      headers: MERGE_PATCH,
    });
    expect(res.status, res.text).toBe(400);
    expect(res.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/BadRequestData');
  });

  it('updates attributes on PATCH /entities/{id}/attrs [§6.6.3.2]', async () => {
    const res = await b.request('PATCH', `/ngsi-ld/v1/entities/${ID}/attrs`, { raw: JSON.stringify({ temperature: { type: 'Property', value: 22 } }), headers: MERGE_PATCH });
    expect(res.status, res.text).toBe(204);
    expect((await b.request('GET', `/ngsi-ld/v1/entities/${ID}`)).json.temperature.value).toBe(22);
  });

  it('is 415 UnsupportedMediaType where a resource is created (POST /entities, POST /subscriptions)', async () => {
    for (const [path, body] of [
      ['/ngsi-ld/v1/entities', { id: 'urn:ngsi-ld:Room:mp2', type: 'Room' }],
      ['/ngsi-ld/v1/subscriptions', { type: 'Subscription', entities: [{ type: 'Room' }], notification: { endpoint: { uri: 'http://127.0.0.1:1/n' } } }],
    ] as const) {
      const res = await b.request('POST', path, { raw: JSON.stringify(body), headers: MERGE_PATCH });
      expect(res.status, `${path}: ${res.text}`).toBe(415);
      expect(res.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/UnsupportedMediaType');
    }
  });
});
