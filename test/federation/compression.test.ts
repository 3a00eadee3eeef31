// Compressed uplink (federation.compression gzip): request bodies of 1 KiB or more go upstream with
// Content-Encoding gzip, smaller ones as they are; with compression off nothing is compressed; and
// an edgeld as the upstream takes the compressed batches and history whole.

import { afterEach, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { startFakeCloud, waitUntil, type FakeCloud } from '../helpers/fake-cloud.js';
import { SENSOR, drained, startEdge, statusOf, upserts } from './helpers.js';

let cloud: FakeCloud | undefined;
let edge: TestBroker | undefined;
let upstream: TestBroker | undefined;

afterEach(async () => {
  await edge?.close();
  await upstream?.close();
  await cloud?.close();
  edge = upstream = cloud = undefined;
});

const at = (s: number): string => `2026-05-01T10:00:${String(s).padStart(2, '0')}Z`;
const sensorId = (i: number): string => `urn:ngsi-ld:Sensor:c${String(i).padStart(3, '0')}`;

async function createSensors(b: TestBroker, n: number): Promise<void> {
  const batch = Array.from({ length: n }, (_, i) => SENSOR(sensorId(i), i, at(1)));
  expect((await b.request('POST', '/ngsi-ld/v1/entityOperations/create', { body: batch })).status).toBe(201);
}

describe('federation.compression', () => {
  it('gzip: a batch upsert of 1 KiB or more is sent compressed, and inflates to the batch', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url, { compression: 'gzip' });
    await createSensors(edge, 40);
    await edge.broker.listen();
    await drained(edge);
    const [upsert] = upserts(cloud);
    expect(upsert!.headers['content-encoding']).toBe('gzip');
    expect(Number(upsert!.headers['content-length'])).toBeLessThan(JSON.stringify(upsert!.body).length / 4);
    expect(upsert!.body).toHaveLength(40);
    expect(upsert!.body[0]).toEqual({ id: sensorId(0), type: 'Sensor', temperature: { type: 'Property', value: 0, observedAt: at(1) } });
  });

  it('gzip: a body under 1 KiB is sent as it is', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url, { compression: 'gzip' });
    await createSensors(edge, 1);
    await edge.broker.listen();
    await drained(edge);
    const [upsert] = upserts(cloud);
    expect(upsert!.headers['content-encoding']).toBeUndefined();
    expect(upsert!.body).toHaveLength(1);
  });

  it('off (the default): nothing is compressed', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url);
    await createSensors(edge, 40);
    await edge.broker.listen();
    await drained(edge);
    const [upsert] = upserts(cloud);
    expect(upsert!.headers['content-encoding']).toBeUndefined();
    expect(Number(upsert!.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(upsert!.body)));
  });

  it('gzip to an edgeld upstream: the batches and the history through the temporal API arrive whole', async () => {
    upstream = await startTestBroker();
    const port = await upstream.broker.listen();
    edge = await startEdge(`http://127.0.0.1:${port}`, { compression: 'gzip' });
    await createSensors(edge, 30);
    // 30 more instances of one sensor: its history (over 1 KiB) goes through the temporal API.
    for (let s = 2; s < 32; s++) {
      expect((await edge.request('PATCH', `/ngsi-ld/v1/entities/${sensorId(0)}/attrs`, {
        body: { temperature: { type: 'Property', value: 100 + s, observedAt: `2026-05-01T10:01:${String(s).padStart(2, '0')}Z` } },
      })).status).toBe(204);
    }
    await edge.broker.listen();
    await drained(edge);
    const list = await upstream.request('GET', '/ngsi-ld/v1/entities?type=Sensor&limit=100');
    expect((list.json as unknown[]).length).toBe(30);
    const latest = await upstream.request('GET', `/ngsi-ld/v1/entities/${sensorId(0)}`);
    expect(latest.json).toMatchObject({ temperature: { value: 131 } });
    await waitUntil(async () => {
      const t = await upstream!.request('GET', `/ngsi-ld/v1/temporal/entities/${sensorId(0)}?lastN=100`);
      return Array.isArray((t.json as { temperature?: unknown[] }).temperature) && (t.json as { temperature: unknown[] }).temperature.length === 31;
    }, 5_000, 'the history of the sensor upstream');
  });
});

describe('an upstream that does not take gzip bodies', () => {
  for (const refusal of [415, 400]) {
    it(`${refusal} to a compressed body: sent again as it is, and nothing compressed after that`, async () => {
      cloud = await startFakeCloud();
      cloud.answer((req) => (req.headers['content-encoding'] === 'gzip' ? { status: refusal, body: { type: 'https://uri.etsi.org/ngsi-ld/errors/InvalidRequest', title: 'Unreadable body' } } : undefined));
      edge = await startEdge(cloud.url, { compression: 'gzip' });
      await createSensors(edge, 40);
      await edge.broker.listen();
      await drained(edge);
      const [refused, plain, ...rest] = upserts(cloud);
      expect(refused!.headers['content-encoding']).toBe('gzip');
      expect(plain!.headers['content-encoding']).toBeUndefined();
      expect(plain!.body).toHaveLength(40);
      expect(rest).toHaveLength(0);
      // The next batch goes as it is at once.
      const more = Array.from({ length: 40 }, (_, i) => SENSOR(sensorId(100 + i), i, at(2)));
      expect((await edge.request('POST', '/ngsi-ld/v1/entityOperations/create', { body: more })).status).toBe(201);
      await drained(edge);
      const after = upserts(cloud).slice(2);
      expect(after.length).toBeGreaterThan(0);
      for (const r of after) expect(r.headers['content-encoding']).toBeUndefined();
      expect((await statusOf(edge)).parked).toBe(0);
    });
  }

  it('a 400 that the plain body gets too is the content\'s: compression stays on', async () => {
    cloud = await startFakeCloud();
    let refusals = 0;
    cloud.answer((req) => (req.path.includes('/entityOperations/upsert') && refusals++ < 2
      ? { status: 400, body: { type: 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData', title: 'Refused' } } : undefined));
    edge = await startEdge(cloud.url, { compression: 'gzip' });
    await createSensors(edge, 40);
    await edge.broker.listen();
    await cloud.waitFor((reqs) => reqs.filter((r) => r.path.includes('/entityOperations/upsert')).length >= 3, 5_000, 'a third upsert');
    const [first, second, third] = upserts(cloud);
    expect(first!.headers['content-encoding']).toBe('gzip');
    expect(second!.headers['content-encoding']).toBeUndefined();
    // A whole batch refused goes again entity by entity: those are under 1 KiB; then a new batch.
    expect(third!.body).toHaveLength(1);
    await drained(edge);
    const more = Array.from({ length: 40 }, (_, i) => SENSOR(sensorId(200 + i), i, at(3)));
    expect((await edge.request('POST', '/ngsi-ld/v1/entityOperations/create', { body: more })).status).toBe(201);
    await cloud.waitFor((reqs) => reqs.some((r) => Array.isArray(r.body) && r.body.length === 40 && r.body[0].id === sensorId(200)), 5_000, 'the next batch');
    const next = upserts(cloud).find((r) => Array.isArray(r.body) && r.body[0].id === sensorId(200));
    expect(next!.headers['content-encoding']).toBe('gzip');
  });
});

describe('the fake cloud reads compressed bodies', () => {
  it('inflates a gzip body before parsing it', async () => {
    cloud = await startFakeCloud();
    const body = Buffer.from(JSON.stringify([{ id: 'x' }]));
    const { gzipSync } = await import('node:zlib');
    const res = await fetch(`${cloud.url}/ngsi-ld/v1/entityOperations/upsert`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, body: gzipSync(body),
    });
    expect(res.status).toBe(204);
    expect(cloud.requests[0]!.body).toEqual([{ id: 'x' }]);
  });
});
