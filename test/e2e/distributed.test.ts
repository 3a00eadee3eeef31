// Distributed operations between real edgeld processes on loopback [NGSI-LD §4.3.6, §6.3.17,
// §6.3.18]: a query on A merged from three brokers (A registers B, B registers C), an exclusive
// write through A that lands on its source only, a registration loop (A → B → A) ended by the Via
// check, and sources that fail: stopped before the query, killed -9 while the query is in flight,
// and a silent listener that accepts and never answers (one bounded wait).

import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/fake-cloud.js';
import { call, edgeldProcesses } from '../helpers/processes.js';
import type { BrokerProcess } from '../helpers/process.js';

const nodes = edgeldProcesses('edgeld-e2e-distributed-');
const V1 = '/ngsi-ld/v1';

const sensor = (id: string, attrs: Record<string, unknown>): Record<string, unknown> => ({ id: `urn:ngsi-ld:Sensor:${id}`, type: 'Sensor', ...attrs });
const prop = (value: unknown, observedAt?: string): Record<string, unknown> => ({ type: 'Property', value, ...(observedAt ? { observedAt } : {}) });

async function create(p: BrokerProcess, entity: Record<string, unknown>): Promise<void> {
  const res = await call(p.base, 'POST', `${V1}/entities`, entity);
  expect(res.status, JSON.stringify(res.json)).toBe(201);
}

/** Registers `endpoint` on `p`; returns the registration's id. */
async function register(p: BrokerProcess, endpoint: string, reg: Record<string, unknown> = {}): Promise<string> {
  const res = await call(p.base, 'POST', `${V1}/csourceRegistrations`, {
    type: 'ContextSourceRegistration', information: [{ entities: [{ type: 'Sensor' }] }], endpoint, ...reg,
  });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.headers.get('location')!.split('/').pop()!;
}

const idsOf = (entities: Array<{ id: string }>): string[] => entities.map((e) => e.id).sort();

/** A TCP listener on loopback that accepts connections and never answers. */
async function silentListener(): Promise<{ url: string; received: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let bytes = 0;
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('data', (chunk: Buffer) => void (bytes += chunk.length));
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port; // NOTE: a TCP server's address is AddressInfo
  const close = (): Promise<void> => new Promise((resolve) => {
    for (const s of sockets) s.destroy();
    server.close(() => resolve());
  });
  closers.push(close);
  return { url: `http://127.0.0.1:${port}`, received: () => bytes, close };
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

describe('a distributed query over three edgeld processes [§4.3.6, §5.7.2.4]', () => {
  it('answers on A with the entities of A, B and C, one entity merged from the fragments of two of them', async () => {
    const [a, b, c] = await nodes.start({}, {}, {});
    await create(a!, sensor('a', { temperature: prop(20) }));
    await create(b!, sensor('b', { temperature: prop(21) }));
    await create(c!, sensor('c', { temperature: prop(22) }));
    // One entity held in parts: its temperature on A (older), on C (newer), its humidity on C only.
    await create(a!, sensor('shared', { temperature: prop(1, '2026-01-01T00:00:00Z') }));
    await create(c!, sensor('shared', { temperature: prop(2, '2026-06-01T00:00:00Z'), humidity: prop(50) }));
    await register(a!, b!.base);
    await register(b!, c!.base);

    const res = await call(a!.base, 'GET', `${V1}/entities?type=Sensor`);
    expect(res.status).toBe(200);
    expect(res.headers.get('ngsild-warning')).toBeNull();
    expect(idsOf(res.json)).toEqual(['a', 'b', 'c', 'shared'].map((id) => `urn:ngsi-ld:Sensor:${id}`));
    const shared = res.json.find((e: { id: string }) => e.id === 'urn:ngsi-ld:Sensor:shared');
    expect(shared).toMatchObject({ temperature: { value: 2, observedAt: '2026-06-01T00:00:00Z' }, humidity: { value: 50 } });
    // B alone sees B and C; with local=true, A sees its own.
    expect(idsOf((await call(b!.base, 'GET', `${V1}/entities?type=Sensor`)).json)).toEqual(['b', 'c', 'shared'].map((id) => `urn:ngsi-ld:Sensor:${id}`));
    expect(idsOf((await call(a!.base, 'GET', `${V1}/entities?type=Sensor&local=true`)).json)).toEqual(['a', 'shared'].map((id) => `urn:ngsi-ld:Sensor:${id}`));
    // A retrieval through two hops.
    const one = await call(a!.base, 'GET', `${V1}/entities/urn:ngsi-ld:Sensor:c`);
    expect(one.status).toBe(200);
    expect(one.json).toMatchObject({ id: 'urn:ngsi-ld:Sensor:c', temperature: { value: 22 } });
  });

  it('writes an exclusive attribute through A on its source only, and reads it back through A', async () => {
    const [a, b] = await nodes.start({}, {});
    const valve = 'urn:ngsi-ld:Valve:v1';
    await create(b!, { id: valve, type: 'Valve', open: prop(false) });
    await register(a!, b!.base, {
      information: [{ entities: [{ type: 'Valve', id: valve }], propertyNames: ['open'] }], mode: 'exclusive', operations: ['updateOps', 'retrieveOps'],
    });
    const write = await call(a!.base, 'PATCH', `${V1}/entities/${valve}/attrs/open`, prop(true));
    expect(write.status).toBe(204);
    expect((await call(b!.base, 'GET', `${V1}/entities/${valve}`)).json).toMatchObject({ open: { value: true } });
    // Nothing of it here: the source holds it.
    expect((await call(a!.base, 'GET', `${V1}/entities/${valve}?local=true`)).status).toBe(404);
    const read = await call(a!.base, 'GET', `${V1}/entities/${valve}`);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ id: valve, open: { value: true } });
  });
});

describe('a registration loop between two edgeld processes [§6.3.18]', () => {
  it('ends a query on A at the Via check: A and B each answer once with what they hold', async () => {
    const [a, b] = await nodes.start({ DISTRIBUTED_TIMEOUT: '10000' }, { DISTRIBUTED_TIMEOUT: '10000' });
    await create(a!, sensor('a', { temperature: prop(20) }));
    await create(b!, sensor('b', { temperature: prop(21) }));
    await register(a!, b!.base);
    await register(b!, a!.base);

    const started = Date.now();
    const res = await call(a!.base, 'GET', `${V1}/entities?type=Sensor`);
    expect(res.status).toBe(200);
    expect(idsOf(res.json)).toEqual(['urn:ngsi-ld:Sensor:a', 'urn:ngsi-ld:Sensor:b']);
    // Well below either timeout: the request that came back to A was answered locally, not forwarded again.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(res.headers.get('ngsild-warning')).toBeNull();
    // The same from B's side.
    expect(idsOf((await call(b!.base, 'GET', `${V1}/entities?type=Sensor`)).json)).toEqual(['urn:ngsi-ld:Sensor:a', 'urn:ngsi-ld:Sensor:b']);
  });

  it('answers 508 LoopDetected at the looping hop when only a source could serve the request, and a warning one hop up', async () => {
    const [a, b] = await nodes.start({}, {});
    const id = 'urn:ngsi-ld:Sensor:nowhere';
    // Redirect: only the source holds the entity, whole.
    const redirect = { information: [{ entities: [{ type: 'Sensor', id }] }], mode: 'redirect', operations: ['retrieveOps'] };
    await register(a!, b!.base, redirect);
    await register(b!, a!.base, redirect);

    // A → B (Via: A) → A (Via: A, B): A finds itself in Via and, with only a source to serve the
    // entity, answers B 508; B answers 404 with that as a warning, and A passes B's warning on.
    const res = await call(a!.base, 'GET', `${V1}/entities/${id}`);
    expect(res.status).toBe(404);
    expect(res.headers.get('ngsild-warning')).toMatch(new RegExp(`^299 127\\.0\\.0\\.1:${a!.port} "error response 508 `));
    // Asked with a Via that names it, B detects the loop itself.
    const looped = await call(b!.base, 'GET', `${V1}/entities/${id}`, undefined, { Via: `1.1 edgeld@${hostname()}:${b!.port}` });
    expect(looped.status).toBe(508);
    expect(looped.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/LoopDetected');
  });
});

describe('sources that fail [§6.3.17]', () => {
  it('answers with the local data and a warning when the source was stopped before the query, and 207 for a write', async () => {
    const [a, b] = await nodes.start({}, {});
    await create(a!, sensor('a', { temperature: prop(20) }));
    await create(b!, sensor('b', { temperature: prop(21) }));
    await register(a!, b!.base);
    await register(a!, b!.base, {
      information: [{ entities: [{ type: 'Sensor', id: 'urn:ngsi-ld:Sensor:a' }], propertyNames: ['setpoint'] }], mode: 'exclusive', operations: ['updateOps'],
    });
    await nodes.kill(b!);

    const res = await call(a!.base, 'GET', `${V1}/entities?type=Sensor`);
    expect(res.status).toBe(200);
    expect(idsOf(res.json)).toEqual(['urn:ngsi-ld:Sensor:a']);
    expect(res.headers.get('ngsild-warning')).toMatch(new RegExp(`^199 127\\.0\\.0\\.1:${b!.port} "`));

    const write = await call(a!.base, 'PATCH', `${V1}/entities/urn:ngsi-ld:Sensor:a/attrs`, { temperature: prop(25), setpoint: prop(19) });
    expect(write.status).toBe(207);
    expect(write.json.notUpdated).toMatchObject([{ attributeName: 'setpoint' }]);
    expect((await call(a!.base, 'GET', `${V1}/entities/urn:ngsi-ld:Sensor:a?local=true`)).json).toMatchObject({ temperature: { value: 25 } });
  });

  it('answers at once with the local data and a warning when the source is killed -9 while the query is in flight', async () => {
    // B's own source never answers: A's query waits at B, until B is killed.
    const silent = await silentListener();
    const [a, b] = await nodes.start({ DISTRIBUTED_TIMEOUT: '20000' }, { DISTRIBUTED_TIMEOUT: '20000' });
    await create(a!, sensor('a', { temperature: prop(20) }));
    await create(b!, sensor('b', { temperature: prop(21) }));
    await register(a!, b!.base);
    await register(b!, silent.url);

    const pending = call(a!.base, 'GET', `${V1}/entities?type=Sensor`);
    await waitUntil(() => silent.received() > 0, 10_000, 'the query forwarded by B to its silent source');
    const killed = Date.now();
    await nodes.kill(b!);
    const res = await pending;
    expect(Date.now() - killed).toBeLessThan(5_000);
    expect(res.status).toBe(200);
    expect(idsOf(res.json)).toEqual(['urn:ngsi-ld:Sensor:a']);
    expect(res.headers.get('ngsild-warning')).toMatch(new RegExp(`^199 127\\.0\\.0\\.1:${b!.port} "unreachable`));
  });

  it('costs one bounded wait for a silent source: management.timeout, else distributed.timeout', async () => {
    const silent = await silentListener();
    const [a] = await nodes.start({ DISTRIBUTED_TIMEOUT: '1500' });
    await create(a!, sensor('a', { temperature: prop(20) }));
    const reg = await register(a!, silent.url, { management: { timeout: 300 } });

    let started = Date.now();
    let res = await call(a!.base, 'GET', `${V1}/entities?type=Sensor`);
    let took = Date.now() - started;
    expect(res.status).toBe(200);
    expect(idsOf(res.json)).toEqual(['urn:ngsi-ld:Sensor:a']);
    expect(res.headers.get('ngsild-warning')).toMatch(/^199 127\.0\.0\.1:\d+ "no answer within 300 ms"/);
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(1_400);

    // Without management.timeout, the global bound.
    expect((await call(a!.base, 'PATCH', `${V1}/csourceRegistrations/${reg}`, { management: null })).status).toBe(204);
    started = Date.now();
    res = await call(a!.base, 'GET', `${V1}/entities?type=Sensor`);
    took = Date.now() - started;
    expect(res.status).toBe(200);
    expect(idsOf(res.json)).toEqual(['urn:ngsi-ld:Sensor:a']);
    expect(res.headers.get('ngsild-warning')).toMatch(/"no answer within 1500 ms"/);
    expect(took).toBeGreaterThanOrEqual(1_490);
    expect(took).toBeLessThan(4_000);
  });
});
