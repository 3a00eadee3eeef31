// Outbox bounds (rows and age) and journal gaps skip the oldest changes, counted in the status;
// the status route itself: disabled, and admin-only with authentication on.

import { afterEach, describe, expect, it } from 'vitest';
import type { TestBroker } from '../helpers/broker.js';
import { startTestBroker } from '../helpers/broker.js';
import { startAuthBroker } from '../helpers/auth.js';
import { startFakeCloud, type FakeCloud } from '../helpers/fake-cloud.js';
import { SENSOR, drained, federationConfig, startEdge, statusOf, upserts } from './helpers.js';

let cloud: FakeCloud | undefined;
let edge: TestBroker | undefined;

afterEach(async () => {
  await edge?.close();
  await cloud?.close();
  edge = undefined;
  cloud = undefined;
});

async function write(b: TestBroker, n: number): Promise<void> {
  for (let i = 0; i < n; i++) expect((await b.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR(`urn:ngsi-ld:Sensor:${i}`, i) })).status).toBe(201);
}

const sentIds = (c: FakeCloud): string[] => upserts(c).flatMap((r) => r.body.map((e: { id: string }) => e.id));

describe('federation outbox bounds', () => {
  it('skips the oldest changes beyond max-rows, counted and shown in the status', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url, { outbox: { maxRows: 3 } });
    await write(edge, 10);
    await edge.broker.listen();
    await drained(edge);
    expect(sentIds(cloud)).toEqual(['urn:ngsi-ld:Sensor:7', 'urn:ngsi-ld:Sensor:8', 'urn:ngsi-ld:Sensor:9']);
    expect(await statusOf(edge)).toMatchObject({ dropped: 7, outboxDepth: 0 });
    // The same figures in /metrics.
    const metrics = (await edge.request('GET', '/metrics')).text;
    expect(metrics).toMatch(/^edgeld_federation_dropped_total 7$/m);
    expect(metrics).toMatch(/^edgeld_federation_outbox_depth 0$/m);
    expect(metrics).toMatch(/^edgeld_federation_sent_instances_total \d+$/m);
  });

  it('skips changes older than max-age', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url, { outbox: { maxAge: 'P1D' } });
    await write(edge, 4);
    edge.clock.advance(2 * 86_400_000);
    await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:new', 1) });
    await edge.broker.listen();
    await drained(edge);
    expect(sentIds(cloud)).toEqual(['urn:ngsi-ld:Sensor:new']);
    expect((await statusOf(edge)).dropped).toBe(4);
  });

  it('counts changes pruned from the journal before the drain read them', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url);
    await write(edge, 5);
    // Pruned for age by the journal job: the newest row always stays.
    expect(edge.broker.store.journal.prune(edge.clock.now() + 1).aged).toBe(4);
    await edge.broker.listen();
    await drained(edge);
    expect(sentIds(cloud)).toEqual(['urn:ngsi-ld:Sensor:4']);
    expect((await statusOf(edge)).dropped).toBe(4);
  });

  it('keeps counters across a restart (file database)', async () => {
    const { tempDir } = await import('../helpers/broker.js');
    const dir = tempDir('edgeld-fed-restart-');
    try {
      cloud = await startFakeCloud();
      const config = { server: { port: 0, host: '127.0.0.1' }, federation: federationConfig(cloud.url) };
      edge = await startTestBroker({ config, dbPath: `${dir.path}/edgeld.db` });
      await write(edge, 2);
      await edge.broker.listen();
      await drained(edge);
      await edge.close();
      edge = await startTestBroker({ config, dbPath: `${dir.path}/edgeld.db` });
      await edge.broker.listen();
      expect((await statusOf(edge)).sent).toEqual({ entities: 2, instances: 2 });
      expect(sentIds(cloud)).toHaveLength(2);
    } finally {
      await edge?.close();
      edge = undefined;
      dir.remove();
    }
  });
});

describe('GET /ngsi-ld/v1/federation/status', () => {
  it('says federation is off when no upstream is configured', async () => {
    edge = await startTestBroker();
    const res = await edge.request('GET', '/ngsi-ld/v1/federation/status');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.json).toEqual({
      enabled: false, url: '', outboxDepth: 0, oldestPending: null, lastSuccess: null, lastError: null, parked: 0, dropped: 0,
      sent: { entities: 0, instances: 0 }, registration: null, downlink: null,
    });
    expect((await edge.request('GET', '/ngsi-ld/v1/federation/status?x=1')).status).toBe(400);
  });

  it('needs the admin role with authentication on', async () => {
    const b = await startAuthBroker();
    edge = b;
    expect((await b.as('alice', 'GET', '/ngsi-ld/v1/federation/status')).status).toBe(403);
    expect((await b.as(undefined, 'GET', '/ngsi-ld/v1/federation/status')).status).toBe(401);
    expect((await b.as('root', 'GET', '/ngsi-ld/v1/federation/status', { claims: { roles: ['service-admin'] } })).status).toBe(200);
  });
});
