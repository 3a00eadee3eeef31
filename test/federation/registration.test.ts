// The gateway registered upstream as a context source (federation.register): what the fake cloud
// receives at start, the renewal before expiry on the test clock, information updated when a new
// type appears, re-creation after the cloud forgot it, backoff while the cloud is down, the removal
// on close, and nothing at all when the option is off.

import { afterEach, describe, expect, it } from 'vitest';
import { T0, type TestBroker } from '../helpers/broker.js';
import { startFakeCloud, waitUntil, type CloudRequest, type FakeCloud } from '../helpers/fake-cloud.js';
import { parseExposition } from '../helpers/metrics.js';
import { SENSOR, drained, startEdge, statusOf, upserts, type FederationPatch } from './helpers.js';

let cloud: FakeCloud | undefined;
let edge: TestBroker | undefined;

afterEach(async () => {
  await edge?.close();
  await cloud?.close();
  edge = undefined;
  cloud = undefined;
});

const MINUTE = 60_000;
const CSR = '/ngsi-ld/v1/csourceRegistrations';
const iso = (ms: number): string => new Date(ms).toISOString();
const csrCalls = (c: FakeCloud, method?: string): CloudRequest[] =>
  c.requests.filter((r) => r.path.startsWith(CSR) && (method === undefined || r.method === method));

/** An edge registering with the fake cloud (fast ticks: debounce 10 ms), listening on loopback. */
async function startRegistering(patch: FederationPatch = {}, before?: (e: TestBroker) => Promise<void>): Promise<{ edge: TestBroker; port: number }> {
  cloud ??= await startFakeCloud();
  edge = await startEdge(cloud.url, { ...patch, register: { enabled: true, debounce: 10, ...patch.register } });
  if (before) await before(edge);
  const port = await edge.broker.listen();
  return { edge, port };
}

async function create(e: TestBroker, body: Record<string, unknown>): Promise<void> {
  expect((await e.request('POST', '/ngsi-ld/v1/entities', { body })).status).toBe(201);
}

const ROOM = (id: string): Record<string, unknown> => ({ id, type: 'Room', name: { type: 'Property', value: 'hall' } });

describe('federation.register', () => {
  it('registers the types and attributes held at start, with mode, operations, endpoint and expiresAt [§5.9.2]', async () => {
    const { edge: e, port } = await startRegistering({}, async (b) => {
      await create(b, { ...SENSOR('urn:ngsi-ld:Sensor:1', 20), isIn: { type: 'Relationship', object: 'urn:ngsi-ld:Room:1' } });
    });
    await cloud!.waitFor((r) => csrCalls(cloud!, 'POST').length === 1, 5_000, 'registration');
    const [post] = csrCalls(cloud!, 'POST');
    const id = `urn:ngsi-ld:ContextSourceRegistration:edgeld:127.0.0.1-${port}`;
    expect(post!.body).toEqual({
      id, type: 'ContextSourceRegistration', registrationName: `edgeld gateway 127.0.0.1-${port}`,
      information: [{ entities: [{ type: 'Sensor' }], propertyNames: ['temperature'], relationshipNames: ['isIn'] }],
      mode: 'auxiliary', operations: ['retrieveOps'], endpoint: `http://127.0.0.1:${port}`, expiresAt: iso(T0 + 60 * MINUTE),
    });
    expect(post!.headers['content-type']).toBe('application/json');
    expect(post!.headers['link']).toContain('rel="http://www.w3.org/ns/json-ld#context"');
    await waitUntil(async () => (await statusOf(e)).registration?.registered === true, 5_000, 'registered in the status');
    expect((await statusOf(e)).registration).toEqual({
      id, endpoint: `http://127.0.0.1:${port}`, mode: 'auxiliary', registered: true, expiresAt: iso(T0 + 60 * MINUTE), types: 1,
      lastSuccess: iso(T0), lastError: null, failures: 0,
    });
    const metrics = parseExposition((await e.request('GET', '/metrics')).text);
    expect(metrics.value('edgeld_federation_registered')).toBe(1);
    expect(metrics.value('edgeld_federation_registration_expires_seconds')).toBe((T0 + 60 * MINUTE) / 1_000);
    expect(metrics.value('edgeld_federation_registration_failures_total')).toBe(0);
  });

  it('renews by PATCH of expiresAt when a quarter of the lifetime is left, on the clock [§5.9.3]', async () => {
    const { edge: e } = await startRegistering({}, (b) => create(b, SENSOR('urn:ngsi-ld:Sensor:1', 20)));
    await cloud!.waitFor(() => cloud!.registrations.size === 1, 5_000, 'registration');
    e.clock.advance(46 * MINUTE);
    await cloud!.waitFor(() => csrCalls(cloud!, 'PATCH').length === 1, 5_000, 'renewal');
    const [patch] = csrCalls(cloud!, 'PATCH');
    // Nothing new held: only expiresAt is sent.
    expect(patch!.body).toEqual({ expiresAt: iso(T0 + 106 * MINUTE) });
    expect(patch!.path).toBe(`${CSR}/${encodeURIComponent([...cloud!.registrations.keys()][0]!)}`);
    await waitUntil(async () => (await statusOf(e)).registration?.expiresAt === iso(T0 + 106 * MINUTE), 5_000, 'renewed in the status');
    expect(csrCalls(cloud!, 'POST')).toHaveLength(1);
  });

  it('updates the information when a new type or attribute appears', async () => {
    const { edge: e } = await startRegistering({}, (b) => create(b, SENSOR('urn:ngsi-ld:Sensor:1', 20)));
    await cloud!.waitFor(() => cloud!.registrations.size === 1, 5_000, 'registration');
    await create(e, ROOM('urn:ngsi-ld:Room:1'));
    // Debounced on the clock (federation.register.debounce, 10 ms here).
    e.clock.advance(10);
    await cloud!.waitFor(() => csrCalls(cloud!, 'PATCH').length === 1, 5_000, 'information update');
    expect(csrCalls(cloud!, 'PATCH')[0]!.body.information).toEqual([
      { entities: [{ type: 'Room' }], propertyNames: ['name'] },
      { entities: [{ type: 'Sensor' }], propertyNames: ['temperature'] },
    ]);
    expect((await e.request('POST', '/ngsi-ld/v1/entities/urn:ngsi-ld:Sensor:1/attrs', {
      body: { humidity: { type: 'Property', value: 40 } },
    })).status).toBe(204);
    e.clock.advance(10);
    await cloud!.waitFor(() => csrCalls(cloud!, 'PATCH').length === 2, 5_000, 'second information update');
    expect(csrCalls(cloud!, 'PATCH')[1]!.body.information[1]).toEqual({ entities: [{ type: 'Sensor' }], propertyNames: ['humidity', 'temperature'] });
    expect([...cloud!.registrations.values()][0].information).toHaveLength(2);
  });

  it('creates it again after the cloud forgot it (404 on renewal)', async () => {
    const { edge: e } = await startRegistering({}, (b) => create(b, SENSOR('urn:ngsi-ld:Sensor:1', 20)));
    await cloud!.waitFor(() => cloud!.registrations.size === 1, 5_000, 'registration');
    cloud!.registrations.clear();
    e.clock.advance(50 * MINUTE);
    await cloud!.waitFor(() => csrCalls(cloud!, 'POST').length === 2, 5_000, 'registration again');
    expect(csrCalls(cloud!).map((r) => r.method)).toEqual(['POST', 'PATCH', 'POST']);
    expect([...cloud!.registrations.values()][0].expiresAt).toBe(iso(T0 + 110 * MINUTE));
  });

  it('removes and creates it again when the renewal is refused as a conflict (409)', async () => {
    const { edge: e } = await startRegistering({}, (b) => create(b, SENSOR('urn:ngsi-ld:Sensor:1', 20)));
    await cloud!.waitFor(() => cloud!.registrations.size === 1, 5_000, 'registration');
    cloud!.answer((r) => (r.method === 'PATCH' ? { status: 409, body: { type: 'https://uri.etsi.org/ngsi-ld/errors/Conflict', title: 'Conflict' } } : undefined));
    e.clock.advance(46 * MINUTE);
    await cloud!.waitFor(() => csrCalls(cloud!, 'POST').length === 2, 5_000, 'registration again');
    expect(csrCalls(cloud!).map((r) => r.method)).toEqual(['POST', 'PATCH', 'DELETE', 'POST']);
    expect([...cloud!.registrations.values()][0].expiresAt).toBe(iso(T0 + 106 * MINUTE));
    await waitUntil(async () => (await statusOf(e)).registration?.expiresAt === iso(T0 + 106 * MINUTE), 5_000, 'renewed in the status');
    expect((await statusOf(e)).registration).toMatchObject({ registered: true, failures: 0 });
  });

  it('updates a registration left by an earlier run (409 on creation) whole', async () => {
    cloud = await startFakeCloud();
    const { port } = await startRegistering({ register: { id: 'gw-1' } }, async (b) => {
      cloud!.registrations.set('urn:ngsi-ld:ContextSourceRegistration:edgeld:gw-1', { id: 'urn:ngsi-ld:ContextSourceRegistration:edgeld:gw-1', mode: 'auxiliary', endpoint: 'http://old:1' });
      await create(b, SENSOR('urn:ngsi-ld:Sensor:1', 20));
    });
    await cloud.waitFor(() => csrCalls(cloud!, 'PATCH').length === 1, 5_000, 'update whole');
    expect(csrCalls(cloud).map((r) => r.method)).toEqual(['POST', 'PATCH']);
    expect(cloud.registrations.get('urn:ngsi-ld:ContextSourceRegistration:edgeld:gw-1')).toMatchObject({
      endpoint: `http://127.0.0.1:${port}`, expiresAt: iso(T0 + 60 * MINUTE), information: [{ entities: [{ type: 'Sensor' }] }],
    });
  });

  it('backs off while the cloud is down, without holding anything up, and registers once it is back', async () => {
    cloud = await startFakeCloud();
    let down = true;
    cloud.answer((r) => (down && r.path.startsWith(CSR) ? { status: 503, raw: '<html>down</html>' } : undefined));
    const { edge: e } = await startRegistering({}, (b) => create(b, SENSOR('urn:ngsi-ld:Sensor:1', 20)));
    await cloud.waitFor(() => csrCalls(cloud!).length === 1, 5_000, 'first attempt');
    // The gateway serves and forwards meanwhile.
    await create(e, SENSOR('urn:ngsi-ld:Sensor:2', 21));
    await drained(e);
    expect(upserts(cloud).length).toBeGreaterThan(0);
    await waitUntil(async () => (await statusOf(e)).registration?.failures === 1, 5_000, 'failure in the status');
    const failedStatus = (await statusOf(e)).registration;
    expect(failedStatus).toMatchObject({ registered: false, expiresAt: null, lastError: { message: expect.stringContaining('503') } });
    // Each retry waits for the backoff on the clock (federation.retry-max 40 ms in these tests).
    for (let attempt = 2; attempt <= 3; attempt++) {
      e.clock.advance(40);
      await cloud.waitFor(() => csrCalls(cloud!).length === attempt, 5_000, `attempt ${attempt}`);
      await waitUntil(async () => (await statusOf(e)).registration?.failures === attempt, 5_000, `failure ${attempt} in the status`);
    }
    down = false;
    e.clock.advance(40);
    await cloud.waitFor(() => cloud!.registrations.size === 1, 5_000, 'registration after the outage');
    expect(csrCalls(cloud)).toHaveLength(4);
    await waitUntil(async () => (await statusOf(e)).registration?.registered === true, 5_000, 'registered in the status');
  });

  it('does not wait for a cloud that does not answer, at start or at close', async () => {
    cloud = await startFakeCloud();
    cloud.answer((r) => (r.path.startsWith(CSR) ? 'hang' : undefined));
    const { edge: e } = await startRegistering({ timeout: 300 }, (b) => create(b, SENSOR('urn:ngsi-ld:Sensor:1', 20)));
    await cloud.waitFor(() => csrCalls(cloud!).length === 1, 5_000, 'registration sent');
    expect((await e.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Sensor:1')).status).toBe(200);
    const started = Date.now();
    await e.close();
    edge = undefined;
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(csrCalls(cloud, 'DELETE')).toHaveLength(1);
  });

  it('removes it on close [§5.9.5]', async () => {
    const { edge: e } = await startRegistering({}, (b) => create(b, SENSOR('urn:ngsi-ld:Sensor:1', 20)));
    await cloud!.waitFor(() => cloud!.registrations.size === 1, 5_000, 'registration');
    const [id] = [...cloud!.registrations.keys()];
    await e.close();
    edge = undefined;
    expect(csrCalls(cloud!, 'DELETE').map((r) => r.path)).toEqual([`${CSR}/${encodeURIComponent(id!)}`]);
    expect(cloud!.registrations.size).toBe(0);
  });

  it('registers as inclusive with the write operations, narrowed to the types and attributes configured', async () => {
    await startRegistering({ register: { mode: 'inclusive', types: 'Sensor,Room', attrs: 'temperature', url: 'https://gw.example.com:8443/' } }, async (b) => {
      await create(b, { ...SENSOR('urn:ngsi-ld:Sensor:1', 20), humidity: { type: 'Property', value: 40 } });
      await create(b, ROOM('urn:ngsi-ld:Room:1'));
      await create(b, { id: 'urn:ngsi-ld:Lamp:1', type: 'Lamp', temperature: { type: 'Property', value: 50 } });
    });
    await cloud!.waitFor(() => cloud!.registrations.size === 1, 5_000, 'registration');
    const body = csrCalls(cloud!, 'POST')[0]!.body;
    expect(body).toMatchObject({
      id: 'urn:ngsi-ld:ContextSourceRegistration:edgeld:gw.example.com-8443', endpoint: 'https://gw.example.com:8443', mode: 'inclusive',
      operations: ['retrieveOps', 'updateOps', 'createEntity', 'mergeEntity', 'appendAttrs', 'deleteAttrs', 'deleteEntity'],
      // The Room has no temperature: not registered; nor is the Lamp's type.
      information: [{ entities: [{ type: 'Sensor' }], propertyNames: ['temperature'] }],
    });
  });

  it('renews a duration before expiry with renew-before as a duration, and refuses one as long as the lifetime', async () => {
    const { edge: e } = await startRegistering({ register: { lifetime: 'PT2H', renewBefore: 'PT5M' } }, (b) => create(b, SENSOR('urn:ngsi-ld:Sensor:1', 20)));
    await cloud!.waitFor(() => cloud!.registrations.size === 1, 5_000, 'registration');
    expect(csrCalls(cloud!, 'POST')[0]!.body.expiresAt).toBe(iso(T0 + 120 * MINUTE));
    e.clock.advance(116 * MINUTE);
    await cloud!.waitFor(() => csrCalls(cloud!, 'PATCH').length === 1, 5_000, 'renewal');
    expect(csrCalls(cloud!, 'PATCH')[0]!.body).toEqual({ expiresAt: iso(T0 + 236 * MINUTE) });
    await expect(startEdge(cloud!.url, { register: { enabled: true, lifetime: 'PT10M', renewBefore: 'PT10M' } }))
      .rejects.toThrow('federation.register.renew-before');
  });

  it('registers the entities of federation.tenant and names that tenant', async () => {
    await startRegistering({ tenant: 'site1' }, async (b) => {
      expect((await b.request('POST', '/ngsi-ld/v1/entities', { body: ROOM('urn:ngsi-ld:Room:1'), headers: { 'NGSILD-Tenant': 'site1' } })).status).toBe(201);
      await create(b, SENSOR('urn:ngsi-ld:Sensor:default-tenant', 20));
    });
    await cloud!.waitFor(() => cloud!.registrations.size === 1, 5_000, 'registration');
    expect(csrCalls(cloud!, 'POST')[0]!.body).toMatchObject({ tenant: 'site1', information: [{ entities: [{ type: 'Room' }], propertyNames: ['name'] }] });
  });

  it('waits for a first entity before registering', async () => {
    const { edge: e } = await startRegistering();
    await waitUntil(async () => (await statusOf(e)).registration?.id !== '', 5_000, 'first look at the store');
    await create(e, ROOM('urn:ngsi-ld:Room:1'));
    e.clock.advance(10);
    await cloud!.waitFor(() => cloud!.registrations.size === 1, 5_000, 'registration');
    expect(csrCalls(cloud!, 'POST')[0]!.body.information).toEqual([{ entities: [{ type: 'Room' }], propertyNames: ['name'] }]);
  });

  it('forwards no change with federation.register.only: no drain, no journal reader', async () => {
    const { edge: e } = await startRegistering({ register: { only: true } }, (b) => create(b, SENSOR('urn:ngsi-ld:Sensor:1', 20)));
    await cloud!.waitFor(() => cloud!.registrations.size === 1, 5_000, 'registration');
    await create(e, ROOM('urn:ngsi-ld:Room:1'));
    e.clock.advance(10);
    await cloud!.waitFor(() => csrCalls(cloud!, 'PATCH').length === 1, 5_000, 'information update');
    expect(cloud!.requests.filter((r) => !r.path.startsWith(CSR))).toEqual([]);
    expect(e.broker.store.journal.cursor('federation')).toBeUndefined();
    await waitUntil(async () => (await statusOf(e)).registration?.types === 2, 5_000, 'update in the status');
    const status = await statusOf(e);
    expect(status).toMatchObject({ enabled: false, url: cloud!.url, outboxDepth: 0, registration: { registered: true, types: 2 } });
    const metrics = parseExposition((await e.request('GET', '/metrics')).text);
    expect(metrics.value('edgeld_federation_registered')).toBe(1);
    expect(metrics.value('edgeld_federation_outbox_depth')).toBeUndefined();
  });

  it('sends nothing when federation.register is off', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url);
    await create(edge, SENSOR('urn:ngsi-ld:Sensor:1', 20));
    await edge.broker.listen();
    await drained(edge);
    await cloud.waitFor(() => upserts(cloud!).length === 1, 5_000, 'upsert');
    await edge.close();
    edge = undefined;
    expect(csrCalls(cloud)).toEqual([]);
  });

  it('shows no registration in the status or the metrics when off', async () => {
    cloud = await startFakeCloud();
    edge = await startEdge(cloud.url);
    expect((await statusOf(edge)).registration).toBeNull();
    expect(parseExposition((await edge.request('GET', '/metrics')).text).value('edgeld_federation_registered')).toBeUndefined();
  });
});
