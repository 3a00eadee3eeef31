// Federation drain when the cloud fails: a 207 parks only the refused entity, and 5xx replies,
// timeouts, refused connections and garbage never lose a change (retried with backoff).

import { afterEach, describe, expect, it } from 'vitest';
import type { TestBroker } from '../helpers/broker.js';
import { startFakeCloud, waitUntil, type FakeCloud } from '../helpers/fake-cloud.js';
import { SENSOR, drained, startEdge, statusOf, upserts } from './helpers.js';

let cloud: FakeCloud;
let edge: TestBroker;

afterEach(async () => {
  await edge?.close();
  await cloud?.close();
});

const ids = (c: FakeCloud): string[] => upserts(c).flatMap((r) => r.body.map((e: { id: string }) => e.id));

async function createSensors(n: number, prefix = 's'): Promise<void> {
  for (let i = 0; i < n; i++) {
    expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR(`urn:ngsi-ld:Sensor:${prefix}${i}`, i) })).status).toBe(201);
  }
}

describe('federation failures', () => {
  it('parks the entity a 207 refuses with a 4xx and acknowledges the others [§5.2.16]', async () => {
    cloud = await startFakeCloud();
    const bad = 'urn:ngsi-ld:Sensor:s1';
    cloud.answer((r) => {
      if (!r.path.includes('/entityOperations/upsert')) return undefined;
      const sent: string[] = r.body.map((e: { id: string }) => e.id);
      if (!sent.includes(bad)) return undefined;
      return {
        status: 207,
        body: { success: sent.filter((id) => id !== bad), errors: [{ entityId: bad, error: { type: 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData', title: 'Refused', status: 400 } }] },
      };
    });
    edge = await startEdge(cloud.url);
    await createSensors(3);
    await edge.broker.listen();
    await drained(edge);
    let status = await statusOf(edge);
    expect(status).toMatchObject({ parked: 1, outboxDepth: 0, lastError: null });
    expect(status.sent.entities).toBe(2);
    const [parked] = edge.broker.store.federation.parked(10);
    expect(parked).toMatchObject({ entityId: bad, changes: 1 });
    expect(JSON.parse(parked!.error)).toMatchObject({ status: 400, title: 'Refused' });
    // The other entities keep flowing.
    await createSensors(1, 'later');
    await drained(edge);
    status = await statusOf(edge);
    expect(status.sent.entities).toBe(3);
    expect(ids(cloud).at(-1)).toBe('urn:ngsi-ld:Sensor:later0');
  });

  it('sends a batch the cloud refused whole entity by entity, parking only the refused one', async () => {
    cloud = await startFakeCloud();
    cloud.answer((r) => {
      if (!r.path.includes('/entityOperations/upsert')) return undefined;
      return r.body.some((e: { id: string }) => e.id.endsWith('s2')) ? { status: 400, body: { title: 'bad batch', status: 400 } } : undefined;
    });
    edge = await startEdge(cloud.url);
    await createSensors(4);
    await edge.broker.listen();
    await drained(edge);
    expect(await statusOf(edge)).toMatchObject({ parked: 1, sent: { entities: 3, instances: 3 } });
  });

  it('retries after 5xx replies with backoff and loses nothing', async () => {
    cloud = await startFakeCloud();
    let failing = true;
    cloud.answer((r) => (failing && r.method === 'POST' ? { status: 503, body: { title: 'down for maintenance' } } : undefined));
    edge = await startEdge(cloud.url);
    await edge.broker.listen();
    await createSensors(3);
    await cloud.waitFor((rs) => rs.filter((r) => r.method === 'POST').length >= 3, 5_000, 'three failed attempts');
    const status = await statusOf(edge);
    expect(status.outboxDepth).toBe(3);
    expect(status.lastError.message).toContain('503');
    expect(status.lastError.message).toContain('down for maintenance');
    expect(typeof status.oldestPending).toBe('string');
    failing = false;
    await drained(edge);
    expect(new Set(ids(cloud))).toEqual(new Set(['urn:ngsi-ld:Sensor:s0', 'urn:ngsi-ld:Sensor:s1', 'urn:ngsi-ld:Sensor:s2']));
    expect((await statusOf(edge)).sent.entities).toBe(3);
  });

  it('retries after a timeout (an upstream that never answers)', async () => {
    cloud = await startFakeCloud();
    let hung = 0;
    cloud.answer((r) => (r.method === 'POST' && hung < 2 ? (hung++, 'hang') : undefined));
    edge = await startEdge(cloud.url, { timeout: 1_000 });
    await edge.broker.listen();
    await createSensors(1);
    await waitUntil(async () => (await statusOf(edge)).lastError !== null, 5_000, 'a timeout recorded');
    expect((await statusOf(edge)).lastError.message).toContain('timed out');
    await drained(edge, 10_000);
    expect(hung).toBe(2);
    expect(ids(cloud)).toContain('urn:ngsi-ld:Sensor:s0');
  });

  it('retries after refused connections until the cloud is up again', async () => {
    const first = await startFakeCloud();
    const { port, url } = first;
    await first.close();
    edge = await startEdge(url);
    await edge.broker.listen();
    await createSensors(2);
    await waitUntil(async () => (await statusOf(edge)).lastError !== null, 5_000, 'a connection failure recorded');
    expect((await statusOf(edge)).outboxDepth).toBe(2);
    cloud = await startFakeCloud(port);
    await drained(edge);
    expect(ids(cloud)).toEqual(['urn:ngsi-ld:Sensor:s0', 'urn:ngsi-ld:Sensor:s1']);
  });

  it('survives garbage replies (HTML, wrong shapes, huge bodies, broken connections) and retries', async () => {
    cloud = await startFakeCloud();
    const garbage = [
      { status: 207, raw: '<html>oops</html>' },
      { status: 207, body: { success: 'everything' } },
      { status: 200, body: 'x'.repeat(2_000_000) },
      'reset' as const,
      { status: 302, body: {} },
    ];
    let n = 0;
    cloud.answer((r) => (r.method === 'POST' && n < garbage.length ? garbage[n++] : undefined));
    edge = await startEdge(cloud.url);
    await edge.broker.listen();
    await createSensors(1);
    await drained(edge, 10_000);
    expect(n).toBe(garbage.length);
    expect(ids(cloud).at(-1)).toBe('urn:ngsi-ld:Sensor:s0');
    expect((await statusOf(edge)).sent.entities).toBe(1);
  });

  it('reconciles before resending: an instance the cloud already holds is sent through the temporal API, not upserted again', async () => {
    cloud = await startFakeCloud();
    let lost = true;
    cloud.answer((r) => {
      if (r.method === 'GET' && lost) return { status: 200, body: [] };
      if (r.method === 'GET') return { status: 200, body: [{ id: 'urn:ngsi-ld:Sensor:s0', type: 'Sensor', temperature: { type: 'Property', value: 0, observedAt: '2026-05-01T10:00:00.000Z' } }] };
      // The upsert lands, but its answer is lost.
      if (lost && r.path.includes('/upsert')) {
        lost = false;
        return 'reset';
      }
      return undefined;
    });
    edge = await startEdge(cloud.url);
    await edge.broker.listen();
    await createSensors(1);
    await drained(edge);
    const [firstTry, resend] = upserts(cloud);
    expect(firstTry!.body[0].temperature).toBeDefined();
    expect(resend!.body[0].temperature).toBeUndefined();
    const history = cloud.requests.filter((r) => r.path.includes('/temporal/'));
    expect(history.map((r) => r.body.temperature.length)).toEqual([1]);
  });
});
