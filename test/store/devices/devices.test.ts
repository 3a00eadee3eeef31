// The device repository: records per (tenant, device id), the secret hash kept apart from the record.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AlreadyExistsError } from '../../../src/ngsi/index.js';
import type { DeviceRecord, Store } from '../../../src/store/index.js';
import { memoryStore, T0 } from '../helpers.js';

const device = (deviceId: string, extra: Partial<DeviceRecord> = {}): DeviceRecord => ({
  deviceId, entityId: `urn:ngsi-ld:Device:${deviceId}`, entityType: 'Device', renames: {}, unitCodes: {}, staticAttributes: {}, commands: [],
  createdAt: T0, modifiedAt: T0, ...extra,
});

let store: Store;
beforeEach(() => {
  store = memoryStore();
});
afterEach(() => store.close());

describe('device repository', () => {
  it('round-trips every member; the context only when set', () => {
    const full = device('th-01', {
      renames: { t: 'temperature' }, unitCodes: { temperature: 'CEL' }, staticAttributes: { name: { type: 'Property', value: 'Hall' } },
      context: ['https://example.org/ctx.jsonld', { ex: 'https://example.org/ns#' }],
    });
    store.devices.insert('', full, 'hash-1');
    store.devices.insert('', device('plain'), 'hash-2');
    expect(store.devices.get('', 'th-01')).toEqual(full);
    expect(store.devices.get('', 'plain')).not.toHaveProperty('context');
    expect(store.devices.secretHash('', 'th-01')).toBe('hash-1');
    expect(store.devices.get('', 'none')).toBeUndefined();
    expect(store.devices.secretHash('', 'none')).toBeUndefined();
  });

  it('refuses a device id the tenant has with AlreadyExists, and allows it in another tenant', () => {
    store.devices.insert('', device('d'), 'h');
    expect(() => store.devices.insert('', device('d'), 'h2')).toThrow(AlreadyExistsError);
    expect(store.devices.secretHash('', 'd')).toBe('h');
    store.devices.insert('t2', device('d', { entityType: 'Other' }), 'h3');
    expect(store.devices.get('t2', 'd')?.entityType).toBe('Other');
  });

  it('replace keeps createdAt and the secret hash; setSecretHash and delete report a missing device', () => {
    store.devices.insert('', device('d', { context: 'https://example.org/ctx.jsonld' }), 'h');
    expect(store.devices.replace('', device('d', { entityType: 'Meter', createdAt: T0 + 5, modifiedAt: T0 + 5 }))).toBe(true);
    expect(store.devices.get('', 'd')).toEqual(device('d', { entityType: 'Meter', modifiedAt: T0 + 5 }));
    expect(store.devices.secretHash('', 'd')).toBe('h');
    expect(store.devices.setSecretHash('', 'd', 'h2', T0 + 9)).toBe(true);
    expect(store.devices.secretHash('', 'd')).toBe('h2');
    expect(store.devices.get('', 'd')?.modifiedAt).toBe(T0 + 9);
    expect(store.devices.replace('', device('x'))).toBe(false);
    expect(store.devices.setSecretHash('', 'x', 'h', T0)).toBe(false);
    expect(store.devices.delete('', 'd')).toBe(true);
    expect(store.devices.delete('', 'd')).toBe(false);
  });

  it('lists a tenant in insertion order, paged, counted on request', () => {
    for (const id of ['c', 'a', 'b']) store.devices.insert('', device(id), 'h');
    store.devices.insert('other', device('z'), 'h');
    expect(store.devices.list('', { limit: 2, offset: 0, count: true })).toMatchObject({ items: [{ deviceId: 'c' }, { deviceId: 'a' }], count: 3 });
    expect(store.devices.list('', { limit: 5, offset: 2, count: false })).toEqual({ items: [device('b')] });
    expect(store.devices.list('', { limit: 0, offset: 0, count: true })).toEqual({ items: [], count: 3 });
  });
});
