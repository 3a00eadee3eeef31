// Context source registrations over HTTP (NGSI-LD §5.9, §5.10, §6.8, §6.9): register, retrieve,
// query, update and delete; the mode rules, bad input, tenants, owners and durability.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CORE_CONTEXT_URL } from '../../../src/ngsi/index.js';
import { ADMIN_ROLE, startAuthBroker } from '../../helpers/auth.js';
import { startTestBroker, type TestBroker, type TestResponse } from '../../helpers/broker.js';

const R = '/ngsi-ld/v1/csourceRegistrations';
const E = '/ngsi-ld/v1/entities';
const LD = { 'Content-Type': 'application/ld+json' };

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});
async function broker(opts: Parameters<typeof startTestBroker>[0] = {}): Promise<TestBroker> {
  const b = await startTestBroker(opts);
  open.push(b);
  return b;
}

function reg(id: string, more: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id, type: 'ContextSourceRegistration', endpoint: 'http://source.example:1026',
    information: [{ entities: [{ type: 'Vehicle', id: 'urn:ngsi-ld:Vehicle:A1' }], propertyNames: ['speed'] }], ...more,
  };
}

function expectProblem(res: TestResponse, status: number, type: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.json).toMatchObject({ type: `https://uri.etsi.org/ngsi-ld/errors/${type}` });
  expect(typeof res.json.title).toBe('string');
}

/** The core context as the IoT Agent names it by default (contextBroker.jsonLdContext). */
const AGENT_CONTEXT = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context.jsonld';

/** The body the FIWARE IoT Agent (iotagent-node-lib 4.14) sends to register a device's command. */
const IOT_AGENT_BODY = {
  type: 'ContextSourceRegistration',
  information: [{ entities: [{ type: 'Thermometer', id: 'urn:ngsi-ld:Thermometer:thermo001' }], propertyNames: ['open'] }],
  mode: 'exclusive', operations: ['updateOps'], endpoint: 'http://iot-agent:4041',
  contextSourceInfo: [{ key: 'jsonldContext', value: AGENT_CONTEXT }], '@context': AGENT_CONTEXT,
};

describe('register, retrieve, update and delete a context source registration', () => {
  it('creates with 201 and Location, and shows it back with the defaults of mode and operations [§5.9.2]', async () => {
    const b = await broker();
    const created = await b.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:r1', { csourceProperty1: 'aValue' }) });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('location')).toBe(`${R}/urn:ngsi-ld:ContextSourceRegistration:r1`);
    const got = await b.request('GET', `${R}/urn:ngsi-ld:ContextSourceRegistration:r1`);
    expect(got.status, got.text).toBe(200);
    expect(got.json).toEqual({
      id: 'urn:ngsi-ld:ContextSourceRegistration:r1', type: 'ContextSourceRegistration',
      information: [{ entities: [{ id: 'urn:ngsi-ld:Vehicle:A1', type: 'Vehicle' }], propertyNames: ['speed'] }],
      endpoint: 'http://source.example:1026', mode: 'inclusive', operations: ['federationOps'], csourceProperty1: 'aValue',
    });
    expectProblem(await b.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:r1') }), 409, 'AlreadyExists');
  });

  it('takes the IoT Agent\'s command registration on a path with a trailing slash, in its tenant, and deletes it [§5.9.2, §5.9.4]', async () => {
    const b = await broker();
    const headers = { ...LD, 'NGSILD-Tenant': 'openiot' };
    const created = await b.request('POST', `${R}/`, { body: IOT_AGENT_BODY, headers });
    expect(created.status, created.text).toBe(201);
    const location = created.headers.get('location') ?? '';
    const id = location.slice(location.lastIndexOf('/') + 1);
    expect(id).toMatch(/^urn:ngsi-ld:ContextSourceRegistration:/);
    const got = await b.request('GET', `${R}/${id}`, { headers: { 'NGSILD-Tenant': 'openiot' } });
    expect(got.json).toMatchObject({
      mode: 'exclusive', operations: ['updateOps'], contextSourceInfo: [{ key: 'jsonldContext', value: AGENT_CONTEXT }],
      information: [{ entities: [{ type: 'Thermometer', id: 'urn:ngsi-ld:Thermometer:thermo001' }], propertyNames: ['open'] }],
    });
    // Its lazy attributes come the same way, with retrieveOps.
    const lazy = { ...IOT_AGENT_BODY, information: [{ ...IOT_AGENT_BODY.information[0], propertyNames: ['temperature'] }], operations: ['retrieveOps'] };
    expect((await b.request('POST', `${R}/`, { body: lazy, headers })).status).toBe(201);
    // Another tenant does not see it.
    expectProblem(await b.request('GET', `${R}/${id}`), 404, 'ResourceNotFound');
    expect((await b.request('DELETE', `${R}/${id}`, { headers: { 'NGSILD-Tenant': 'openiot' } })).status).toBe(204);
    expectProblem(await b.request('GET', `${R}/${id}`, { headers: { 'NGSILD-Tenant': 'openiot' } }), 404, 'ResourceNotFound');
    expectProblem(await b.request('DELETE', `${R}/${id}`, { headers: { 'NGSILD-Tenant': 'openiot' } }), 404, 'ResourceNotFound');
  });

  it('merges the members of a PATCH and removes those set to null [§5.9.3]', async () => {
    const b = await broker();
    const id = 'urn:ngsi-ld:ContextSourceRegistration:p1';
    await b.request('POST', R, { body: reg(id, { expiresAt: '2030-01-01T00:00:00Z', note: 'x' }) });
    // expiresAt is shown as written.
    expect((await b.request('GET', `${R}/${id}`)).json).toMatchObject({ expiresAt: '2030-01-01T00:00:00Z', note: 'x' });
    const patched = await b.request('PATCH', `${R}/${id}`, { body: { endpoint: 'http://other.example:1026', expiresAt: null, note: null, extra: 2 } });
    expect(patched.status, patched.text).toBe(204);
    const got = (await b.request('GET', `${R}/${id}`)).json;
    expect(got).toMatchObject({ endpoint: 'http://other.example:1026', extra: 2, information: reg(id)['information'] });
    expect(got.expiresAt).toBeUndefined();
    expect(got.note).toBeUndefined();
    expectProblem(await b.request('PATCH', `${R}/${id}`, { body: { endpoint: null } }), 400, 'BadRequestData');
    expectProblem(await b.request('PATCH', `${R}/${id}`, { body: { type: 'Subscription' } }), 400, 'BadRequestData');
    expectProblem(await b.request('PATCH', `${R}/urn:ngsi-ld:ContextSourceRegistration:none`, { body: { endpoint: 'http://a.example' } }), 404, 'ResourceNotFound');
    expectProblem(await b.request('PATCH', `${R}/not-a-uri`, { body: { endpoint: 'http://a.example' } }), 400, 'BadRequestData');
  });

  it('compacts names with the context of the request that reads it [§5.10.1]', async () => {
    const b = await broker();
    const id = 'urn:ngsi-ld:ContextSourceRegistration:c1';
    const ctx = { '@context': [{ Vehicle: 'https://example.org/Vehicle', speed: 'https://example.org/speed' }, CORE_CONTEXT_URL] };
    expect((await b.request('POST', R, { body: { ...reg(id), ...ctx }, headers: LD })).status).toBe(201);
    const plain = (await b.request('GET', `${R}/${id}`)).json;
    expect(plain.information[0]).toEqual({ entities: [{ id: 'urn:ngsi-ld:Vehicle:A1', type: 'https://example.org/Vehicle' }], propertyNames: ['https://example.org/speed'] });
  });
});

describe('bad registrations', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['no information', { information: undefined }],
    ['empty information', { information: [] }],
    ['a RegistrationInfo with nothing in it', { information: [{}] }],
    ['an EntityInfo without type', { information: [{ entities: [{ id: 'urn:x:1' }] }] }],
    ['an EntityInfo id that is not a URI', { information: [{ entities: [{ type: 'T', id: 'nope' }] }] }],
    ['information that is not an array', { information: { entities: [] } }],
    ['an unknown mode', { mode: 'sometimes' }],
    ['an unknown operation', { operations: ['fly'] }],
    ['a non-http endpoint', { endpoint: 'mqtt://broker.example:1883' }],
    ['an endpoint that is not a URI', { endpoint: 'somewhere' }],
    ['expiresAt in the past', { expiresAt: '2020-01-01T00:00:00Z' }],
    ['a numeric contextSourceInfo value', { contextSourceInfo: [{ key: 'X', value: 1 }] }],
    ['a zero cooldown', { management: { cooldown: 0 } }],
    ['a bad cacheDuration', { management: { cacheDuration: 'soon' } }],
    ['an invalid location', { location: { type: 'Point', coordinates: 'here' } }],
    ['an exclusive registration without attributes', { mode: 'exclusive', information: [{ entities: [{ type: 'T', id: 'urn:x:1' }] }] }],
    ['an exclusive registration of a whole type', { mode: 'exclusive', information: [{ entities: [{ type: 'T' }], propertyNames: ['p'] }] }],
    ['an exclusive registration with an idPattern', { mode: 'exclusive', information: [{ entities: [{ type: 'T', idPattern: '.*' }], propertyNames: ['p'] }] }],
    ['an auxiliary registration that writes', { mode: 'auxiliary', operations: ['updateEntity'] }],
    ['a read-only member', { createdAt: '2026-01-01T00:00:00Z' }],
    ['another type', { type: 'Subscription' }],
  ];
  it.each(cases)('refuses %s with 400 BadRequestData [§5.9.2]', async (_what, change) => {
    const b = await broker();
    const body = { ...reg('urn:ngsi-ld:ContextSourceRegistration:bad'), ...change };
    const res = await b.request('POST', R, { body: JSON.parse(JSON.stringify(body)) as unknown });
    expectProblem(res, 400, 'BadRequestData');
    expectProblem(await b.request('GET', `${R}/urn:ngsi-ld:ContextSourceRegistration:bad`), 404, 'ResourceNotFound');
  });

  it('refuses an endpoint that is this broker itself, by its public URL or its port on loopback', async () => {
    const b = await broker({ config: { server: { publicUrl: 'http://gateway.local:1026' } } });
    expectProblem(await b.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:s1', { endpoint: 'http://gateway.local:1026/' }) }), 400, 'BadRequestData');
    const port = await b.broker.listen();
    for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
      const res = await b.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:s2', { endpoint: `http://${host}:${port}` }) });
      expectProblem(res, 400, 'BadRequestData');
      expect(res.json.detail).toContain('this broker itself');
    }
    // Another port on loopback is another process.
    expect((await b.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:s3', { endpoint: `http://127.0.0.1:${port + 1}` }) })).status).toBe(201);
  });
});

describe('the mode rules between registrations and with local data [§4.3.6.3, §5.9.2.4]', () => {
  const exclusive = (id: string): Record<string, unknown> => reg(id, { mode: 'exclusive' });

  it('refuses an exclusive or redirect registration over an exclusive one with 409 Conflict', async () => {
    const b = await broker();
    expect((await b.request('POST', R, { body: exclusive('urn:ngsi-ld:ContextSourceRegistration:x1') })).status).toBe(201);
    expectProblem(await b.request('POST', R, { body: exclusive('urn:ngsi-ld:ContextSourceRegistration:x2') }), 409, 'Conflict');
    expectProblem(await b.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:x3', { mode: 'redirect' }) }), 409, 'Conflict');
    // An inclusive one and an exclusive one for another attribute may be added.
    expect((await b.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:x4') })).status).toBe(201);
    const other = reg('urn:ngsi-ld:ContextSourceRegistration:x5', { mode: 'exclusive', information: [{ entities: [{ type: 'Vehicle', id: 'urn:ngsi-ld:Vehicle:A1' }], propertyNames: ['fuel'] }] });
    expect((await b.request('POST', R, { body: other })).status).toBe(201);
    // Moving the second exclusive one onto speed is refused too.
    expectProblem(await b.request('PATCH', `${R}/urn:ngsi-ld:ContextSourceRegistration:x5`, { body: { information: reg('')['information'] } }), 409, 'Conflict');
    // Once the first is gone, the place is free.
    expect((await b.request('DELETE', `${R}/urn:ngsi-ld:ContextSourceRegistration:x1`)).status).toBe(204);
    expect((await b.request('POST', R, { body: exclusive('urn:ngsi-ld:ContextSourceRegistration:x2') })).status).toBe(201);
  });

  it('lets redirect registrations overlap each other', async () => {
    const b = await broker();
    for (const n of [1, 2]) expect((await b.request('POST', R, { body: reg(`urn:ngsi-ld:ContextSourceRegistration:d${n}`, { mode: 'redirect' }) })).status).toBe(201);
  });

  it('refuses a redirect registration over a local entity and an exclusive one over a local attribute', async () => {
    const b = await broker();
    expect((await b.request('POST', E, { body: { id: 'urn:ngsi-ld:Vehicle:A1', type: 'Vehicle', speed: { type: 'Property', value: 3 } } })).status).toBe(201);
    expectProblem(await b.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:l1', { mode: 'redirect' }) }), 409, 'Conflict');
    expectProblem(await b.request('POST', R, { body: exclusive('urn:ngsi-ld:ContextSourceRegistration:l2') }), 409, 'Conflict');
    const fuel = reg('urn:ngsi-ld:ContextSourceRegistration:l3', { mode: 'exclusive', information: [{ entities: [{ type: 'Vehicle', id: 'urn:ngsi-ld:Vehicle:A1' }], propertyNames: ['fuel'] }] });
    expect((await b.request('POST', R, { body: fuel })).status).toBe(201);
  });
});

describe('query context source registrations [§5.10.2]', () => {
  async function seeded(): Promise<TestBroker> {
    const b = await broker();
    const bodies = [
      reg('urn:ngsi-ld:ContextSourceRegistration:q1', { csourceProperty1: 'aValue', scope: '/Madrid/Centro', location: { type: 'Point', coordinates: [8.68, 49.41] } }),
      reg('urn:ngsi-ld:ContextSourceRegistration:q2', {
        endpoint: 'http://b.example', information: [{ entities: [{ type: 'Building', idPattern: '.*downtown$' }], relationshipNames: ['locatedAt'] }],
      }),
      reg('urn:ngsi-ld:ContextSourceRegistration:q3', { information: [{ propertyNames: ['name'] }], expiresAt: '2026-05-01T10:00:10Z' }),
    ];
    for (const body of bodies) expect((await b.request('POST', R, { body })).status).toBe(201);
    return b;
  }
  const ids = (res: TestResponse): string[] => {
    expect(res.status, res.text).toBe(200);
    return (res.json as Array<{ id: string }>).map((r) => r.id.split(':').pop() ?? '');
  };

  it('selects by type, id, idPattern and attrs; an info without entities matches every entity', async () => {
    const b = await seeded();
    expect(ids(await b.request('GET', `${R}?type=Vehicle`))).toEqual(['q1', 'q3']);
    expect(ids(await b.request('GET', `${R}?type=Building,Vehicle`))).toEqual(['q1', 'q2', 'q3']);
    expect(ids(await b.request('GET', `${R}?id=urn:ngsi-ld:Building:parkdowntown`))).toEqual(['q1', 'q2', 'q3'].filter((x) => x !== 'q1'));
    expect(ids(await b.request('GET', `${R}?type=Building&idPattern=.*downtown$`))).toEqual(['q2', 'q3']);
    expect(ids(await b.request('GET', `${R}?attrs=locatedAt`))).toEqual(['q2']);
    expect(ids(await b.request('GET', `${R}?attrs=name`))).toEqual(['q3']);
  });

  it('filters with q and csf on registration properties, scopeQ and a geo-query', async () => {
    const b = await seeded();
    expect(ids(await b.request('GET', `${R}?q=${encodeURIComponent('csourceProperty1=="aValue"')}`))).toEqual(['q1']);
    expect(ids(await b.request('GET', `${R}?type=Building,Vehicle&csf=${encodeURIComponent('endpoint=="http://b.example"')}`))).toEqual(['q2']);
    expect(ids(await b.request('GET', `${R}?type=Vehicle&scopeQ=/Madrid/%23`))).toEqual(['q1']);
    const geo = `georel=${encodeURIComponent('near;maxDistance==2000')}&geometry=Point&coordinates=${encodeURIComponent('[8.68,49.41]')}`;
    expect(ids(await b.request('GET', `${R}?type=Vehicle&${geo}`))).toEqual(['q1']);
  });

  it('pages with limit, offset and count, and leaves expired registrations out', async () => {
    const b = await seeded();
    const res = await b.request('GET', `${R}?type=Building,Vehicle&limit=1&offset=1&count=true`);
    expect(ids(res)).toEqual(['q2']);
    expect(res.headers.get('ngsild-results-count')).toBe('3');
    expect(res.headers.get('link')).toContain('rel="next"');
    b.clock.advance(20_000);
    expect(ids(await b.request('GET', `${R}?type=Building,Vehicle`))).toEqual(['q1', 'q2']);
    expectProblem(await b.request('GET', `${R}/urn:ngsi-ld:ContextSourceRegistration:q3`), 404, 'ResourceNotFound');
  });

  it('shows createdAt and modifiedAt with options=sysAttrs', async () => {
    const b = await seeded();
    const got = (await b.request('GET', `${R}/urn:ngsi-ld:ContextSourceRegistration:q1?options=sysAttrs`)).json;
    expect(got).toMatchObject({ createdAt: '2026-05-01T10:00:00.000Z', modifiedAt: '2026-05-01T10:00:00.000Z' });
    expect((await b.request('GET', `${R}/urn:ngsi-ld:ContextSourceRegistration:q1`)).json.createdAt).toBeUndefined();
    expectProblem(await b.request('GET', `${R}/urn:ngsi-ld:ContextSourceRegistration:q1?options=keyValues`), 400, 'InvalidRequest');
  });

  it('matches a temporal query against observationInterval, or managementInterval with timeproperty createdAt or modifiedAt', async () => {
    const b = await broker();
    const interval = { startAt: '2020-08-01T22:07:00Z', endAt: '2021-08-01T21:07:00Z' };
    await b.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:t1', { observationInterval: interval }) });
    await b.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:t2', { managementInterval: interval }) });
    const at = (rel: string, extra = ''): string => `${R}?type=Vehicle&timerel=${rel}&timeAt=2021-08-01T22:00:00Z${extra}`;
    expect(ids(await b.request('GET', at('before')))).toEqual(['t1']);
    expect(ids(await b.request('GET', at('before', '&timeproperty=modifiedAt')))).toEqual(['t2']);
    expect(ids(await b.request('GET', at('after')))).toEqual([]);
    expect(ids(await b.request('GET', `${R}?timerel=between&timeAt=2019-01-01T00:00:00Z&endTimeAt=2020-09-01T00:00:00Z`))).toEqual(['t1']);
    expectProblem(await b.request('GET', `${R}?timerel=before`), 400, 'BadRequestData');
    expectProblem(await b.request('GET', `${R}?type=Vehicle&timeAt=2021-08-01T22:00:00Z`), 400, 'BadRequestData');
  });

  it('answers 400 to a query without selector, a bad id, a bad q, a lone georel and an unknown parameter', async () => {
    const b = await seeded();
    expectProblem(await b.request('GET', R), 400, 'BadRequestData');
    expectProblem(await b.request('GET', `${R}?id=invalidUri`), 400, 'BadRequestData');
    expectProblem(await b.request('GET', `${R}?q=(invalidQuery`), 400, 'BadRequestData');
    expectProblem(await b.request('GET', `${R}?georel=within`), 400, 'BadRequestData');
    expectProblem(await b.request('GET', `${R}?type=Vehicle&color=red`), 400, 'InvalidRequest');
  });
});

describe('owners of registrations with authentication on', () => {
  it('lets only an administrator create, change and delete a registration (it reroutes everyone\'s requests); others get 403 and do not list it', async () => {
    const b = await startAuthBroker();
    open.push(b);
    const id = 'urn:ngsi-ld:ContextSourceRegistration:o1';
    const admin = { claims: { roles: [ADMIN_ROLE] } };
    expectProblem(await b.as('alice', 'POST', R, { body: reg(id) }), 403, 'AccessDenied');
    expect((await b.as('root', 'POST', R, { body: reg(id), ...admin })).status).toBe(201);
    expectProblem(await b.as('bob', 'GET', `${R}/${id}`), 403, 'AccessDenied');
    expectProblem(await b.as('bob', 'PATCH', `${R}/${id}`, { body: { description: 'mine now' } }), 403, 'AccessDenied');
    expectProblem(await b.as('bob', 'DELETE', `${R}/${id}`), 403, 'AccessDenied');
    expect((await b.as('bob', 'GET', `${R}?type=Vehicle`)).json).toEqual([]);
    expect((await b.as('root', 'GET', `${R}?type=Vehicle`, admin)).json).toHaveLength(1);
    expect((await b.as('root', 'PATCH', `${R}/${id}`, { body: { description: 'pumps' }, ...admin })).status).toBe(204);
    expect((await b.as('root', 'GET', `${R}/${id}`, admin)).json).toMatchObject({ description: 'pumps' });
    expect((await b.as('root', 'DELETE', `${R}/${id}`, admin)).status).toBe(204);
    expect((await b.as(undefined, 'GET', `${R}?type=Vehicle`)).status).toBe(401);
  });
});

describe('durability', () => {
  it('keeps registrations and their match index across a reopen of the database file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgeld-csr-'));
    const dbPath = join(dir, 'edgeld.db');
    try {
      const first = await startTestBroker({ dbPath });
      expect((await first.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:k1', { mode: 'exclusive' }) })).status).toBe(201);
      await first.close();
      const second = await startTestBroker({ dbPath });
      open.push(second);
      expect((await second.request('GET', `${R}?attrs=speed`)).json).toMatchObject([{ id: 'urn:ngsi-ld:ContextSourceRegistration:k1', mode: 'exclusive' }]);
      expectProblem(await second.request('POST', R, { body: reg('urn:ngsi-ld:ContextSourceRegistration:k2', { mode: 'exclusive' }) }), 409, 'Conflict');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
