// Forwarding changes as announced after their commit (without reading them back from the journal),
// and the linger that lets a batch gather the changes of a busy edge: what goes upstream is the same.

import { afterEach, describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../../src/events.js';
import { temporalBodies, upsertEntity } from '../../src/federation/bodies.js';
import { planBatch } from '../../src/federation/plan.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { startFakeCloud, waitUntil, type FakeCloud } from '../helpers/fake-cloud.js';
import { SENSOR, drained, startEdge, statusOf, temporals, upserts } from './helpers.js';

let cloud: FakeCloud | undefined;
let edge: TestBroker | undefined;

afterEach(async () => {
  await edge?.close();
  await cloud?.close();
  edge = undefined;
  cloud = undefined;
});

const at = (s: number): string => `2026-05-01T10:00:${String(s).padStart(2, '0')}Z`;

/** What a batch planned from `changes` sends, entity by entity: upsert, history, deletions. */
async function wireOf(broker: TestBroker, changes: Iterable<ChangeEvent>): Promise<unknown[]> {
  const mapper = await broker.broker.contexts.resolve(undefined);
  const plan = planBatch(changes, 0, {
    tenant: '', types: new Set(), maxEntities: 1_000, latest: (tenant, id) => broker.broker.store.archive.latest({ tenant }, id),
  });
  return plan.entities.map((p) => ({
    id: p.id, upsert: p.upsert ? upsertEntity(p, mapper) : undefined, history: temporalBodies(p, p.history, mapper),
    deletions: p.deletions, deleteEntity: p.deleteEntity,
  }));
}

describe('federation from announced changes', () => {
  it('passes over registration changes: no entity of theirs goes upstream', async () => {
    edge = await startTestBroker();
    const announced: ChangeEvent[] = [];
    edge.broker.events.on((c) => announced.push(c));
    const reg = { id: 'urn:ngsi-ld:ContextSourceRegistration:f1', type: 'ContextSourceRegistration', endpoint: 'http://source.example:1026', information: [{ entities: [{ type: 'Sensor' }] }] };
    expect((await edge.request('POST', '/ngsi-ld/v1/csourceRegistrations', { body: reg })).status).toBe(201);
    expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:r', 1, at(1)) })).status).toBe(201);
    expect(announced.map((c) => c.kind)).toEqual(['registrationChanged', 'entityCreated']);
    const plan = planBatch(announced, 0, { tenant: '', types: new Set(), maxEntities: 1_000, latest: () => undefined });
    expect(plan.entities.map((p) => p.id)).toEqual(['urn:ngsi-ld:Sensor:r']);
    expect(plan.lastSeq).toBe(announced[1]!.seq);
  });

  it('passes over the changes of the skipped subject (the downlink\'s loop guard) and keeps the later ones of the same entity [edge §7]', async () => {
    edge = await startTestBroker();
    const announced: ChangeEvent[] = [];
    edge.broker.events.on((c) => announced.push(c));
    const id = 'urn:ngsi-ld:Sensor:d';
    expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR(id, 1, at(1)) })).status).toBe(201);
    expect((await edge.request('POST', `/ngsi-ld/v1/entities/${id}/attrs`, { body: { open: { type: 'Property', value: true } } })).status).toBe(204);
    expect((await edge.request('POST', `/ngsi-ld/v1/entities/${id}/attrs`, { body: { open_status: { type: 'Property', value: 'PENDING' } } })).status).toBe(204);
    // The second change as the downlink writes it: under its subject.
    const changes = announced.map((c, k) => (k === 1 ? { ...c, subject: 'urn:edgeld:federation:downlink' } : c));
    const opts = { tenant: '', types: new Set<string>(), maxEntities: 1_000, latest: () => undefined };
    const attrsOf = (plan: ReturnType<typeof planBatch>): string[] => [...plan.entities[0]!.latest.values()].map((i) => i.attr.replace(/^.*\//, '')).sort();
    const guarded = planBatch(changes, 0, { ...opts, skipSubject: 'urn:edgeld:federation:downlink' });
    expect(attrsOf(guarded)).toEqual(['open_status', 'temperature']);
    expect(guarded.lastSeq).toBe(announced[2]!.seq);
    expect(attrsOf(planBatch(changes, 0, opts))).toEqual(['open', 'open_status', 'temperature']);
  });

  it('plans the same requests from changes as announced as from the journal', async () => {
    edge = await startTestBroker();
    const announced: ChangeEvent[] = [];
    edge.broker.events.on((c) => announced.push(c));
    const req = async (method: string, path: string, body?: unknown): Promise<void> => {
      const res = await edge!.request(method, `/ngsi-ld/v1${path}`, body === undefined ? {} : { body });
      expect(res.status, `${method} ${path}`).toBeLessThan(300);
    };
    const a = 'urn:ngsi-ld:Sensor:a';
    await req('POST', '/entities', { ...SENSOR(a, 1, at(1)), humidity: { type: 'Property', value: 40 }, scope: '/site/1' });
    await req('POST', '/entities', SENSOR('urn:ngsi-ld:Sensor:b', 7, at(1)));
    await req('PATCH', `/entities/${a}/attrs`, { temperature: { type: 'Property', value: 2, observedAt: at(2) } });
    await req('POST', '/entityOperations/upsert', [SENSOR(a, 3, at(3)), SENSOR('urn:ngsi-ld:Sensor:c', 0, at(3))]);
    await req('POST', `/temporal/entities/${a}/attrs`, { temperature: [{ type: 'Property', value: -1, observedAt: '2020-01-01T00:00:00Z' }] });
    await req('PUT', `/entities/${a}`, { type: 'Sensor', temperature: { type: 'Property', value: 4, observedAt: at(4), unitCode: 'CEL' } });
    await req('POST', `/entities/${a}/attrs`, { pressure: { type: 'Property', value: 1013, datasetId: 'urn:ngsi-ld:Dataset:p' } });
    await req('DELETE', `/entities/${a}/attrs/pressure?datasetId=urn:ngsi-ld:Dataset:p`);
    await req('DELETE', '/entities/urn:ngsi-ld:Sensor:b');
    await req('PATCH', '/entities/urn:ngsi-ld:Sensor:c/attrs', { temperature: { type: 'Property', value: 1, observedAt: at(5) } });

    const journaled = edge.broker.store.journal.readAfter(0, 1_000, { instances: true });
    expect(announced.map((c) => c.seq)).toEqual(journaled.map((c) => c.seq));
    const fromMemory = await wireOf(edge, announced);
    expect(fromMemory).toHaveLength(3);
    expect(fromMemory).toEqual(await wireOf(edge, journaled));
  });

  it('gathers the changes of a busy edge in one batch, and sends them all', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url, { linger: 1_000 });
    await edge.broker.listen();
    const id = 'urn:ngsi-ld:Sensor:busy';
    expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR(id, 0, at(0)) })).status).toBe(201);
    for (let s = 1; s <= 10; s++) {
      expect((await edge.request('PATCH', `/ngsi-ld/v1/entities/${id}/attrs`, {
        body: { temperature: { type: 'Property', value: s, observedAt: at(s) } },
      })).status).toBe(204);
    }
    await drained(edge);
    // The creation went at once; the ten measurements after it waited for one batch.
    expect(upserts(cloud).map((r) => r.body[0].temperature.value)).toEqual([0, 10]);
    expect(temporals(cloud).flatMap((r) => r.body.temperature.map((i: { value: number }) => i.value))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect((await statusOf(edge)).sent.instances).toBe(11);
  });

  it('sends full batches at once whatever the linger', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url, { batchSize: 2, linger: 60_000 });
    for (let i = 0; i < 5; i++) {
      expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR(`urn:ngsi-ld:Sensor:${i}`, i, at(i)) })).status).toBe(201);
    }
    await edge.broker.listen();
    await drained(edge, 5_000);
    expect(upserts(cloud).map((r) => r.body.length)).toEqual([2, 2, 1]);
  });

  it('reads back from the journal what was announced while the upstream failed', async () => {
    cloud = await startFakeCloud();
    let down = true;
    cloud.answer(() => (down ? { status: 503, body: { title: 'down' } } : undefined));
    edge = await startEdge(cloud.url, { linger: 0 });
    await edge.broker.listen();
    for (let i = 0; i < 3; i++) {
      expect((await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR(`urn:ngsi-ld:Sensor:${i}`, i, at(i)) })).status).toBe(201);
    }
    await waitUntil(async () => (await statusOf(edge!)).lastError !== null, 5_000, 'a failed batch');
    const failed = cloud.requests.length;
    down = false;
    await drained(edge);
    const sent = upserts({ ...cloud, requests: cloud.requests.slice(failed) });
    expect(new Set(sent.flatMap((r) => r.body.map((e: { id: string }) => e.id)))).toEqual(new Set([0, 1, 2].map((i) => `urn:ngsi-ld:Sensor:${i}`)));
  });
});
