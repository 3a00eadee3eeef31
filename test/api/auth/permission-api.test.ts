// The permission API (interface 2.6, 2.7, 4.7, 5, 7; behaviour §8): create, read, update and delete,
// and who may read a permission. Each refusal has a positive control beside it, so a broker that
// refuses everything fails as surely as one that allows everything.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { T0 } from '../../helpers/broker.js';
import {
  AUTHENTICATED, E, ISO0, P, PUBLIC, ROOM1, ROOM2, SENSOR3, WHO, enc, expectProblem, locationId, perm, world, type Who, worldsClosedAfterEach,
} from '../../helpers/permission-world.js';

const fresh = worldsClosedAfterEach();

describe('POST /auth/permissions', () => {
  it('creates with 201 and a Location that reads back, assigner = the caller [interface 4.7]', async () => {
    const { as } = await fresh();
    const res = await as('alice', 'POST', P, perm({ id: ROOM1 }, 'bob', 'read'));
    expect(res.status, res.text).toBe(201);
    const location = res.headers.get('location') ?? '';
    expect(decodeURIComponent(location)).toMatch(/^\/ngsi-ld\/v1\/auth\/permissions\/urn:ngsi-ld:Permission:/);
    const read = await as('alice', 'GET', location);
    expect(read.status, read.text).toBe(200);
    expect(read.json).toEqual({
      id: locationId(res), type: 'Permission', target: { id: ROOM1 }, assignee: 'bob', assigner: 'alice', action: 'read',
    });
  });

  it('is served under /auth/permissions too, with a Location under that prefix [behaviour §8]', async () => {
    const { as } = await fresh();
    const res = await as('root', 'POST', '/auth/permissions', perm({ types: 'Room', scopes: '/a' }, 'bob', 'write'));
    expect(res.status, res.text).toBe(201);
    const location = res.headers.get('location') ?? '';
    expect(location).toMatch(/^\/auth\/permissions\/urn/);
    const read = await as('bob', 'GET', location);
    expect(read.status, read.text).toBe(200);
    expect(read.json).toMatchObject({ type: 'Permission', target: { types: ['Room'], scopes: ['/a'] }, assignee: 'bob', assigner: WHO.root.sub, action: 'write' });
    // The same permission through the other prefix.
    expect((await as('bob', 'GET', `${P}/${location.slice('/auth/permissions/'.length)}`)).json).toEqual(read.json);
  });

  it('uses a given id, and answers 409 when that id exists [interface 2.6]', async () => {
    const { as } = await fresh();
    const id = 'urn:ngsi-ld:Permission:mine';
    const res = await as('alice', 'POST', P, perm({ id: ROOM1 }, 'bob', 'read', { id }));
    expect(res.status, res.text).toBe(201);
    expect(locationId(res)).toBe(id);
    expect((await as('alice', 'GET', `${P}/${enc(id)}`)).json.id).toBe(id);
    const again = await as('alice', 'POST', P, perm({ id: ROOM1 }, 'carol', 'read', { id }));
    expectProblem(again, 409);
    // The first one is unchanged.
    expect((await as('alice', 'GET', `${P}/${enc(id)}`)).json.assignee).toBe('bob');
  });

  it('answers a redundant permission with 303, the Location of the existing one and a ProblemDetails body [interface 5 rule 6, 7]', async () => {
    const { as, grant } = await fresh();
    const first = await grant('alice', perm({ id: ROOM1 }, 'bob', 'read'));
    const res = await as('alice', 'POST', P, perm({ id: ROOM1 }, 'bob', 'read'));
    expect(res.status, res.text).toBe(303);
    expect(locationId(res)).toBe(first);
    expect(res.json).toMatchObject({ type: expect.stringMatching(/^https:\/\/uri\.etsi\.org\/ngsi-ld\/errors\//), title: expect.any(String), status: 303 });
    expect(res.json.detail).toContain(first);
    // Under the other prefix the Location stays under that prefix.
    const other = await as('alice', 'POST', '/auth/permissions', perm({ id: ROOM1 }, 'bob', 'read'));
    expect(other.status).toBe(303);
    expect(other.headers.get('location')).toMatch(/^\/auth\/permissions\//);
    expect(locationId(other, '/auth/permissions')).toBe(first);
    // Another action, or another assignee, is not redundant.
    expect((await as('alice', 'POST', P, perm({ id: ROOM1 }, 'bob', 'write'))).status).toBe(201);
    expect((await as('alice', 'POST', P, perm({ id: ROOM1 }, 'carol', 'read'))).status).toBe(201);
  });

  it('finds a redundant permission whatever the order of its target types and scopes', async () => {
    const { as, grant } = await fresh();
    const first = await grant('root', perm({ types: ['Room', 'Sensor'], scopes: ['/a', '/b'] }, 'bob', 'read'));
    const res = await as('root', 'POST', P, perm({ types: ['Sensor', 'Room'], scopes: ['/b', '/a'] }, 'bob', 'read'));
    expect(res.status, res.text).toBe(303);
    expect(locationId(res)).toBe(first);
    // Fewer types is another target.
    expect((await as('root', 'POST', P, perm({ types: ['Sensor'], scopes: ['/b', '/a'] }, 'bob', 'read'))).status).toBe(201);
  });

  const BAD_DATA = 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData';
  const INVALID_REQUEST = 'https://uri.etsi.org/ngsi-ld/errors/InvalidRequest';
  const INVALID: Array<[string, unknown, RegExp, string?]> = [
    ['an unknown member', { ...perm({ id: ROOM1 }, 'bob', 'read'), color: 'red' }, /color/],
    ['an unknown target member', perm({ id: ROOM1, kind: 'x' }, 'bob', 'read'), /kind/],
    ['no target', { type: 'Permission', assignee: 'bob', action: 'read' }, /target/],
    ['no assignee', { type: 'Permission', target: { id: ROOM1 }, action: 'read' }, /assignee/],
    ['no action', { type: 'Permission', target: { id: ROOM1 }, assignee: 'bob' }, /action/],
    ['an action outside read, write, admin, own', perm({ id: ROOM1 }, 'bob', 'delete'), /action.*'delete'.*read, write, admin, own/],
    ['a target id that is not an absolute URI', perm({ id: 'room1' }, 'bob', 'read'), /target\.id.*'room1'.*absolute URI/],
    ['a target id of no entity', perm({ id: 'urn:ngsi-ld:Room:none' }, 'bob', 'read'), /urn:ngsi-ld:Room:none/],
    ['a target with an id and types', perm({ id: ROOM1, types: ['Room'] }, 'bob', 'read'), /target\.id/],
    ['JSON null', null, /JSON object/, INVALID_REQUEST],
    ['an array', [perm({ id: ROOM1 }, 'bob', 'read')], /JSON object/, INVALID_REQUEST],
    ['a type other than Permission', { ...perm({ id: ROOM1 }, 'bob', 'read'), type: 'Entity' }, /type/],
    ['an id that is not a URI', { ...perm({ id: ROOM1 }, 'bob', 'read'), id: 'p1' }, /id.*'p1'/],
    ['an empty assignee', perm({ id: ROOM1 }, '', 'read'), /assignee/],
    ['action own [interface 5 rule 6]', perm({ id: ROOM1 }, 'bob', 'own'), /own/],
    ['admin to every authenticated subject [interface 5 rule 6]', perm({ id: ROOM1 }, AUTHENTICATED, 'admin'), /admin/],
    ['a public permission while public permissions are off [interface 2.6]', perm({ id: ROOM1 }, PUBLIC, 'read'), /allow-public-permission/],
  ];

  it.each(INVALID)('answers 400 with a precise detail for %s', async (_name, body, detail, type = BAD_DATA) => {
    const { as } = await fresh();
    const res = await as('alice', 'POST', P, body);
    expectProblem(res, 400, detail);
    expect(res.json.type).toBe(type);
    // Positive control: the valid body is accepted by the same caller.
    expect((await as('alice', 'POST', P, perm({ id: ROOM1 }, 'bob', 'read'))).status).toBe(201);
  });

  it('answers 400 to invalid JSON and to a query parameter', async () => {
    const { b, as } = await fresh();
    const token = await b.token('alice');
    const res = await b.request('POST', P, { raw: '{"type": ', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(400);
    expectProblem(await as('alice', 'POST', `${P}?details=true`, perm({ id: ROOM1 }, 'bob', 'read')), 400, /details/);
  });
});

describe('PATCH /auth/permissions/{id}', () => {
  it('replaces the members given, keeps the others, and the caller becomes the assigner [interface 4.7]', async () => {
    const { b, as, grant } = await fresh();
    const id = await grant('alice', perm({ id: ROOM1 }, 'bob', 'read'));
    b.clock.advance(60_000);
    const res = await as('root', 'PATCH', `${P}/${enc(id)}`, { action: 'write' });
    expect(res.status, res.text).toBe(204);
    const read = await as('root', 'GET', `${P}/${enc(id)}?sysAttrs=true`);
    expect(read.json).toEqual({
      id, type: 'Permission', target: { id: ROOM1 }, assignee: 'bob', assigner: WHO.root.sub, action: 'write',
      createdAt: ISO0, modifiedAt: new Date(T0 + 60_000).toISOString(),
    });
    expect((await as('alice', 'PATCH', `${P}/${enc(id)}`, { assignee: 'carol' })).status).toBe(204);
    expect((await as('alice', 'GET', `${P}/${enc(id)}`)).json).toMatchObject({ assignee: 'carol', assigner: 'alice', action: 'write' });
  });

  it('replaces the target whole: members of the old target not given are gone', async () => {
    const { as, grant } = await fresh();
    const id = await grant('root', perm({ types: ['Room'], scopes: ['/a'] }, 'bob', 'read'));
    expect((await as('root', 'PATCH', `${P}/${enc(id)}`, { target: { types: 'Sensor' } })).status).toBe(204);
    expect((await as('root', 'GET', `${P}/${enc(id)}`)).json.target).toEqual({ types: ['Sensor'] });
    expect((await as('root', 'PATCH', `${P}/${enc(id)}`, { target: { id: SENSOR3 } })).status).toBe(204);
    expect((await as('root', 'GET', `${P}/${enc(id)}`)).json.target).toEqual({ id: SENSOR3 });
  });

  it('refuses a change into action own or into admin for every authenticated subject (400) [interface 5 rule 6]', async () => {
    const { as, grant } = await fresh();
    const id = await grant('alice', perm({ id: ROOM1 }, 'bob', 'read'));
    expectProblem(await as('alice', 'PATCH', `${P}/${enc(id)}`, { action: 'own' }), 400, /own/);
    expectProblem(await as('alice', 'PATCH', `${P}/${enc(id)}`, { assignee: AUTHENTICATED, action: 'admin' }), 400, /admin/);
    expect((await as('alice', 'PATCH', `${P}/${enc(id)}`, { assignee: AUTHENTICATED, action: 'write' })).status).toBe(204);
    expect((await as('alice', 'GET', `${P}/${enc(id)}`)).json).toMatchObject({ assignee: AUTHENTICATED, action: 'write' });
  });

  it('refuses to change or delete an owner permission (400), even for the global admin [interface 2.6 rule 4]', async () => {
    const { as, grant } = await fresh();
    const owns = await as('alice', 'GET', `${P}?targetId=${enc(ROOM1)}&action=own`);
    expect(owns.json).toHaveLength(1);
    const own: string = owns.json[0].id;
    expect(owns.json[0]).toMatchObject({ target: { id: ROOM1 }, assignee: 'alice', action: 'own' });
    expectProblem(await as('root', 'PATCH', `${P}/${enc(own)}`, { assignee: 'bob' }), 400, /own/);
    expectProblem(await as('alice', 'PATCH', `${P}/${enc(own)}`, { action: 'admin' }), 400, /own/);
    expectProblem(await as('root', 'DELETE', `${P}/${enc(own)}`), 400, /own/);
    expect((await as('alice', 'GET', `${P}/${enc(own)}`)).json.action).toBe('own');
    // Positive control: a granted permission on the same entity is changed and deleted.
    const granted = await grant('alice', perm({ id: ROOM1 }, 'bob', 'admin'));
    expect((await as('root', 'PATCH', `${P}/${enc(granted)}`, { assignee: 'carol' })).status).toBe(204);
    expect((await as('root', 'DELETE', `${P}/${enc(granted)}`)).status).toBe(204);
  });

  it('answers 403 to a caller that does not administer the target, old or new [interface 5 rule 5]', async () => {
    const { as, grant } = await fresh();
    const id = await grant('alice', perm({ id: ROOM1 }, 'bob', 'write'));
    expectProblem(await as('bob', 'PATCH', `${P}/${enc(id)}`, { action: 'read' }), 403);
    // dave administers Sensor:3 only: it may not move a permission of Room:1 onto Sensor:3, nor the reverse.
    await grant('alice', perm({ id: SENSOR3 }, 'dave', 'admin'));
    expectProblem(await as('dave', 'PATCH', `${P}/${enc(id)}`, { target: { id: SENSOR3 } }), 403);
    const onSensor = await grant('dave', perm({ id: SENSOR3 }, 'carol', 'read'));
    expectProblem(await as('dave', 'PATCH', `${P}/${enc(onSensor)}`, { target: { id: ROOM1 } }), 403);
    expect((await as('dave', 'PATCH', `${P}/${enc(onSensor)}`, { action: 'write' })).status).toBe(204);
    expect((await as('alice', 'PATCH', `${P}/${enc(id)}`, { action: 'read' })).status).toBe(204);
    expect((await as('alice', 'GET', `${P}/${enc(id)}`)).json.action).toBe('read');
  });

  it('answers 404 for an unknown id, before any right is checked', async () => {
    const { as, grant } = await fresh();
    expectProblem(await as('root', 'PATCH', `${P}/${enc('urn:ngsi-ld:Permission:none')}`, { action: 'read' }), 404);
    expectProblem(await as('bob', 'PATCH', `${P}/${enc('urn:ngsi-ld:Permission:none')}`, { action: 'read' }), 404);
    const id = await grant('alice', perm({ id: ROOM1 }, 'bob', 'write'));
    expect((await as('root', 'PATCH', `${P}/${enc(id)}`, { action: 'read' })).status).toBe(204);
  });

  it('answers 303 with the Location of the other permission when the change makes a duplicate [interface 5 rule 6]', async () => {
    const { as, grant } = await fresh();
    const read = await grant('alice', perm({ id: ROOM1 }, 'bob', 'read'));
    const write = await grant('alice', perm({ id: ROOM1 }, 'bob', 'write'));
    const res = await as('alice', 'PATCH', `${P}/${enc(write)}`, { action: 'read' });
    expect(res.status, res.text).toBe(303);
    expect(locationId(res)).toBe(read);
    expect(res.json).toMatchObject({ status: 303, detail: expect.stringContaining(read) });
    // Nothing changed.
    expect((await as('alice', 'GET', `${P}/${enc(write)}`)).json.action).toBe('write');
    // Giving its own members again is no duplicate of itself.
    expect((await as('alice', 'PATCH', `${P}/${enc(write)}`, { action: 'write', assignee: 'bob' })).status).toBe(204);
  });

  it('answers 400 to an invalid patch: unknown member, an assigner, another id, nothing to change', async () => {
    const { as, grant } = await fresh();
    const id = await grant('alice', perm({ id: ROOM1 }, 'bob', 'read'));
    expectProblem(await as('alice', 'PATCH', `${P}/${enc(id)}`, { color: 'red' }), 400, /color/);
    expectProblem(await as('alice', 'PATCH', `${P}/${enc(id)}`, { assigner: 'bob' }), 400, /assigner/);
    expectProblem(await as('alice', 'PATCH', `${P}/${enc(id)}`, { id: 'urn:ngsi-ld:Permission:other' }), 400, /id/);
    expectProblem(await as('alice', 'PATCH', `${P}/${enc(id)}`, {}), 400, /target, assignee or action/);
    expectProblem(await as('alice', 'PATCH', `${P}/${enc(id)}`, { action: 'delete' }), 400, /'delete'/);
    expectProblem(await as('alice', 'PATCH', `${P}/${enc(id)}`, { target: { id: 'urn:ngsi-ld:Room:none' } }), 400, /urn:ngsi-ld:Room:none/);
    expect((await as('alice', 'PATCH', `${P}/${enc(id)}`, { action: 'write' })).status).toBe(204);
  });
});

describe('DELETE /auth/permissions/{id}', () => {
  it('deletes (204); the permission is then 404 and no longer gives its right', async () => {
    const { as, grant } = await fresh();
    const id = await grant('alice', perm({ id: ROOM1 }, 'bob', 'read'));
    expect((await as('bob', 'GET', `${E}/${enc(ROOM1)}`)).status).toBe(200);
    expect((await as('alice', 'DELETE', `${P}/${enc(id)}`)).status).toBe(204);
    expectProblem(await as('alice', 'GET', `${P}/${enc(id)}`), 404);
    expectProblem(await as('bob', 'GET', `${E}/${enc(ROOM1)}`), 403);
  });

  it('answers 403 to a caller that does not administer the target, its assignee included', async () => {
    const { as, grant } = await fresh();
    const id = await grant('alice', perm({ id: ROOM1 }, 'bob', 'write'));
    expectProblem(await as('bob', 'DELETE', `${P}/${enc(id)}`), 403);
    expectProblem(await as('carol', 'DELETE', `${P}/${enc(id)}`), 403);
    expect((await as('alice', 'GET', `${P}/${enc(id)}`)).status).toBe(200);
    expect((await as('root', 'DELETE', `${P}/${enc(id)}`)).status).toBe(204);
  });

  it('answers 404 for an unknown id', async () => {
    const { as } = await fresh();
    expectProblem(await as('root', 'DELETE', `${P}/${enc('urn:ngsi-ld:Permission:none')}`), 404);
    expectProblem(await as('carol', 'DELETE', `${P}/${enc('urn:ngsi-ld:Permission:none')}`), 404);
  });
});

describe('GET /auth/permissions/{id}: who sees a permission [interface 4.7]', () => {
  let w: Awaited<ReturnType<typeof world>>;
  let toBob: string;
  let toOperators: string;
  beforeAll(async () => {
    w = await world();
    toBob = await w.grant('alice', perm({ id: ROOM1 }, 'bob', 'read'));
    toOperators = await w.grant('root', perm({ types: ['Room'] }, 'operators', 'write'));
  });
  afterAll(() => w.b.close());

  const CASES: Array<[Who, 'toBob' | 'toOperators', number, string]> = [
    ['bob', 'toBob', 200, 'its assignee'],
    ['alice', 'toBob', 200, 'the owner of its target'],
    ['root', 'toBob', 200, 'the global admin'],
    ['carol', 'toBob', 403, 'a subject neither assigned nor administering'],
    ['olga', 'toOperators', 200, 'a member of the assignee group'],
    ['bob', 'toOperators', 403, 'a non-member'],
    ['alice', 'toOperators', 403, 'the owner of some Rooms: not administrator of every Room'],
  ];
  it.each(CASES)('%s reads %s → %i (%s)', async (who, which, status) => {
    const id = which === 'toBob' ? toBob : toOperators;
    const res = await w.as(who, 'GET', `${P}/${enc(id)}`);
    if (status === 200) {
      expect(res.status, res.text).toBe(200);
      expect(res.json.id).toBe(id);
    } else {
      expectProblem(res, status);
    }
  });

  it('details=true knows users and groups named by the URI the subject API shows, too', async () => {
    const id = await w.grant('root', perm({ id: ROOM2 }, 'urn:ngsi-ld:User:bob', 'read'));
    const res = await w.as('bob', 'GET', `${P}/${enc(id)}?details=true`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.assignee).toEqual({
      subjectId: 'urn:ngsi-ld:User:bob', subjectType: 'USER', subjectInfo: { username: 'bob.b', givenName: 'Bob', familyName: 'Builder' },
    });
    const toGroup = await w.grant('root', perm({ id: ROOM2 }, 'urn:ngsi-ld:Group:operators', 'read'));
    expect((await w.as('olga', 'GET', `${P}/${enc(toGroup)}?details=true`)).json.assignee)
      .toEqual({ subjectId: 'urn:ngsi-ld:Group:operators', subjectType: 'GROUP', subjectInfo: { name: 'operators' } });
    // A role is no registry subject: its id only.
    const toRole = await w.grant('root', perm({ id: ROOM2 }, 'auditor', 'read'));
    expect((await w.as('root', 'GET', `${P}/${enc(toRole)}?details=true`)).json.assignee).toEqual({ subjectId: 'auditor' });
  });

  it('answers 404 before 403 for an unknown id', async () => {
    expectProblem(await w.as('carol', 'GET', `${P}/${enc('urn:ngsi-ld:Permission:none')}`), 404);
  });

  it('answers 400 to an id that is not a URI and to an unknown parameter', async () => {
    expectProblem(await w.as('bob', 'GET', `${P}/not-a-uri`), 400);
    expectProblem(await w.as('bob', 'GET', `${P}/${enc(toBob)}?limit=1`), 400, /limit/);
  });

  it('shows details with details=true and createdAt/modifiedAt with options=sysAttrs', async () => {
    const res = await w.as('bob', 'GET', `${P}/${enc(toBob)}?details=true&detailsPick=temperature&options=sysAttrs`);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({
      id: toBob, type: 'Permission', action: 'read', createdAt: ISO0, modifiedAt: ISO0,
      target: { id: ROOM1, type: 'Room', temperature: { type: 'Property', value: 20 } },
      assignee: { subjectId: 'bob', subjectType: 'USER', subjectInfo: { username: 'bob.b', givenName: 'Bob', familyName: 'Builder' } },
      assigner: { subjectId: 'alice', subjectType: 'USER', subjectInfo: { username: 'alice' } },
    });
  });
});
