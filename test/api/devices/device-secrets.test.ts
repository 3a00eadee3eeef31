// Device secrets: drawn by the broker, shown once (at creation or rotation), never read back, checked
// in constant time; a rotation ends the old secret.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const D = '/edgeld/v1/devices';

let b: TestBroker;
beforeEach(async () => {
  b = await startTestBroker();
});
afterEach(() => b.close());

describe('device secrets', () => {
  it('shows the secret at creation only: 24 random bytes in base64url, in no GET or listing, nor its hash', async () => {
    const res = await b.request('POST', D, { body: { deviceId: 'th-01' } });
    const { secret } = res.json as { secret: string };
    expect(secret).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const other = await b.request('POST', D, { body: { deviceId: 'th-02' } });
    expect(other.json.secret).not.toBe(secret);
    for (const path of [`${D}/th-01`, D, `${D}?count=true`]) {
      const got = await b.request('GET', path);
      expect(got.status).toBe(200);
      expect(got.text).not.toContain(secret);
      expect(got.text).not.toContain('scrypt');
      expect(got.text).not.toMatch(/secret|hash/i);
    }
  });

  it('checkSecret is true for the device secret and false for another, another device, an unknown device', async () => {
    const one = (await b.request('POST', D, { body: { deviceId: 'one' } })).json.secret as string;
    const two = (await b.request('POST', D, { body: { deviceId: 'two' } })).json.secret as string;
    const { devices } = b.broker;
    expect(await devices.checkSecret('', 'one', one)).toBe(true);
    expect(await devices.checkSecret('', 'one', two)).toBe(false);
    expect(await devices.checkSecret('', 'one', `${one}x`)).toBe(false);
    expect(await devices.checkSecret('', 'one', '')).toBe(false);
    expect(await devices.checkSecret('', 'two', two)).toBe(true);
    expect(await devices.checkSecret('', 'three', one)).toBe(false);
    expect(await devices.checkSecret('other-tenant', 'one', one)).toBe(false);
    expect(await devices.checkSecret('', 'a/b', one)).toBe(false);
  });

  it('rotation shows a new secret once (200, no-store); the old one stops working', async () => {
    const old = (await b.request('POST', D, { body: { deviceId: 'rot' } })).json.secret as string;
    const res = await b.request('POST', `${D}/rot/secret`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.json).toEqual({ deviceId: 'rot', secret: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/) });
    const fresh = res.json.secret as string;
    expect(fresh).not.toBe(old);
    expect(await b.broker.devices.checkSecret('', 'rot', old)).toBe(false);
    expect(await b.broker.devices.checkSecret('', 'rot', fresh)).toBe(true);
    expect((await b.request('GET', `${D}/rot`)).text).not.toContain(fresh);
  });

  it('an update or a deletion does not show the secret; a deleted device has none', async () => {
    const secret = (await b.request('POST', D, { body: { deviceId: 'upd' } })).json.secret as string;
    const patched = await b.request('PATCH', `${D}/upd`, { body: { entityType: 'Meter' } });
    expect(patched.status).toBe(204);
    expect(patched.text).toBe('');
    expect(await b.broker.devices.checkSecret('', 'upd', secret)).toBe(true);
    expect((await b.request('DELETE', `${D}/upd`)).status).toBe(204);
    expect(await b.broker.devices.checkSecret('', 'upd', secret)).toBe(false);
  });
});
