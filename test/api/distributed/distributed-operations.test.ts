// Distributed operations [NGSI-LD §4.3.6, §5.6, §5.7, §6.3.17, §6.3.18]: the real app forwarding to
// context sources that are node:http servers on loopback (an IoT Agent's side among them), and two
// real brokers registering each other.

import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readBody } from '../../helpers/receiver.js';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const V1 = '/ngsi-ld/v1';
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';

interface Seen { method: string; url: string; headers: IncomingHttpHeaders; body: unknown }
type Handler = (req: Seen, res: ServerResponse) => void;

/** A context source standing in: records every request, answers with the handler a test sets. */
async function startSource(handler: Handler): Promise<{ url: string; seen: Seen[]; set(h: Handler): void; close(): Promise<void> }> {
  const seen: Seen[] = [];
  let current = handler;
  const server: Server = createServer((req, res) => readBody(req, (body) => {
    const one = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
    seen.push(one);
    current(one, res);
  }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port; // NOTE: a TCP server's address is AddressInfo
  return {
    url: `http://127.0.0.1:${port}`, seen, set: (h) => void (current = h),
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
};

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function broker(config: Parameters<typeof startTestBroker>[0] = {}): Promise<TestBroker> {
  const b = await startTestBroker(config);
  closers.push(() => b.close());
  return b;
}

async function source(handler: Handler) {
  const s = await startSource(handler);
  closers.push(() => s.close());
  return s;
}

async function register(b: TestBroker, reg: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const res = await b.request('POST', `${V1}/csourceRegistrations`, { body: { type: 'ContextSourceRegistration', ...reg }, headers });
  expect(res.status, res.text).toBe(201);
  return res.headers.get('location')!.split('/').pop()!;
}

describe('the IoT Agent flow [§4.3.6.3, §5.6.4]', () => {
  it('forwards a command PATCH of an exclusive attribute to the agent, even with no local entity, and merges a lazy attribute', async () => {
    const agent = await source((req, res) => {
      if (req.method === 'PATCH') res.writeHead(204).end();
      else json(res, 200, { id: 'urn:ngsi-ld:Thermometer:thermo001', type: 'Thermometer', temperature: { type: 'Property', value: 21.5 } });
    });
    const b = await broker();
    const tenant = { 'NGSILD-Tenant': 'iot' };
    await register(b, {
      information: [{ entities: [{ type: 'Thermometer', id: 'urn:ngsi-ld:Thermometer:thermo001' }], propertyNames: ['open'] }],
      mode: 'exclusive', operations: ['updateOps'], endpoint: agent.url, tenant: 'iot',
      contextSourceInfo: [{ key: 'jsonldContext', value: CORE }],
    }, tenant);
    const cmd = await b.request('PATCH', `${V1}/entities/urn:ngsi-ld:Thermometer:thermo001/attrs/open`, {
      body: { type: 'Property', value: true }, headers: tenant,
    });
    expect(cmd.status).toBe(204);
    expect(agent.seen).toHaveLength(1);
    expect(agent.seen[0]).toMatchObject({ method: 'PATCH', url: `${V1}/entities/urn%3Angsi-ld%3AThermometer%3Athermo001/attrs/open`, body: { type: 'Property', value: true } });
    expect(agent.seen[0]!.headers['ngsild-tenant']).toBe('iot');
    expect(agent.seen[0]!.headers['via']).toMatch(/^1\.1 edgeld@/);
    expect(agent.seen[0]!.headers['link']).toContain(CORE);
    // Not stored here: the agent holds the entity.
    expect((await b.request('GET', `${V1}/entities/urn:ngsi-ld:Thermometer:thermo001?local=true`, { headers: tenant })).status).toBe(404);

    // The agent's measures arrive as upserts; a lazy attribute is read from the agent.
    const up = await b.request('POST', `${V1}/entityOperations/upsert?options=update`, {
      body: [{ id: 'urn:ngsi-ld:Thermometer:thermo001', type: 'Thermometer', open_status: { type: 'Property', value: 'OK' } }], headers: tenant,
    });
    expect(up.status).toBeLessThan(300);
    await register(b, {
      information: [{ entities: [{ type: 'Thermometer', id: 'urn:ngsi-ld:Thermometer:thermo001' }], propertyNames: ['temperature'] }],
      mode: 'exclusive', operations: ['retrieveOps'], endpoint: agent.url,
    }, tenant);
    const got = await b.request('GET', `${V1}/entities/urn:ngsi-ld:Thermometer:thermo001`, { headers: tenant });
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({ open_status: { value: 'OK' }, temperature: { value: 21.5 } });
    expect(agent.seen.at(-1)!.url).toContain('attrs=temperature');
  });
});

describe('the IoT Agent in a non-default tenant [§4.14]', () => {
  // What iotagent-node-lib 4.x sends: its service as NGSILD-Tenant, no tenant member.
  const agentRegistration = (endpoint: string) => ({
    information: [{ entities: [{ type: 'Thermometer', id: 'urn:ngsi-ld:Thermometer:thermo001' }], propertyNames: ['open'] }],
    mode: 'exclusive', operations: ['updateOps'], endpoint, contextSourceInfo: [{ key: 'jsonldContext', value: CORE }],
  });
  const tenant = { 'NGSILD-Tenant': 'smartgondor' };
  const command = (b: TestBroker) => b.request('PATCH', `${V1}/entities/urn:ngsi-ld:Thermometer:thermo001/attrs/open`, {
    body: { type: 'Property', value: true }, headers: tenant,
  });

  it('forwards the command without NGSILD-Tenant by default: no tenant member, no tenant information', async () => {
    const agent = await source((_req, res) => res.writeHead(204).end());
    const b = await broker();
    await register(b, agentRegistration(agent.url), tenant);
    expect((await command(b)).status).toBe(204);
    expect(agent.seen).toHaveLength(1);
    expect(agent.seen[0]!.headers['ngsild-tenant']).toBeUndefined();
  });

  it('forwards the tenant the registration was made in with distributed.forward-tenant, and none from the default tenant', async () => {
    const agent = await source((_req, res) => res.writeHead(204).end());
    const b = await broker({ config: { distributed: { forwardTenant: true } } });
    await register(b, agentRegistration(agent.url), tenant);
    expect((await command(b)).status).toBe(204);
    expect(agent.seen[0]!.headers['ngsild-tenant']).toBe('smartgondor');
    // A tenant member still wins; the default tenant forwards none.
    await register(b, { ...agentRegistration(agent.url), information: [{ entities: [{ type: 'Valve', id: 'urn:ngsi-ld:Valve:v1' }], propertyNames: ['open'] }], tenant: 'other' }, tenant);
    expect((await b.request('PATCH', `${V1}/entities/urn:ngsi-ld:Valve:v1/attrs/open`, { body: { type: 'Property', value: true }, headers: tenant })).status).toBe(204);
    expect(agent.seen[1]!.headers['ngsild-tenant']).toBe('other');
    await register(b, agentRegistration(agent.url));
    expect((await b.request('PATCH', `${V1}/entities/urn:ngsi-ld:Thermometer:thermo001/attrs/open`, { body: { type: 'Property', value: false } })).status).toBe(204);
    expect(agent.seen[2]!.headers['ngsild-tenant']).toBeUndefined();
  });
});

describe('reads with matching registrations [§5.7.1.4, §5.7.2.4]', () => {
  it('merges per attribute instance: the newest observedAt wins, datasetIds are kept', async () => {
    const src = await source((_req, res) => json(res, 200, {
      id: 'urn:ngsi-ld:Room:1', type: 'Room',
      temperature: [
        { type: 'Property', value: 30, observedAt: '2026-05-01T12:00:00Z' },
        { type: 'Property', value: 5, datasetId: 'urn:ngsi-ld:Dataset:remote', observedAt: '2026-05-01T09:00:00Z' },
      ],
      humidity: { type: 'Property', value: 40, observedAt: '2026-05-01T08:00:00Z' },
    }));
    const b = await broker();
    await b.request('POST', `${V1}/entities`, { body: {
      id: 'urn:ngsi-ld:Room:1', type: 'Room',
      temperature: { type: 'Property', value: 20, observedAt: '2026-05-01T10:00:00Z' },
      humidity: { type: 'Property', value: 55, observedAt: '2026-05-01T11:00:00Z' },
    } });
    await register(b, { information: [{ entities: [{ type: 'Room' }] }], endpoint: src.url });
    const got = await b.request('GET', `${V1}/entities/urn:ngsi-ld:Room:1`);
    expect(got.status).toBe(200);
    const temps = [got.json.temperature].flat();
    expect(temps.find((t: { datasetId?: string }) => t.datasetId === undefined).value).toBe(30);
    expect(temps.find((t: { datasetId?: string }) => t.datasetId === 'urn:ngsi-ld:Dataset:remote').value).toBe(5);
    expect(got.json.humidity.value).toBe(55);
  });

  it('answers a query with the local and the remote entities, and only the local ones with local=true', async () => {
    const src = await source((req, res) => json(res, 200, [{ id: 'urn:ngsi-ld:Room:remote', type: 'Room', name: { type: 'Property', value: req.url } }]));
    const b = await broker();
    await b.request('POST', `${V1}/entities`, { body: { id: 'urn:ngsi-ld:Room:local', type: 'Room' } });
    await register(b, { information: [{ entities: [{ type: 'Room' }] }], endpoint: src.url });
    const all = await b.request('GET', `${V1}/entities?type=Room&count=true`);
    expect(all.status).toBe(200);
    expect(all.json.map((e: { id: string }) => e.id).sort()).toEqual(['urn:ngsi-ld:Room:local', 'urn:ngsi-ld:Room:remote']);
    expect(all.headers.get('ngsild-results-count')).toBe('2');
    const post = await b.request('POST', `${V1}/entityOperations/query`, { body: { type: 'Query', entities: [{ type: 'Room' }] } });
    expect(post.json).toHaveLength(2);
    expect(src.seen.at(-1)).toMatchObject({ method: 'POST', url: expect.stringContaining('/entityOperations/query') });
    const before = src.seen.length;
    const local = await b.request('GET', `${V1}/entities?type=Room&local=true`);
    expect(local.json.map((e: { id: string }) => e.id)).toEqual(['urn:ngsi-ld:Room:local']);
    expect(src.seen).toHaveLength(before);
  });

  it('orders the local and the remote entities together with orderBy, asking each source in that order', async () => {
    const room = (n: number, t: number) => ({ id: `urn:ngsi-ld:Room:${n}`, type: 'Room', temperature: { type: 'Property', value: t } });
    const src = await source((_req, res) => json(res, 200, [room(3, 30), room(2, 20)]));
    const b = await broker();
    for (const r of [room(4, 40), room(1, 10)]) expect((await b.request('POST', `${V1}/entities`, { body: r })).status).toBe(201);
    await register(b, { information: [{ entities: [{ type: 'Room' }] }], endpoint: src.url });
    const ids = (res: { json: Array<{ id: string }> }): string[] => res.json.map((e) => e.id.split(':').pop()!);
    const all = await b.request('GET', `${V1}/entities?type=Room&orderBy=temperature&count=true`);
    expect(all.status).toBe(200);
    expect(ids(all)).toEqual(['1', '2', '3', '4']);
    expect(all.headers.get('ngsild-results-count')).toBe('4');
    expect(new URL(src.seen.at(-1)!.url, 'http://x').searchParams.get('orderBy')).toBe('temperature');
    expect(ids(await b.request('GET', `${V1}/entities?type=Room&orderBy=temperature&limit=2&offset=1`))).toEqual(['2', '3']);
    expect(ids(await b.request('GET', `${V1}/entities?type=Room&orderBy=temperature;desc`))).toEqual(['4', '3', '2', '1']);
    const post = await b.request('POST', `${V1}/entityOperations/query?orderBy=temperature`, { body: { type: 'Query', entities: [{ type: 'Room' }] } });
    expect(ids(post)).toEqual(['1', '2', '3', '4']);
  });

  it('follows registration changes at once: an updated, a deleted and an expired registration no longer draw the query', async () => {
    const one = await source((_req, res) => json(res, 200, [{ id: 'urn:ngsi-ld:Room:one', type: 'Room' }]));
    const two = await source((_req, res) => json(res, 200, [{ id: 'urn:ngsi-ld:Room:two', type: 'Room' }]));
    const b = await broker();
    const ids = async (): Promise<string[]> => (await b.request('GET', `${V1}/entities?type=Room`)).json.map((e: { id: string }) => e.id).sort();
    const reg = await register(b, { information: [{ entities: [{ type: 'Room' }] }], endpoint: one.url });
    expect(await ids()).toEqual(['urn:ngsi-ld:Room:one']);
    expect(await ids()).toEqual(['urn:ngsi-ld:Room:one']);
    const patched = await b.request('PATCH', `${V1}/csourceRegistrations/${reg}`, { body: { endpoint: two.url } });
    expect(patched.status, patched.text).toBe(204);
    expect(await ids()).toEqual(['urn:ngsi-ld:Room:two']);
    expect((await b.request('DELETE', `${V1}/csourceRegistrations/${reg}`)).status).toBe(204);
    expect(await ids()).toEqual([]);
    const expiresAt = new Date(b.clock.now() + 60_000).toISOString();
    await register(b, { information: [{ entities: [{ type: 'Room' }] }], endpoint: one.url, expiresAt });
    expect(await ids()).toEqual(['urn:ngsi-ld:Room:one']);
    b.clock.advance(60_000);
    expect(await ids()).toEqual([]);
  });

  it('asks a source again with If-None-Match and reuses the entities it holds on a 304', async () => {
    const rooms = [{ id: 'urn:ngsi-ld:Room:remote', type: 'Room', name: { type: 'Property', value: 'kept' } }];
    const src = await source((req, res) => {
      if (req.headers['if-none-match'] === '"v1"') res.writeHead(304, { ETag: '"v1"' }).end();
      else res.writeHead(200, { 'Content-Type': 'application/json', ETag: '"v1"' }).end(JSON.stringify(rooms));
    });
    const b = await broker();
    await register(b, { information: [{ entities: [{ type: 'Room' }] }], endpoint: src.url });
    for (let i = 0; i < 3; i++) {
      const got = await b.request('GET', `${V1}/entities?type=Room`);
      expect(got.status).toBe(200);
      expect(got.json).toEqual([{ id: 'urn:ngsi-ld:Room:remote', type: 'Room', name: { type: 'Property', value: 'kept' } }]);
    }
    expect(src.seen.map((r) => r.headers['if-none-match'])).toEqual([undefined, '"v1"', '"v1"']);
  });

  it('turns a 500, a non-JSON payload, an oversized reply and a silent source into NGSILD-Warning, never a 500 of ours', async () => {
    const b = await broker({ config: { distributed: { enabled: true, timeout: 300, maxReplyBytes: 65_536, maxEntities: 1_000 } } });
    await b.request('POST', `${V1}/entities`, { body: { id: 'urn:ngsi-ld:Room:1', type: 'Room' } });
    const cases: Array<[Handler, string]> = [
      [(_q, res) => json(res, 500, { title: 'boom' }), '299'],
      [(_q, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('not json'), '111'],
      [(_q, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(`[${'1,'.repeat(100_000)}1]`), '111'],
      [() => undefined, '199'],
    ];
    for (const [handler, code] of cases) {
      const src = await source(handler);
      const id = await register(b, { information: [{ entities: [{ type: 'Room' }] }], endpoint: src.url });
      const started = Date.now();
      const got = await b.request('GET', `${V1}/entities/urn:ngsi-ld:Room:1`);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(got.status).toBe(200);
      expect(got.headers.get('ngsild-warning')).toMatch(new RegExp(`^${code} 127\\.0\\.0\\.1:\\d+ "`));
      expect((await b.request('DELETE', `${V1}/csourceRegistrations/${id}`)).status).toBe(204);
    }
  });

  it('skips a failed source for its cooldown', async () => {
    const src = await source((_q, res) => json(res, 503, {}));
    const b = await broker();
    await b.request('POST', `${V1}/entities`, { body: { id: 'urn:ngsi-ld:Room:1', type: 'Room' } });
    await register(b, { information: [{ entities: [{ type: 'Room' }] }], endpoint: src.url, management: { cooldown: 60_000 } });
    await b.request('GET', `${V1}/entities/urn:ngsi-ld:Room:1`);
    const second = await b.request('GET', `${V1}/entities/urn:ngsi-ld:Room:1`);
    expect(second.status).toBe(200);
    expect(second.headers.get('ngsild-warning')).toContain('cooling down');
    expect(src.seen).toHaveLength(1);
  });
});

describe('writes by mode [§4.3.6.2, §5.6]', () => {
  const entity = { id: 'urn:ngsi-ld:Car:1', type: 'Car', speed: { type: 'Property', value: 10 }, brand: { type: 'Property', value: 'x' } };

  it('exclusive: the covered attribute goes to the source only, the rest is stored here', async () => {
    const src = await source((_q, res) => res.writeHead(201).end());
    const b = await broker();
    await register(b, {
      information: [{ entities: [{ type: 'Car', id: 'urn:ngsi-ld:Car:1' }], propertyNames: ['speed'] }], mode: 'exclusive', operations: ['redirectionOps'], endpoint: src.url,
    });
    expect((await b.request('POST', `${V1}/entities`, { body: entity })).status).toBe(201);
    expect(src.seen[0]!.body).toEqual({ id: 'urn:ngsi-ld:Car:1', type: 'Car', speed: { type: 'Property', value: 10 } });
    const local = await b.request('GET', `${V1}/entities/urn:ngsi-ld:Car:1?local=true`);
    expect(local.json.brand.value).toBe('x');
    expect(local.json.speed).toBeUndefined();
  });

  it('inclusive: to both; auxiliary: never; a failing source makes a 207 naming its registration', async () => {
    const inc = await source((_q, res) => res.writeHead(204).end());
    const aux = await source((_q, res) => res.writeHead(204).end());
    const b = await broker();
    await b.request('POST', `${V1}/entities`, { body: entity });
    await register(b, { information: [{ entities: [{ type: 'Car' }] }], mode: 'inclusive', operations: ['updateOps'], endpoint: inc.url });
    await register(b, { information: [{ entities: [{ type: 'Car' }] }], mode: 'auxiliary', operations: ['retrieveOps'], endpoint: aux.url });
    const upd = await b.request('PATCH', `${V1}/entities/urn:ngsi-ld:Car:1/attrs`, { body: { speed: { type: 'Property', value: 20 } } });
    expect(upd.status).toBe(204);
    expect(inc.seen).toHaveLength(1);
    expect(aux.seen).toHaveLength(0);
    expect((await b.request('GET', `${V1}/entities/urn:ngsi-ld:Car:1?local=true`)).json.speed.value).toBe(20);
    inc.set((_q, res) => json(res, 400, { type: 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData' }));
    const partial = await b.request('PATCH', `${V1}/entities/urn:ngsi-ld:Car:1/attrs`, { body: { speed: { type: 'Property', value: 30 } } });
    expect(partial.status).toBe(207);
    expect(partial.json.notUpdated[0]).toMatchObject({ attributeName: 'speed', registrationId: expect.stringMatching(/^urn:/) });
    // Written here all the same: the local copy took it.
    expect(partial.json.updated).toEqual(['speed']);
    expect((await b.request('GET', `${V1}/entities/urn:ngsi-ld:Car:1?local=true`)).json.speed.value).toBe(30);
  });

  it('inclusive: an attribute the source updated and this copy lacks is no "not found" here (§5.6.3); one updated nowhere is', async () => {
    const inc = await source((_q, res) => res.writeHead(204).end());
    const b = await broker();
    await b.request('POST', `${V1}/entities`, { body: entity });
    await register(b, { information: [{ entities: [{ type: 'Car' }] }], mode: 'inclusive', operations: ['updateOps'], endpoint: inc.url });
    // colour exists only at the source: updated there; speed here and there.
    const upd = await b.request('PATCH', `${V1}/entities/urn:ngsi-ld:Car:1/attrs`, { body: { speed: { type: 'Property', value: 40 }, colour: { type: 'Property', value: 'red' } } });
    expect(upd.status).toBe(204);
    expect(inc.seen[0]!.body).toEqual({ speed: { type: 'Property', value: 40 }, colour: { type: 'Property', value: 'red' } });
    const here = (await b.request('GET', `${V1}/entities/urn:ngsi-ld:Car:1?local=true`)).json;
    expect(here.speed.value).toBe(40);
    expect(here.colour).toBeUndefined();
    const one = await b.request('PATCH', `${V1}/entities/urn:ngsi-ld:Car:1/attrs/colour`, { body: { type: 'Property', value: 'blue' } });
    expect(one.status).toBe(204);
    expect(inc.seen).toHaveLength(2);
    // The source refusing it: not updated anywhere, so 207 naming the source's registration.
    inc.set((_q, res) => json(res, 400, { type: 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData' }));
    const refused = await b.request('PATCH', `${V1}/entities/urn:ngsi-ld:Car:1/attrs`, { body: { colour: { type: 'Property', value: 'green' } } });
    expect(refused.status).toBe(207);
    expect(refused.json.notUpdated.map((n: { attributeName: string }) => n.attributeName)).toContain('colour');
  });

  it('batch: a redirect source takes its entities (one request), the others are stored here; a refusal at the source is the entity\'s error', async () => {
    const src = await source((req, res) => res.writeHead(201, { 'Content-Type': 'application/json' }).end(JSON.stringify((req.body as Array<{ id: string }>).map((e) => e.id))));
    const b = await broker();
    await register(b, { information: [{ entities: [{ type: 'Car' }] }], mode: 'redirect', operations: ['createBatch', 'deleteBatch'], endpoint: src.url });
    const created = await b.request('POST', `${V1}/entityOperations/create`, { body: [entity, { id: 'urn:ngsi-ld:Bike:1', type: 'Bike' }] });
    expect(created.status).toBe(201);
    expect(created.json.sort()).toEqual(['urn:ngsi-ld:Bike:1', 'urn:ngsi-ld:Car:1']);
    expect(src.seen).toHaveLength(1);
    expect(src.seen[0]).toMatchObject({ url: `${V1}/entityOperations/create`, body: [entity] });
    expect((await b.request('GET', `${V1}/entities/urn:ngsi-ld:Car:1?local=true`)).status).toBe(404);
    expect((await b.request('GET', `${V1}/entities/urn:ngsi-ld:Bike:1?local=true`)).status).toBe(200);
    src.set((_q, res) => json(res, 404, {}));
    const deleted = await b.request('POST', `${V1}/entityOperations/delete`, { body: ['urn:ngsi-ld:Car:1', 'urn:ngsi-ld:Bike:1'] });
    expect(deleted.status).toBe(207);
    expect(deleted.json).toMatchObject({ success: ['urn:ngsi-ld:Bike:1'], errors: [{ entityId: 'urn:ngsi-ld:Car:1', error: { status: 404 } }] });
  });

  it('batch delete: an entity an exclusive source holds some attributes of is deleted there and here', async () => {
    const src = await source((_q, res) => res.writeHead(204).end());
    const b = await broker();
    await b.request('POST', `${V1}/entities?local=true`, { body: { id: 'urn:ngsi-ld:Car:1', type: 'Car', brand: { type: 'Property', value: 'x' } } });
    await register(b, {
      information: [{ entities: [{ type: 'Car', id: 'urn:ngsi-ld:Car:1' }], propertyNames: ['speed'] }], mode: 'exclusive', operations: ['deleteBatch'], endpoint: src.url,
    });
    expect((await b.request('POST', `${V1}/entityOperations/delete`, { body: ['urn:ngsi-ld:Car:1'] })).status).toBe(204);
    expect(src.seen[0]).toMatchObject({ url: `${V1}/entityOperations/delete`, body: ['urn:ngsi-ld:Car:1'] });
    expect((await b.request('GET', `${V1}/entities/urn:ngsi-ld:Car:1?local=true`)).status).toBe(404);
  });

  it('does not forward when distributed.enabled is off', async () => {
    const src = await source((_q, res) => res.writeHead(204).end());
    const b = await broker({ config: { distributed: { enabled: false, timeout: 5_000, maxReplyBytes: 4_194_304, maxEntities: 1_000 } } });
    await register(b, {
      information: [{ entities: [{ type: 'Car', id: 'urn:ngsi-ld:Car:1' }], propertyNames: ['speed'] }], mode: 'exclusive', operations: ['redirectionOps'], endpoint: src.url,
    });
    expect((await b.request('POST', `${V1}/entities`, { body: entity })).status).toBe(201);
    expect(src.seen).toHaveLength(0);
  });
});

describe('loop detection [§6.3.18]', () => {
  it('two brokers registering each other answer a query once each, the loop ended by Via', async () => {
    const a = await broker();
    const b = await broker();
    const portA = await a.broker.listen();
    const portB = await b.broker.listen();
    await a.request('POST', `${V1}/entities`, { body: { id: 'urn:ngsi-ld:Room:a', type: 'Room' } });
    await b.request('POST', `${V1}/entities`, { body: { id: 'urn:ngsi-ld:Room:b', type: 'Room' } });
    await register(a, { information: [{ entities: [{ type: 'Room' }] }], endpoint: `http://127.0.0.1:${portB}` });
    await register(b, { information: [{ entities: [{ type: 'Room' }] }], endpoint: `http://127.0.0.1:${portA}` });
    const got = await a.request('GET', `${V1}/entities?type=Room`);
    expect(got.status).toBe(200);
    expect(got.json.map((e: { id: string }) => e.id).sort()).toEqual(['urn:ngsi-ld:Room:a', 'urn:ngsi-ld:Room:b']);
    expect(got.headers.get('ngsild-warning')).toBeNull();
  });

  it('answers 508 when a request naming this broker in Via would go to a redirect source', async () => {
    const src = await source((_q, res) => res.writeHead(204).end());
    const b = await broker();
    await register(b, { information: [{ entities: [{ type: 'Car' }] }], mode: 'redirect', operations: ['redirectionOps'], endpoint: src.url });
    expect((await b.request('POST', `${V1}/entities`, { body: { id: 'urn:ngsi-ld:Car:1', type: 'Car' } })).status).toBe(201);
    const via = src.seen[0]!.headers['via'] as string;
    const res = await b.request('DELETE', `${V1}/entities/urn:ngsi-ld:Car:1`, { headers: { Via: via } });
    expect(res.status).toBe(508);
  });
});
