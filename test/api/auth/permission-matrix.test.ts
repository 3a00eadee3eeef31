// Subject × action × target: every rule of the permission model (interface 2.6, 5; behaviour §8),
// each refusal beside a positive control, so a broker that refuses everything fails as surely as one
// that allows everything.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../../helpers/auth.js';

const CTX = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
const ROOM1 = 'urn:ngsi-ld:Room:1';
const ROOM2 = 'urn:ngsi-ld:Room:2';
const SENSOR3 = 'urn:ngsi-ld:Sensor:3';
const SENSOR4 = 'urn:ngsi-ld:Sensor:4';
const OPEN5 = 'urn:ngsi-ld:Room:5';
/** An entity of a type no listing below asks for: the permission API cases grant on it. */
const THING9 = 'urn:ngsi-ld:Thing:9';
const E = '/ngsi-ld/v1/entities';
const P = '/ngsi-ld/v1/auth/permissions';
const enc = encodeURIComponent;

/** Who asks: subject and the claims of its token. */
const WHO = {
  admin: { sub: 'urn:ngsi-ld:User:root', claims: { roles: [ADMIN_ROLE] } },
  alice: { sub: 'alice', claims: {} },
  bob: { sub: 'bob', claims: {} },
  olga: { sub: 'olga', claims: { groups: ['operators'] } },
  carol: { sub: 'carol', claims: { roles: ['auditor'] } },
  dave: { sub: 'dave', claims: {} },
  eve: { sub: 'eve', claims: {} },
  nobody: { sub: 'nobody', claims: {} },
} as const;
type Who = keyof typeof WHO;

let b: AuthBroker;
const as = (who: Who | undefined, method: string, path: string, body?: unknown) =>
  b.as(who === undefined ? undefined : WHO[who].sub, method, path, { ...(body !== undefined ? { body } : {}), claims: who === undefined ? {} : WHO[who].claims });

const entity = (id: string, type: string, scope?: string, extra: Record<string, unknown> = {}) => ({
  id, type, ...(scope ? { scope } : {}), temperature: { type: 'Property', value: 20 }, ...extra,
});

async function grant(by: Who, target: Record<string, unknown>, assignee: string, action: string): Promise<string> {
  const res = await as(by, 'POST', P, { type: 'Permission', target, assignee, action });
  expect(res.status, res.text).toBe(201);
  return res.headers.get('location') as string;
}

beforeAll(async () => {
  b = await startAuthBroker();
  // alice creates and so owns every entity (interface 2.6 rule 4); writing into /plant/a gives her nothing on the scope.
  for (const e of [entity(ROOM1, 'Room'), entity(ROOM2, 'Room', '/plant/a'), entity(SENSOR3, 'Sensor', '/plant/a'), entity(SENSOR4, 'Sensor')]) {
    const res = await as('alice', 'POST', E, e);
    expect(res.status, res.text).toBe(201);
  }
  // Interface 2.6 rule 5: specificAccessPolicy write opens the entity to every authenticated subject.
  expect((await as('alice', 'POST', E, entity(THING9, 'Thing'))).status).toBe(201);
  expect((await as('alice', 'POST', E, entity(OPEN5, 'Room', undefined, { specificAccessPolicy: { type: 'Property', value: 'write' } }))).status).toBe(201);
  await grant('alice', { id: ROOM1 }, 'bob', 'read');
  await grant('admin', { types: ['Room'] }, 'operators', 'write');
  // Permissions by scope come from an administrator (docs/auth.md, Scopes).
  await grant('admin', { scopes: ['/plant/a'] }, 'auditor', 'read');
  await grant('admin', { types: ['Sensor'], scopes: ['/plant/a'] }, 'dave', 'admin');
  await grant('admin', { types: ['Room'] }, 'eve', 'admin');
  await grant('admin', { types: ['Sensor'] }, 'eve', 'admin');
});

afterAll(async () => {
  await b.close();
});

const patchTemp = { temperature: { type: 'Property', value: 30 } };

/** [who, method, path, body, expected status]: refusals each with a positive control near it. */
const CASES: Array<[Who | undefined, string, string, unknown, number, string]> = [
  // Authentication (interface 5): no token, no access.
  [undefined, 'GET', `${E}/${enc(ROOM1)}`, undefined, 401, 'anonymous read without public permissions'],
  [undefined, 'POST', E, entity('urn:ngsi-ld:Room:anon', 'Room'), 401, 'anonymous create'],
  // Global admin role: everything.
  ['admin', 'GET', `${E}/${enc(ROOM2)}`, undefined, 200, 'admin reads any entity'],
  // Owner (own = admin).
  ['alice', 'GET', `${E}/${enc(SENSOR4)}`, undefined, 200, 'owner reads'],
  ['alice', 'PATCH', `${E}/${enc(SENSOR4)}/attrs`, patchTemp, 204, 'owner writes'],
  // Target id, action read.
  ['bob', 'GET', `${E}/${enc(ROOM1)}`, undefined, 200, 'read permission on the id: read'],
  ['bob', 'GET', `${E}/${enc(ROOM2)}`, undefined, 403, 'read permission on another id'],
  ['bob', 'PATCH', `${E}/${enc(ROOM1)}/attrs`, patchTemp, 403, 'read does not imply write'],
  ['bob', 'GET', `/ngsi-ld/v1/temporal/entities/${enc(ROOM1)}`, undefined, 200, 'temporal read with read'],
  ['bob', 'GET', `/ngsi-ld/v1/temporal/entities/${enc(ROOM2)}`, undefined, 403, 'temporal read without read'],
  // Existence before permission (404 before 403).
  ['bob', 'GET', `${E}/${enc('urn:ngsi-ld:Room:none')}`, undefined, 404, 'missing entity: 404, not 403'],
  // Group assignee, types target, action write (rule 3: write implies read; admin not included).
  ['olga', 'PATCH', `${E}/${enc(ROOM2)}/attrs`, patchTemp, 204, 'group write on the type: write'],
  ['olga', 'GET', `${E}/${enc(ROOM2)}`, undefined, 200, 'write implies read'],
  ['olga', 'PATCH', `${E}/${enc(SENSOR3)}/attrs`, patchTemp, 403, 'write on Room does not cover Sensor'],
  ['olga', 'DELETE', `${E}/${enc(ROOM2)}`, undefined, 403, 'write does not include admin (delete)'],
  // Role (claim) assignee, scopes target.
  ['carol', 'GET', `${E}/${enc(SENSOR3)}`, undefined, 200, 'role read on the scope'],
  ['carol', 'GET', `${E}/${enc(SENSOR4)}`, undefined, 403, 'scope permission does not cover an entity without scope'],
  // Types AND scopes (rule 1).
  ['dave', 'GET', `${E}/${enc(SENSOR3)}`, undefined, 200, 'type and scope both match'],
  ['dave', 'GET', `${E}/${enc(SENSOR4)}`, undefined, 403, 'type matches, scope does not'],
  ['dave', 'GET', `${E}/${enc(ROOM2)}`, undefined, 403, 'scope matches, type does not'],
  // specificAccessPolicy (rule 5).
  ['nobody', 'PATCH', `${E}/${enc(OPEN5)}/attrs`, patchTemp, 204, 'specificAccessPolicy write: any authenticated subject writes'],
  ['nobody', 'DELETE', `${E}/${enc(OPEN5)}`, undefined, 403, 'specificAccessPolicy does not give admin'],
  ['nobody', 'GET', `${E}/${enc(ROOM1)}`, undefined, 403, 'no permission at all'],
  // Rule 2: permissions are never combined — admin on Room and admin on Sensor is no admin on [Room, Sensor].
  ['eve', 'POST', P, { type: 'Permission', target: { types: ['Room', 'Sensor'] }, assignee: 'bob', action: 'read' }, 403, 'two permissions never combine'],
  ['eve', 'POST', P, { type: 'Permission', target: { types: ['Room'] }, assignee: 'frank', action: 'read' }, 201, 'one permission covers its own target'],
  // Interface 5 rule 5: managing a permission needs admin on its target.
  ['bob', 'POST', P, { type: 'Permission', target: { id: ROOM1 }, assignee: 'carol', action: 'read' }, 403, 'read holder cannot grant'],
  ['alice', 'POST', P, { type: 'Permission', target: { id: THING9 }, assignee: 'carol', action: 'read' }, 201, 'owner grants'],
  ['alice', 'POST', P, { type: 'Permission', target: { scopes: ['/plant/a'] }, assignee: 'bob', action: 'read' }, 403, 'the first writer of a scope does not administer it'],
  ['dave', 'POST', P, { type: 'Permission', target: { id: SENSOR3 }, assignee: 'carol', action: 'write' }, 201, 'admin by type+scope grants on an entity it covers'],
  ['dave', 'POST', P, { type: 'Permission', target: { id: SENSOR4 }, assignee: 'carol', action: 'write' }, 403, 'admin by type+scope cannot grant outside'],
  // Interface 5 rule 6: forbidden combinations (400) beside an allowed one.
  ['alice', 'POST', P, { type: 'Permission', target: { id: THING9 }, assignee: 'bob', action: 'own' }, 400, 'own cannot be created'],
  ['alice', 'POST', P, { type: 'Permission', target: { id: THING9 }, assignee: 'urn:ngsi-ld:Subject:authenticated', action: 'admin' }, 400, 'admin to authenticated'],
  ['alice', 'POST', P, { type: 'Permission', target: { id: THING9 }, assignee: 'urn:ngsi-ld:Subject:authenticated', action: 'write' }, 201, 'write to authenticated'],
  ['alice', 'POST', P, { type: 'Permission', target: { id: THING9 }, assignee: 'urn:ngsi-ld:Subject:public', action: 'read' }, 400, 'public permissions off'],
  ['alice', 'POST', P, { type: 'Permission', target: { id: THING9, types: ['Thing'] }, assignee: 'bob', action: 'read' }, 400, 'id with types'],
];

describe('permission matrix', () => {
  it.each(CASES)('%s %s %s → %i (%s)', async (who, method, path, body, expected) => {
    const res = await as(who, method, path, body);
    expect(res.status, res.text).toBe(expected);
    if (expected >= 400) {
      expect(res.json).toMatchObject({ status: expected, type: expect.stringMatching(/^https:\/\/uri\.etsi\.org\/ngsi-ld\/errors\//) });
    }
    if (expected === 401) expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });
});

describe('queries filter by read permission', () => {
  it('lists only readable entities, and counts only them', async () => {
    const res = await as('bob', 'GET', `${E}?type=Room,Sensor&count=true`);
    expect(res.status).toBe(200);
    // Room:5 is open to every authenticated subject (specificAccessPolicy).
    expect(res.json.map((e: { id: string }) => e.id).sort()).toEqual([ROOM1, OPEN5]);
    expect(res.headers.get('ngsild-results-count')).toBe('2');
    const all = await as('admin', 'GET', `${E}?type=Room,Sensor&count=true`);
    expect(all.headers.get('ngsild-results-count')).toBe('5');
  });

  it('scope and type permissions select by index, an owner sees what it created', async () => {
    const carol = await as('carol', 'GET', `${E}?type=Room,Sensor`);
    expect(carol.json.map((e: { id: string }) => e.id).sort()).toEqual([ROOM2, OPEN5, SENSOR3].sort());
    const olga = await as('olga', 'GET', `${E}?type=Room,Sensor`);
    expect(olga.json.map((e: { id: string }) => e.id).sort()).toEqual([ROOM1, ROOM2, OPEN5].sort());
    const alice = await as('alice', 'GET', `${E}?type=Room,Sensor`);
    expect(alice.json).toHaveLength(5);
    const nobody = await as('nobody', 'GET', `${E}?type=Sensor`);
    expect(nobody.status).toBe(200);
    expect(nobody.json).toEqual([]);
  });

  it('discovery shows only the types and attributes of readable entities', async () => {
    const bob = await as('bob', 'GET', '/ngsi-ld/v1/types');
    expect(bob.json.typeList).toEqual(['Room', 'Thing']);
    const admin = await as('admin', 'GET', '/ngsi-ld/v1/types');
    expect(admin.json.typeList).toEqual(['Room', 'Sensor', 'Thing']);
    // nobody reads only the entities open to every authenticated subject (Room:5 and Thing:9).
    const nobody = await as('nobody', 'GET', '/ngsi-ld/v1/types');
    expect(nobody.json.typeList).toEqual(['Room', 'Thing']);
  });

  it('temporal queries return only readable entities', async () => {
    const res = await as('bob', 'GET', '/ngsi-ld/v1/temporal/entities?type=Room,Sensor&timerel=after&timeAt=2000-01-01T00:00:00Z&timeproperty=createdAt');
    expect(res.status, res.text).toBe(200);
    expect(res.json.map((e: { id: string }) => e.id).sort()).toEqual([ROOM1, OPEN5]);
  });

  it('a batch reports refused entities one by one, and the others are written', async () => {
    const res = await as('bob', 'POST', '/ngsi-ld/v1/entityOperations/upsert?options=update', [
      { id: ROOM2, type: 'Room', temperature: { type: 'Property', value: 1 } },
      entity('urn:ngsi-ld:Room:bob', 'Room'),
    ]);
    expect(res.status, res.text).toBe(207);
    expect(res.json.success).toEqual(['urn:ngsi-ld:Room:bob']);
    expect(res.json.errors).toEqual([expect.objectContaining({ entityId: ROOM2, error: expect.objectContaining({ status: 403 }) })]);
    // bob created it, so bob owns it.
    expect((await as('bob', 'DELETE', `${E}/${enc('urn:ngsi-ld:Room:bob')}`)).status).toBe(204);
  });
});
