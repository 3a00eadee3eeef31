// End-to-end registration of one edgeld with another (real processes on loopback): gateway B, whose
// upstream is A, registers itself with A as a context source of what it holds; A lists the
// registration with B's URL as endpoint; B's SIGTERM removes it. Two gateways registered with one
// upstream are both listed; a gateway killed and restarted takes its registration over.

import { describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/fake-cloud.js';
import { call, edgeldProcesses, registeringWith } from '../helpers/processes.js';

const nodes = edgeldProcesses('edgeld-e2e-registration-');

const SENSOR = { id: 'urn:ngsi-ld:Sensor:b1', type: 'Sensor', temperature: { type: 'Property', value: 21.5 }, isIn: { type: 'Relationship', object: 'urn:ngsi-ld:Room:b' } };

describe('an edgeld registered with another (processes)', () => {
  it('is listed by the upstream with its URL as endpoint, updated with new types, and removed on SIGTERM', async () => {
    const [a, b] = await nodes.start({}, ([up]) => registeringWith(up!, { FEDERATION_REGISTER_ID: 'gateway-b' }));
    const id = 'urn:ngsi-ld:ContextSourceRegistration:edgeld:gateway-b';
    expect((await call(b!.base, 'POST', '/ngsi-ld/v1/entities', SENSOR)).status).toBe(201);

    const listed = async (type: string): Promise<any[]> => { // eslint-disable-line -- test convenience
      const res = await call(a!.base, 'GET', `/ngsi-ld/v1/csourceRegistrations?type=${type}`);
      expect(res.status).toBe(200);
      return res.json;
    };
    await waitUntil(async () => (await listed('Sensor')).length === 1, 10_000, 'B registered with A');
    const [csr] = await listed('Sensor');
    expect(csr).toMatchObject({
      id, type: 'ContextSourceRegistration', endpoint: b!.base, mode: 'auxiliary', operations: ['retrieveOps'],
      information: [{ entities: [{ type: 'Sensor' }], propertyNames: ['temperature'], relationshipNames: ['isIn'] }],
    });
    expect(Date.parse(csr.expiresAt)).toBeGreaterThan(Date.now() + 50 * 60_000);
    // The entity itself stays on B: A holds none of its own, and answers it from B through the registration.
    expect((await call(a!.base, 'GET', `/ngsi-ld/v1/entities/${SENSOR.id}?local=true`)).status).toBe(404);
    const remote = await call(a!.base, 'GET', `/ngsi-ld/v1/entities/${SENSOR.id}`);
    expect(remote.status).toBe(200);
    expect(remote.json).toMatchObject({ id: SENSOR.id, type: 'Sensor' });
    const listing = await call(a!.base, 'GET', '/ngsi-ld/v1/entities?type=Sensor');
    expect(listing.json.map((e: { id: string }) => e.id)).toEqual([SENSOR.id]);

    expect((await call(b!.base, 'POST', '/ngsi-ld/v1/entities', { id: 'urn:ngsi-ld:Room:b', type: 'Room', name: { type: 'Property', value: 'lab' } })).status).toBe(201);
    await waitUntil(async () => (await listed('Room')).length === 1, 10_000, 'the Room type registered');
    const status = await call(b!.base, 'GET', '/ngsi-ld/v1/federation/status');
    expect(status.json.registration).toMatchObject({ id, endpoint: b!.base, registered: true, types: 2, lastError: null });

    expect(await nodes.stop(b!)).toBe(0);
    expect(await listed('Sensor')).toEqual([]);
    expect((await call(a!.base, 'GET', `/ngsi-ld/v1/csourceRegistrations/${encodeURIComponent(id)}`)).status).toBe(404);
  });

  it('is taken over by the gateway restarted after a kill -9, with its new endpoint', async () => {
    const [a, b] = await nodes.start({}, ([up]) => registeringWith(up!, { FEDERATION_REGISTER_ID: 'gateway-b' }));
    expect((await call(b!.base, 'POST', '/ngsi-ld/v1/entities', SENSOR)).status).toBe(201);
    const held = async (): Promise<{ endpoint: string; expiresAt: string } | undefined> => {
      const res = await call(a!.base, 'GET', `/ngsi-ld/v1/csourceRegistrations/${encodeURIComponent('urn:ngsi-ld:ContextSourceRegistration:edgeld:gateway-b')}`);
      return res.status === 200 ? res.json : undefined;
    };
    await waitUntil(async () => (await held())?.endpoint === b!.base, 10_000, 'B registered with A');
    const first = await held();
    await nodes.kill(b!);
    // Not removed: it stays until it expires, or until the gateway comes back.
    expect(await held()).toEqual(first);
    const [again] = await nodes.start(registeringWith(a!, { FEDERATION_REGISTER_ID: 'gateway-b', STORAGE_DIR: nodes.dataDir(b!) }));
    // The creation finds it (409) and updates it whole: endpoint (its new port) and expiresAt.
    await waitUntil(async () => {
      const now = await held();
      return now?.endpoint === again!.base && now.expiresAt !== first!.expiresAt;
    }, 10_000, 'the registration taken over');
    expect((await call(a!.base, 'GET', '/ngsi-ld/v1/csourceRegistrations?type=Sensor')).json).toHaveLength(1);
  });

  it('lists two gateways registered with one upstream, and keeps the other when one stops', async () => {
    const [a, b, c] = await nodes.start({}, ([up]) => registeringWith(up!), ([up]) => registeringWith(up!));
    for (const [gw, n] of [[b!, 1], [c!, 2]] as const) {
      expect((await call(gw.base, 'POST', '/ngsi-ld/v1/entities', { ...SENSOR, id: `urn:ngsi-ld:Sensor:gw${n}` })).status).toBe(201);
    }
    const endpoints = async (): Promise<string[]> => {
      const res = await call(a!.base, 'GET', '/ngsi-ld/v1/csourceRegistrations?type=Sensor&attrs=temperature');
      return (res.json as Array<{ endpoint: string }>).map((r) => r.endpoint).sort();
    };
    await waitUntil(async () => (await endpoints()).length === 2, 10_000, 'both gateways registered');
    // Default ids: the host and port of each endpoint.
    expect(await endpoints()).toEqual([b!.base, c!.base].sort());
    const ids = (await call(a!.base, 'GET', '/ngsi-ld/v1/csourceRegistrations?type=Sensor')).json.map((r: { id: string }) => r.id).sort();
    expect(ids).toEqual([b!, c!].map((p) => `urn:ngsi-ld:ContextSourceRegistration:edgeld:127.0.0.1-${p.port}`).sort());
    expect(await nodes.stop(b!)).toBe(0);
    expect(await endpoints()).toEqual([c!.base]);
  });
});
