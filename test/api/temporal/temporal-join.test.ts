// join=inline on temporal retrieval and query (interface 4.1): each Relationship instance of the
// normalized temporal representation gains the entity it points to, up to joinLevel.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
  const city = { id: 'urn:x:paris', type: 'City', name: { type: 'Property', value: 'Paris' }, isIn: { type: 'Relationship', object: 'urn:x:france' } };
  const country = { id: 'urn:x:france', type: 'Country', name: { type: 'Property', value: 'France' } };
  for (const body of [city, country]) expect((await b.request('POST', '/ngsi-ld/v1/entities', { body })).status).toBe(201);
  const at = [{ type: 'Relationship', object: 'urn:x:paris', observedAt: '2026-01-01T00:00:00Z' },
    { type: 'Relationship', object: 'urn:x:nowhere', observedAt: '2026-01-02T00:00:00Z' }];
  expect((await b.request('POST', '/ngsi-ld/v1/temporal/entities', { body: { id: 'urn:x:truck', type: 'Truck', at } })).status).toBe(201);
});
afterAll(() => b.close());

describe('join=inline on temporal answers', () => {
  it('inlines the current linked entity into each Relationship instance, up to joinLevel', async () => {
    const res = await b.request('GET', '/ngsi-ld/v1/temporal/entities/urn:x:truck?join=inline&joinLevel=2');
    expect(res.status).toBe(200);
    const [first, second] = res.json.at;
    expect(first.entity).toMatchObject({ id: 'urn:x:paris', name: { value: 'Paris' }, isIn: { object: 'urn:x:france', entity: { id: 'urn:x:france' } } });
    expect(second).not.toHaveProperty('entity');
    const query = await b.request('GET', '/ngsi-ld/v1/temporal/entities?type=Truck&timerel=after&timeAt=2025-01-01T00:00:00Z&join=inline');
    expect(query.json[0].at[0].entity).toMatchObject({ id: 'urn:x:paris', isIn: { object: 'urn:x:france' } });
    expect(query.json[0].at[0].entity.isIn).not.toHaveProperty('entity');
  });

  it('400 BadRequestData for join=flat, for a simplified representation, or joinLevel without join', async () => {
    for (const q of ['join=flat', 'join=inline&options=temporalValues', 'joinLevel=2']) {
      const res = await b.request('GET', `/ngsi-ld/v1/temporal/entities/urn:x:truck?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.json.type, q).toBe(ERR + 'BadRequestData');
    }
  });
});
