// Who may manage devices with authentication on: a token is needed (401 without), and only a holder
// of the admin role may register, read, list, update, delete or rotate (403 for others). Every
// refusal stands beside the same request made by an administrator.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../../helpers/auth.js';

const D = '/edgeld/v1/devices';
const ADMIN = { sub: 'urn:ngsi-ld:User:root', claims: { roles: [ADMIN_ROLE] } };
const ALICE = { sub: 'alice', claims: { roles: ['operator'], groups: ['operators'] } };

let b: AuthBroker;
beforeAll(async () => {
  b = await startAuthBroker();
});
afterAll(() => b.close());

type Call = [method: string, path: string, body?: unknown];
/** Every management call: a registration of `created`, then the others on the registered device `known`. */
const callsOn = (created: string, known: string): Call[] => [
  ['POST', D, { deviceId: created }],
  ['GET', D],
  ['GET', `${D}/${known}`],
  ['PATCH', `${D}/${known}`, { entityType: 'Meter' }],
  ['POST', `${D}/${known}/secret`],
  ['DELETE', `${D}/${known}`],
];

const call = (who: { sub: string; claims: { roles: string[] } } | undefined, [method, path, body]: Call, headers: Record<string, string> = {}) =>
  b.as(who?.sub, method, path, { ...(body !== undefined ? { body } : {}), headers, ...(who ? { claims: who.claims } : {}) });

describe('device registry with authentication on', () => {
  it('answers 401 without a token and 403 AccessDenied to a subject without the admin role, writing nothing', async () => {
    expect((await call(ADMIN, ['POST', D, { deviceId: 'known' }])).status).toBe(201);
    for (const c of callsOn('by-someone', 'known')) {
      expect((await call(undefined, c)).status, `${c[0]} ${c[1]} anonymous`).toBe(401);
      const res = await call(ALICE, c);
      expect(res.status, `${c[0]} ${c[1]} as alice`).toBe(403);
      expect(res.json).toMatchObject({ type: 'https://uri.etsi.org/ngsi-ld/errors/AccessDenied', detail: 'Managing devices needs the admin role' });
    }
    // A bad body from a non-administrator is refused for who asks, not for what it sends.
    expect((await call(ALICE, ['POST', D, { deviceId: 'a/b' }])).status).toBe(403);
    const known = await call(ADMIN, ['GET', `${D}/known`]);
    expect(known.json).toMatchObject({ entityType: 'Device' });
    expect((await call(ADMIN, ['GET', `${D}/by-someone`])).status).toBe(404);
  });

  it('lets an administrator do each of them (positive control)', async () => {
    expect((await call(ADMIN, ['POST', D, { deviceId: 'admins' }])).status).toBe(201);
    const expected = [201, 200, 200, 204, 200, 204];
    for (const [i, c] of callsOn('by-admin', 'admins').entries()) {
      expect((await call(ADMIN, c)).status, `${c[0]} ${c[1]} as admin`).toBe(expected[i]);
    }
  });

  it('applies NGSILD-Tenant with authentication as /ngsi-ld does', async () => {
    const A = { 'NGSILD-Tenant': 'plant-a' };
    expect((await call(ADMIN, ['POST', D, { deviceId: 'tenant-dev' }], A)).status).toBe(201);
    expect((await call(ADMIN, ['GET', `${D}/tenant-dev`], A)).status).toBe(200);
    expect((await call(ADMIN, ['GET', `${D}/tenant-dev`])).status).toBe(404);
    expect((await call(ALICE, ['GET', `${D}/tenant-dev`], A)).status).toBe(403);
    expect(b.broker.devices.resolve('plant-a', 'tenant-dev')?.entityId).toBe('urn:ngsi-ld:Device:tenant-dev');
  });
});
