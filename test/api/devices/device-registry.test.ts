// The device registry through the HTTP API (/edgeld/v1/devices) and what ingestion reads of it:
// round trip, defaults, 409, paging, tenants, persistence, and `resolve`.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { startTestBroker, tempDir, T0, type TestBroker } from '../../helpers/broker.js';

const D = '/edgeld/v1/devices';
const CTX = { ex: 'https://example.org/ns#', temperature: 'ex:temperature', Thermometer: 'ex:Thermometer' };

const full = {
  deviceId: 'th-01',
  entityId: 'urn:ngsi-ld:Thermometer:hall',
  entityType: 'Thermometer',
  renames: { t: 'temperature', h: 'humidity' },
  unitCodes: { temperature: 'CEL', humidity: 'P1' },
  staticAttributes: {
    name: { type: 'Property', value: 'Hall thermometer' },
    isPartOf: { type: 'Relationship', object: 'urn:ngsi-ld:Building:1' },
  },
  context: CTX,
};

let b: TestBroker;
beforeEach(async () => {
  b = await startTestBroker();
});
afterEach(() => b.close());

describe('device registry round trip', () => {
  it('creates a device (201, Location, id, entity and secret), reads it back without the secret, lists it', async () => {
    const res = await b.request('POST', D, { body: full });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${D}/th-01`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.json).toEqual({ deviceId: 'th-01', entityId: 'urn:ngsi-ld:Thermometer:hall', entityType: 'Thermometer', secret: expect.any(String) });

    const got = await b.request('GET', `${D}/th-01`);
    expect(got.status).toBe(200);
    const created = new Date(T0).toISOString();
    expect(got.json).toEqual({ ...full, commands: [], createdAt: created, modifiedAt: created });

    const list = await b.request('GET', D);
    expect(list.status).toBe(200);
    expect(list.json).toEqual([got.json]);
  });

  it('fills in the defaults: the configured entity type and urn:ngsi-ld:<type>:<deviceId>', async () => {
    const res = await b.request('POST', D, { body: { deviceId: 'plain-1' } });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ entityId: 'urn:ngsi-ld:Device:plain-1', entityType: 'Device' });
    const got = await b.request('GET', `${D}/plain-1`);
    expect(got.json).toMatchObject({ renames: {}, unitCodes: {}, staticAttributes: {} });
    expect(got.json).not.toHaveProperty('context');

    const typed = await b.request('POST', D, { body: { deviceId: 'plain-2', entityType: 'Meter' } });
    expect(typed.json).toMatchObject({ entityId: 'urn:ngsi-ld:Meter:plain-2', entityType: 'Meter' });
  });

  it('takes the default entity type from mqtt.default-entity-type', async () => {
    const other = await startTestBroker({ config: { mqtt: { port: 0, host: '127.0.0.1', defaultEntityType: 'Sensor' } } });
    try {
      const res = await other.request('POST', D, { body: { deviceId: 's1' } });
      expect(res.json).toMatchObject({ entityId: 'urn:ngsi-ld:Sensor:s1', entityType: 'Sensor' });
    } finally {
      await other.close();
    }
  });

  it('answers 409 AlreadyExists for a device id the tenant has', async () => {
    expect((await b.request('POST', D, { body: { deviceId: 'dup' } })).status).toBe(201);
    const again = await b.request('POST', D, { body: { deviceId: 'dup', entityType: 'Other' } });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ type: 'https://uri.etsi.org/ngsi-ld/errors/AlreadyExists', detail: expect.stringContaining('dup') });
    expect((await b.request('GET', `${D}/dup`)).json).toMatchObject({ entityType: 'Device' });
  });

  it('PATCH replaces the members given (204) and keeps the others; context null goes back to the core context', async () => {
    await b.request('POST', D, { body: full });
    b.clock.advance(1000);
    const res = await b.request('PATCH', `${D}/th-01`, { body: { renames: { temp: 'temperature' }, entityType: 'ex:Thermo' } });
    expect(res.status).toBe(204);
    const got = await b.request('GET', `${D}/th-01`);
    expect(got.json).toMatchObject({
      renames: { temp: 'temperature' }, entityType: 'ex:Thermo', entityId: full.entityId, unitCodes: full.unitCodes, context: CTX,
      modifiedAt: new Date(T0 + 1000).toISOString(), createdAt: new Date(T0).toISOString(),
    });
    expect((await b.request('PATCH', `${D}/th-01`, { body: { context: null, entityType: 'Thermometer' } })).status).toBe(204);
    expect((await b.request('GET', `${D}/th-01`)).json).not.toHaveProperty('context');
  });

  it('DELETE answers 204, then the device is gone (404 on GET, PATCH, DELETE and secret rotation)', async () => {
    await b.request('POST', D, { body: { deviceId: 'gone' } });
    expect((await b.request('DELETE', `${D}/gone`)).status).toBe(204);
    for (const [method, path, body] of [
      ['GET', `${D}/gone`], ['PATCH', `${D}/gone`, { entityType: 'X' }], ['DELETE', `${D}/gone`], ['POST', `${D}/gone/secret`],
    ] as const) {
      const res = await b.request(method, path, body === undefined ? {} : { body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound');
    }
  });

  it('lists in registration order with limit, offset, count (NGSILD-Results-Count) and page links', async () => {
    for (const id of ['c', 'a', 'b']) await b.request('POST', D, { body: { deviceId: id } });
    const first = await b.request('GET', `${D}?limit=2&count=true`);
    expect(first.status).toBe(200);
    expect(first.json.map((d: { deviceId: string }) => d.deviceId)).toEqual(['c', 'a']);
    expect(first.headers.get('ngsild-results-count')).toBe('3');
    expect(first.headers.get('link')).toContain('rel="next"');
    const second = await b.request('GET', `${D}?limit=2&offset=2`);
    expect(second.json.map((d: { deviceId: string }) => d.deviceId)).toEqual(['b']);
    expect(second.headers.get('ngsild-results-count')).toBeNull();
    const onlyCount = await b.request('GET', `${D}?limit=0&count=true`);
    expect(onlyCount.json).toEqual([]);
    expect(onlyCount.headers.get('ngsild-results-count')).toBe('3');
  });
});

describe('device registry tenants', () => {
  it('keeps the devices of each tenant apart (NGSILD-Tenant), the same id in two tenants included', async () => {
    const A = { 'NGSILD-Tenant': 'plant-a' };
    expect((await b.request('POST', D, { body: { deviceId: 'x1', entityType: 'A' }, headers: A })).status).toBe(201);
    expect((await b.request('GET', `${D}/x1`)).status).toBe(404);
    expect((await b.request('GET', D)).json).toEqual([]);
    expect((await b.request('POST', D, { body: { deviceId: 'x1', entityType: 'B' } })).status).toBe(201);
    const inA = await b.request('GET', `${D}/x1`, { headers: A });
    expect(inA.json.entityType).toBe('A');
    expect(inA.headers.get('ngsild-tenant')).toBe('plant-a');
    expect(b.broker.devices.resolve('plant-a', 'x1')?.entityType).toBe('A');
    expect(b.broker.devices.resolve('', 'x1')?.entityType).toBe('B');
    expect(b.broker.devices.resolve('plant-b', 'x1')).toBeUndefined();
    expect((await b.request('DELETE', `${D}/x1`, { headers: A })).status).toBe(204);
    expect((await b.request('GET', `${D}/x1`)).status).toBe(200);
  });

  it('refuses a bad NGSILD-Tenant header as /ngsi-ld does', async () => {
    const res = await b.request('GET', D, { headers: { 'NGSILD-Tenant': 'no/slash' } });
    expect(res.status).toBe(400);
  });
});

describe('device resolution for ingestion', () => {
  it('returns the mapping of a registered device, undefined for an unknown or invalid id', async () => {
    await b.request('POST', D, { body: full });
    const m = b.broker.devices.resolve('', 'th-01');
    expect(m).toEqual({
      entityId: full.entityId, entityType: full.entityType, renames: full.renames, unitCodes: full.unitCodes,
      staticAttributes: full.staticAttributes, context: CTX,
    });
    expect(Object.isFrozen(m?.renames)).toBe(true);
    expect(b.broker.devices.resolve('', 'th-02')).toBeUndefined();
    expect(b.broker.devices.resolve('', 'a/b')).toBeUndefined();
    const plain = await b.request('POST', D, { body: { deviceId: 'p' } });
    expect(plain.status).toBe(201);
    expect(b.broker.devices.resolve('', 'p')).toEqual({ entityId: 'urn:ngsi-ld:Device:p', entityType: 'Device', renames: {}, unitCodes: {}, staticAttributes: {} });
  });

  it('follows every write: a device registered after a miss, an update, a deletion', async () => {
    expect(b.broker.devices.resolve('', 'late')).toBeUndefined();
    await b.request('POST', D, { body: { deviceId: 'late' } });
    expect(b.broker.devices.resolve('', 'late')?.entityType).toBe('Device');
    await b.request('PATCH', `${D}/late`, { body: { entityId: 'urn:ngsi-ld:Device:moved', renames: { t: 'temperature' } } });
    expect(b.broker.devices.resolve('', 'late')).toMatchObject({ entityId: 'urn:ngsi-ld:Device:moved', renames: { t: 'temperature' } });
    await b.request('DELETE', `${D}/late`);
    expect(b.broker.devices.resolve('', 'late')).toBeUndefined();
  });
});

describe('device registry persistence', () => {
  it('keeps devices and secrets across a restart on a file database', async () => {
    const tmp = tempDir();
    const dbPath = join(tmp.path, 'edgeld.db');
    try {
      const first = await startTestBroker({ dbPath });
      const created = await first.request('POST', D, { body: full });
      expect(created.status).toBe(201);
      await first.close();

      const second = await startTestBroker({ dbPath });
      try {
        const got = await second.request('GET', `${D}/th-01`);
        expect(got.status).toBe(200);
        expect(got.json).toMatchObject({ ...full });
        expect(second.broker.devices.resolve('', 'th-01')?.entityId).toBe(full.entityId);
        expect(await second.broker.devices.checkSecret('', 'th-01', created.json.secret)).toBe(true);
      } finally {
        await second.close();
      }
    } finally {
      tmp.remove();
    }
  });
});
