// The permission API tests' world: who asks (subjects and token claims), the entities alice owns,
// and small builders and assertions shared by the permission API and listing tests.

import { afterEach, expect } from 'vitest';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from './auth.js';
import { T0 } from './broker.js';

export const ROOM1 = 'urn:ngsi-ld:Room:1';
export const ROOM2 = 'urn:ngsi-ld:Room:2';
export const SENSOR3 = 'urn:ngsi-ld:Sensor:3';
export const E = '/ngsi-ld/v1/entities';
export const P = '/ngsi-ld/v1/auth/permissions';
export const AUTHENTICATED = 'urn:ngsi-ld:Subject:authenticated';
export const PUBLIC = 'urn:ngsi-ld:Subject:public';
export const enc = encodeURIComponent;
export const ISO0 = new Date(T0).toISOString();

/** Who asks: subject and the claims of its token. */
export const WHO = {
  root: { sub: 'urn:ngsi-ld:User:root', claims: { roles: [ADMIN_ROLE] } },
  alice: { sub: 'alice', claims: {} },
  bob: { sub: 'bob', claims: { preferred_username: 'bob.b', given_name: 'Bob', family_name: 'Builder', email: 'bob@example.org' } },
  carol: { sub: 'carol', claims: {} },
  dave: { sub: 'dave', claims: {} },
  olga: { sub: 'olga', claims: { groups: ['operators'] } },
} as const;
export type Who = keyof typeof WHO;

/** A request as one of WHO (undefined: without a token). */
export type Req = (who: Who | undefined, method: string, path: string, body?: unknown) => ReturnType<AuthBroker['as']>;
export const asIn = (b: AuthBroker): Req => (who, method, path, body) =>
  b.as(who === undefined ? undefined : WHO[who].sub, method, path, { ...(body !== undefined ? { body } : {}), claims: who === undefined ? {} : WHO[who].claims });

export const entity = (id: string, type: string, scope?: string, extra: Record<string, unknown> = {}) => ({
  id, type, ...(scope ? { scope } : {}), temperature: { type: 'Property', value: 20 }, humidity: { type: 'Property', value: 50 }, ...extra,
});
export const perm = (target: Record<string, unknown>, assignee: string, action: string, more: Record<string, unknown> = {}) => ({
  type: 'Permission', target, assignee, action, ...more,
});

/** alice creates (and so owns) Room:1, Room:2 in scope /a, and Sensor:3. */
export async function world(opts: Parameters<typeof startAuthBroker>[0] = {}): Promise<{ b: AuthBroker; as: Req; grant: (by: Who, body: unknown) => Promise<string> }> {
  const b = await startAuthBroker(opts);
  const as = asIn(b);
  // One millisecond apart, before T0: permissions list in order of creation time.
  const entities = [entity(ROOM1, 'Room'), entity(ROOM2, 'Room', '/a'), entity(SENSOR3, 'Sensor')];
  for (const [i, e] of entities.entries()) {
    b.clock.set(T0 - entities.length + i);
    const res = await as('alice', 'POST', E, e);
    expect(res.status, res.text).toBe(201);
  }
  b.clock.set(T0);
  const grant = async (by: Who, body: unknown): Promise<string> => {
    const res = await as(by, 'POST', P, body);
    expect(res.status, res.text).toBe(201);
    return locationId(res);
  };
  return { b, as, grant };
}

/** The permission id a Location header of the permission API names. */
export const locationId = (res: { headers: Headers }, base = P): string =>
  decodeURIComponent((res.headers.get('location') ?? '').slice(base.length + 1));

/** A ProblemDetails answer of the status, its title and detail matching `detail`. */
export const expectProblem = (res: { status: number; json: unknown; text: string }, status: number, detail?: RegExp) => {
  expect(res.status, res.text).toBe(status);
  expect(res.json).toMatchObject({ status, type: expect.stringMatching(/^https:\/\/uri\.etsi\.org\/ngsi-ld\/errors\//), title: expect.any(String) });
  if (detail) expect(`${(res.json as { title: string }).title}: ${(res.json as { detail: string }).detail}`).toMatch(detail);
};

/** `fresh(opts)` starts a world; every world started in a test is closed after it. */
export function worldsClosedAfterEach(): (opts?: Parameters<typeof startAuthBroker>[0]) => ReturnType<typeof world> {
  let brokers: AuthBroker[] = [];
  afterEach(async () => {
    await Promise.all(brokers.map((b) => b.close()));
    brokers = [];
  });
  return async (opts = {}) => {
    const w = await world(opts);
    brokers.push(w.b);
    return w;
  };
}
