// Federation drain against a fake cloud: what is sent (coalesced upserts, history through the
// temporal API, deletions), in which batches, with which headers.

import { afterEach, describe, expect, it } from 'vitest';
import type { TestBroker } from '../helpers/broker.js';
import { startFakeCloud, type FakeCloud } from '../helpers/fake-cloud.js';
import { SENSOR, drained, startEdge, statusOf, temporals, upserts } from './helpers.js';

let cloud: FakeCloud;
let edge: TestBroker;

afterEach(async () => {
  await edge?.close();
  await cloud?.close();
});

const at = (s: number): string => `2026-05-01T10:00:${String(s).padStart(2, '0')}Z`;

describe('federation drain', () => {
  it('sends the latest state once per entity by batch upsert, and older instances through the temporal API', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url);
    expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:a', 1, at(1)) })).status).toBe(201);
    expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:b', 10, at(1)) })).status).toBe(201);
    for (const s of [2, 3]) {
      expect((await edge.request('PATCH', '/ngsi-ld/v1/entities/urn:ngsi-ld:Sensor:a/attrs', {
        body: { temperature: { type: 'Property', value: s, observedAt: at(s) } },
      })).status).toBe(204);
    }
    await edge.broker.listen();
    await drained(edge);

    const [upsert, ...more] = upserts(cloud);
    expect(more).toHaveLength(0);
    expect(upsert!.path).toBe('/ngsi-ld/v1/entityOperations/upsert?options=update');
    expect(upsert!.headers['link']).toContain('ngsi-ld-core-context');
    expect(upsert!.headers['content-type']).toBe('application/json');
    expect(upsert!.body).toEqual([
      { id: 'urn:ngsi-ld:Sensor:a', type: 'Sensor', temperature: { type: 'Property', value: 3, observedAt: at(3) } },
      { id: 'urn:ngsi-ld:Sensor:b', type: 'Sensor', temperature: { type: 'Property', value: 10, observedAt: at(1) } },
    ].map((e) => expect.objectContaining(e)));
    const [history, ...others] = temporals(cloud);
    expect(others).toHaveLength(0);
    expect(history!.path).toBe('/ngsi-ld/v1/temporal/entities/urn%3Angsi-ld%3ASensor%3Aa/attrs');
    expect(history!.body.temperature.map((i: { value: number }) => i.value)).toEqual([1, 2]);
    expect(history!.body.temperature.every((i: { observedAt?: string }) => typeof i.observedAt === 'string')).toBe(true);
    const status = await statusOf(edge);
    expect(status).toMatchObject({ enabled: true, url: cloud.url, outboxDepth: 0, oldestPending: null, lastError: null, parked: 0, dropped: 0 });
    expect(status.sent).toEqual({ entities: 2, instances: 4 });
    expect(typeof status.lastSuccess).toBe('string');
  });

  it('sends the history of sixteen entities at a time, each entity\'s own requests in order', async () => {
    cloud = await startFakeCloud();
    // Every history request hangs: what arrives is what was sent without waiting for an answer.
    cloud.answer((req) => (req.method === 'POST' && req.path.includes('/temporal/entities/') ? 'hang' : undefined));
    edge = await startEdge(cloud.url, { timeout: 30_000 });
    for (let n = 0; n < 20; n++) {
      const id = `urn:ngsi-ld:Sensor:h${n}`;
      expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR(id, 1, at(1)) })).status).toBe(201);
      expect((await edge.request('PATCH', `/ngsi-ld/v1/entities/${id}/attrs`, { body: { temperature: { type: 'Property', value: 2, observedAt: at(2) } } })).status).toBe(204);
    }
    await edge.broker.listen();
    await cloud.waitFor((reqs) => temporals({ ...cloud, requests: reqs }).length >= 16, 5_000, 'sixteen history requests');
    const paths = temporals(cloud).map((r) => r.path);
    expect(paths).toHaveLength(16);
    expect(new Set(paths).size).toBe(16);
  });

  it('gives an instance without observedAt its edge createdAt as observedAt', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url);
    await edge.broker.listen();
    expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:n', 1) })).status).toBe(201);
    await drained(edge);
    expect(upserts(cloud)[0]!.body[0].temperature.observedAt).toBe('2026-05-01T10:00:00.000Z');
  });

  it('sends at most batch-size entities per upsert, in journal order', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url, { batchSize: 2 });
    for (let i = 0; i < 5; i++) {
      expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR(`urn:ngsi-ld:Sensor:${i}`, i, at(i)) })).status).toBe(201);
    }
    await edge.broker.listen();
    await drained(edge);
    expect(upserts(cloud).map((r) => r.body.map((e: { id: string }) => e.id.slice(-1)))).toEqual([['0', '1'], ['2', '3'], ['4']]);
  });

  it('reads past batch-size + 1 changes when they are of entities already in the batch', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url, { batchSize: 2 });
    const patch = (id: string, s: number) => edge.request('PATCH', `/ngsi-ld/v1/entities/${id}/attrs`, {
      body: { temperature: { type: 'Property', value: s, observedAt: at(s) } },
    });
    expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:a', 0, at(0)) })).status).toBe(201);
    for (let s = 1; s < 40; s++) expect((await patch('urn:ngsi-ld:Sensor:a', s)).status).toBe(204);
    expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:b', 0, at(0)) })).status).toBe(201);
    for (let s = 40; s < 45; s++) expect((await patch('urn:ngsi-ld:Sensor:a', s)).status).toBe(204);
    expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:c', 0, at(0)) })).status).toBe(201);
    await edge.broker.listen();
    await drained(edge);
    expect(upserts(cloud).map((r) => r.body.map((e: { id: string; temperature: { value: number } }) => [e.id.slice(-1), e.temperature.value]))).toEqual([
      [['a', 44], ['b', 0]], [['c', 0]],
    ]);
    expect(temporals(cloud).flatMap((r) => r.body.temperature.map((i: { value: number }) => i.value))).toEqual(Array.from({ length: 44 }, (_, s) => s));
    expect((await statusOf(edge)).sent).toEqual({ entities: 3, instances: 47 });
  });

  it('forwards attribute and entity deletions after the writes before them; a 404 upstream counts as done', async () => {
    cloud = await startFakeCloud();
    cloud.answer((r) => (r.method === 'DELETE' ? { status: 404, body: { type: 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound', title: 'gone' } } : undefined));
    edge = await startEdge(cloud.url);
    await edge.broker.listen();
    const id = 'urn:ngsi-ld:Sensor:d';
    await edge.request('POST', '/ngsi-ld/v1/entities', { body: { ...SENSOR(id, 1, at(1)), humidity: { type: 'Property', value: 50 } } });
    expect((await edge.request('DELETE', `/ngsi-ld/v1/entities/${id}/attrs/humidity`)).status).toBe(204);
    expect((await edge.request('DELETE', `/ngsi-ld/v1/entities/${id}`)).status).toBe(204);
    await drained(edge);
    const sent = cloud.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${decodeURIComponent(r.path)}`);
    expect(sent.slice(-2)).toEqual([`DELETE /ngsi-ld/v1/entities/${id}/attrs/humidity`, `DELETE /ngsi-ld/v1/entities/${id}`]);
    expect(sent[0]).toBe('POST /ngsi-ld/v1/entityOperations/upsert?options=update');
    expect((await statusOf(edge)).lastError).toBeNull();
  });

  it('forwards only the configured tenant and types', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url, { tenant: 'site1', upstream: { types: 'Sensor', tenant: 'cloudy' } });
    const site = { 'NGSILD-Tenant': 'site1' };
    await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:default', 1) });
    await edge.request('POST', '/ngsi-ld/v1/entities', { body: { id: 'urn:ngsi-ld:Room:1', type: 'Room' }, headers: site });
    await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:site', 1), headers: site });
    await edge.broker.listen();
    await drained(edge);
    const ids = upserts(cloud).flatMap((r) => r.body.map((e: { id: string }) => e.id));
    expect(ids).toEqual(['urn:ngsi-ld:Sensor:site']);
    expect(upserts(cloud)[0]!.headers['ngsild-tenant']).toBe('cloudy');
  });

  it('forwards a temporal back-fill as history only', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url);
    const id = 'urn:ngsi-ld:Sensor:h';
    await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR(id, 5, at(5)) });
    await edge.broker.listen();
    await drained(edge);
    expect((await edge.request('POST', `/ngsi-ld/v1/temporal/entities/${id}/attrs`, {
      body: { temperature: [{ type: 'Property', value: -1, observedAt: '2020-01-01T00:00:00Z' }] },
    })).status).toBe(204);
    await drained(edge);
    const last = temporals(cloud).at(-1)!;
    expect(last.body.temperature).toEqual([expect.objectContaining({ value: -1, observedAt: '2020-01-01T00:00:00Z' })]);
    // The back-fill never becomes the current value upstream.
    expect(upserts(cloud).at(-1)!.body[0].temperature?.value ?? 5).toBe(5);
  });
});
