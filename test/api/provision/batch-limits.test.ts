// Batch bodies and limits (behaviour §4): JSON array required, empty and oversized batches refused
// before any write, per-element contexts, and few transactions for a large batch (group commit).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const OPS = '/ngsi-ld/v1/entityOperations';
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
const id = (n: number): string => `urn:ngsi-ld:Room:${n}`;
const room = (n: number) => ({ id: id(n), type: 'Room', temperature: { type: 'Property', value: n } });
const liveCount = (t: TestBroker): number =>
  t.broker.store.entities.list({ tenant: '' }, { limit: 0, offset: 0, count: true }).count ?? -1;

let b: TestBroker;
beforeEach(async () => {
  b = await startTestBroker({ config: { batch: { maxSize: 1000 } } });
});
afterEach(() => b.close());

describe('batch bodies', () => {
  it('400 InvalidRequest when the body is not a JSON array', async () => {
    for (const op of ['create', 'upsert', 'update', 'merge', 'delete']) {
      const res = await b.request('POST', `${OPS}/${op}`, { body: room(1) });
      expect(res.status, op).toBe(400);
      expect(res.json.type).toBe(ERR + 'InvalidRequest');
    }
  });

  it('400 BadRequestData for an empty array', async () => {
    for (const op of ['create', 'upsert', 'update', 'merge', 'delete']) {
      const res = await b.request('POST', `${OPS}/${op}`, { body: [] });
      expect(res.status, op).toBe(400);
      expect(res.json.type).toBe(ERR + 'BadRequestData');
    }
  });

  it('400 InvalidRequest for malformed JSON and for an unknown query parameter', async () => {
    const bad = await b.request('POST', `${OPS}/create`, { raw: '[{', headers: { 'Content-Type': 'application/json' } });
    expect(bad.json.type).toBe(ERR + 'InvalidRequest');
    const unknown = await b.request('POST', `${OPS}/create?foo=1`, { body: [room(1)] });
    expect(unknown.status).toBe(400);
    expect(unknown.json.type).toBe(ERR + 'InvalidRequest');
    expect(liveCount(b)).toBe(0);
  });

  it('405 for another method on a batch path', async () => {
    expect((await b.request('GET', `${OPS}/create`)).status).toBe(405);
  });
});

describe('batch size limit (batch.max-size)', () => {
  it('400 BadRequestData above the maximum, and nothing is written', async () => {
    const small = await startTestBroker({ config: { batch: { maxSize: 3 } } });
    try {
      const res = await small.request('POST', `${OPS}/create`, { body: [1, 2, 3, 4].map(room) });
      expect(res.status).toBe(400);
      expect(res.json.type).toBe(ERR + 'BadRequestData');
      expect(liveCount(small)).toBe(0);
      expect((await small.request('POST', `${OPS}/delete`, { body: [1, 2, 3, 4].map(id) })).status).toBe(400);
      expect((await small.request('POST', `${OPS}/create`, { body: [1, 2, 3].map(room) })).status).toBe(201);
    } finally {
      await small.close();
    }
  });
});

describe('contexts of a batch', () => {
  it('application/ld+json: each element is expanded with its own @context', async () => {
    const ctxA = { temperature: 'https://a.example/temperature', Room: 'https://a.example/Room' };
    const ctxB = { temperature: 'https://b.example/temperature', Room: 'https://b.example/Room' };
    const res = await b.request('POST', `${OPS}/create`, {
      raw: JSON.stringify([{ ...room(1), '@context': [ctxA, CORE] }, { ...room(2), '@context': [ctxB, CORE] }]),
      headers: { 'Content-Type': 'application/ld+json' },
    });
    expect(res.status).toBe(201);
    const e1 = b.broker.store.entities.get({ tenant: '' }, id(1));
    const e2 = b.broker.store.entities.get({ tenant: '' }, id(2));
    expect(e1?.types).toEqual(['https://a.example/Room']);
    expect(Object.keys(e1?.attrs ?? {})).toEqual(['https://a.example/temperature']);
    expect(e2?.types).toEqual(['https://b.example/Room']);
    expect(Object.keys(e2?.attrs ?? {})).toEqual(['https://b.example/temperature']);
  });

  it('application/json: every element is expanded with the Link header context (core when none)', async () => {
    const res = await b.request('POST', `${OPS}/upsert`, { body: [room(1), room(2)] });
    expect(res.status).toBe(201);
    expect(b.broker.store.entities.get({ tenant: '' }, id(2))?.types).toEqual(['https://uri.etsi.org/ngsi-ld/default-context/Room']);
  });
});

describe('a batch of 1000 entities', () => {
  it('is committed in at most 5 transactions, with one history instance and one event per entity', async () => {
    // Hooks of one transaction run after its COMMIT and before the next one begins: the number of
    // live entities seen from the hooks takes one value per transaction.
    const seen = new Set<number>();
    let events = 0;
    b.broker.events.on(() => {
      events += 1;
      seen.add(liveCount(b));
    });
    const res = await b.request('POST', `${OPS}/create`, { body: Array.from({ length: 1000 }, (_, i) => room(i)) });
    expect(res.status).toBe(201);
    expect(res.json).toHaveLength(1000);
    expect(events).toBe(1000);
    expect(liveCount(b)).toBe(1000);
    expect(seen.size).toBeGreaterThanOrEqual(1);
    expect(seen.size).toBeLessThanOrEqual(5);
    expect(b.broker.store.history.listForEntity({ tenant: '' }, id(999))).toHaveLength(1);
  });

  it('a failing entity does not roll back the others of its transaction', async () => {
    await b.request('POST', `${OPS}/create`, { body: [room(500)] });
    const res = await b.request('POST', `${OPS}/create`, { body: Array.from({ length: 1000 }, (_, i) => room(i)) });
    expect(res.status).toBe(207);
    expect(res.json.success).toHaveLength(999);
    expect(res.json.errors).toEqual([{ entityId: id(500), error: expect.objectContaining({ status: 409 }) }]);
    expect(liveCount(b)).toBe(1000);
  });
});
