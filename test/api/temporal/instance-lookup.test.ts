// Editing one history instance by id (NGSI-LD §5.6.15, §5.6.16): found by the instant its id carries,
// and still found when it carries none (an instant before 1970) or its row moved (observedAt edited).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const E = '/ngsi-ld/v1/temporal/entities/urn:x:s';

let b: TestBroker;
beforeEach(async () => {
  b = await startTestBroker();
  const v = [
    { type: 'Property', value: 1, observedAt: '2026-01-01T00:00:00Z' },
    { type: 'Property', value: 2, observedAt: '1960-01-01T00:00:00Z' },
  ];
  expect((await b.request('POST', '/ngsi-ld/v1/temporal/entities', { body: { id: 'urn:x:s', type: 'S', v } })).status).toBe(201);
});
afterEach(() => b.close());

async function instances(): Promise<Array<{ value: number; instanceId: string; observedAt: string }>> {
  const res = await b.request('GET', `${E}?timerel=after&timeAt=1900-01-01T00:00:00Z`);
  expect(res.status).toBe(200);
  return [res.json.v].flat();
}

describe('an instance edited by id', () => {
  it('is found whether its id carries its instant or not', async () => {
    const before = await instances();
    expect(before).toHaveLength(2);
    for (const inst of before) {
      const res = await b.request('PATCH', `${E}/attrs/v/${inst.instanceId}`, { body: { value: inst.value * 10 } });
      expect(res.status, inst.instanceId).toBe(204);
    }
    expect((await instances()).map((i) => i.value).sort()).toEqual([10, 20]);
  });

  it('is found after its observedAt moved it to another instant, and can be deleted', async () => {
    const [recent] = (await instances()).filter((i) => i.observedAt.startsWith('2026'));
    const id = recent!.instanceId;
    expect((await b.request('PATCH', `${E}/attrs/v/${id}`, { body: { value: 5, observedAt: '2026-03-01T00:00:00Z' } })).status).toBe(204);
    expect((await b.request('PATCH', `${E}/attrs/v/${id}`, { body: { value: 6 } })).status).toBe(204);
    const moved = (await instances()).find((i) => i.instanceId === id);
    expect(moved).toMatchObject({ value: 6, observedAt: '2026-03-01T00:00:00Z' });
    expect((await b.request('DELETE', `${E}/attrs/v/${id}`)).status).toBe(204);
    expect((await instances()).map((i) => i.instanceId)).not.toContain(id);
  });
});
