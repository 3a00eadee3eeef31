// The two permission listings (interface 2.7, 4.7; behaviour §8) with every parameter, and public
// permissions (interface 2.6). Each refusal has a positive control beside it.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { startAuthBroker } from '../../helpers/auth.js';
import {
  E, ISO0, P, PUBLIC, ROOM1, ROOM2, SENSOR3, WHO, enc, expectProblem, locationId, perm, world, type Req, type Who, worldsClosedAfterEach,
} from '../../helpers/permission-world.js';

const fresh = worldsClosedAfterEach();

describe('GET /auth/permissions and /auth/permissions/assigned: listings [interface 4.7]', () => {
  let w: Awaited<ReturnType<typeof world>>;
  /** Permissions by name; the owner permissions alice got by creating the entities (writing into /a gave none on the scope). */
  const ids: Record<string, string> = {};
  const names = (list: Array<{ id: string }>): string[] => list.map((p) => Object.keys(ids).find((k) => ids[k] === p.id) ?? p.id);
  const list = async (who: Who, query: string, assigned = false): Promise<string[]> => {
    const res = await w.as(who, 'GET', `${P}${assigned ? '/assigned' : ''}${query === '' ? '' : `?${query}`}`);
    expect(res.status, res.text).toBe(200);
    return names(res.json);
  };

  beforeAll(async () => {
    w = await world();
    // Registry: bob and olga's group are known from their tokens.
    await w.as('bob', 'GET', `${E}/${enc(ROOM1)}`);
    await w.as('olga', 'GET', `${E}/${enc(ROOM1)}`);
    const owns = await w.as('alice', 'GET', `${P}?action=own`);
    for (const p of owns.json as Array<{ id: string; target: { id?: string; scopes?: string[] } }>) {
      ids[p.target.id === undefined ? `own:${p.target.scopes?.join()}` : `own:${p.target.id.split(':').slice(-2).join('')}`] = p.id;
    }
    ids['opsWriteRooms'] = await w.grant('root', perm({ types: ['Room'] }, 'operators', 'write'));
    ids['daveAdminSensors'] = await w.grant('root', perm({ types: ['Sensor'] }, 'dave', 'admin'));
    ids['bobReadRoom1'] = await w.grant('alice', perm({ id: ROOM1 }, 'bob', 'read'));
    ids['bobWriteRoom2'] = await w.grant('alice', perm({ id: ROOM2 }, 'bob', 'write'));
    ids['carolAdminSensor3'] = await w.grant('alice', perm({ id: SENSOR3 }, 'carol', 'admin'));
    ids['bobReadSensor3'] = await w.grant('dave', perm({ id: SENSOR3 }, 'bob', 'read'));
  });
  afterAll(() => w.b.close());

  it('alice owns the three entities and not the scope /a', () => {
    expect(Object.keys(ids).filter((k) => k.startsWith('own:')).sort()).toEqual(['own:Room1', 'own:Room2', 'own:Sensor3']);
  });

  it('lists, by default, the permissions of action admin or own the caller administers, in creation order', async () => {
    expect(await list('alice', '')).toEqual(['own:Room1', 'own:Room2', 'own:Sensor3', 'carolAdminSensor3']);
    // dave administers every Sensor: the permissions on Sensor:3 and the one on the type Sensor itself.
    expect(await list('dave', '')).toEqual(['own:Sensor3', 'daveAdminSensors', 'carolAdminSensor3']);
    expect(await list('bob', '')).toEqual([]);
    expect(await list('root', '')).toEqual(['own:Room1', 'own:Room2', 'own:Sensor3', 'daveAdminSensors', 'carolAdminSensor3']);
  });

  it('action selects the permissions whose action includes it: write adds write, read adds everything', async () => {
    expect(await list('alice', 'action=own')).toEqual(['own:Room1', 'own:Room2', 'own:Sensor3']);
    expect(await list('alice', 'action=write')).toEqual(['own:Room1', 'own:Room2', 'own:Sensor3', 'bobWriteRoom2', 'carolAdminSensor3']);
    expect(await list('alice', 'action=read')).toEqual([
      'own:Room1', 'own:Room2', 'own:Sensor3', 'bobReadRoom1', 'bobWriteRoom2', 'carolAdminSensor3', 'bobReadSensor3',
    ]);
    expect(await list('root', 'action=read')).toHaveLength(9);
  });

  it('targetId selects by a comma list of entity ids', async () => {
    expect(await list('alice', `action=read&targetId=${enc(ROOM1)},${enc(ROOM2)}`)).toEqual(['own:Room1', 'own:Room2', 'bobReadRoom1', 'bobWriteRoom2']);
    expect(await list('alice', `action=read&targetId=${enc(SENSOR3)}`)).toEqual(['own:Sensor3', 'carolAdminSensor3', 'bobReadSensor3']);
    expect(await list('alice', `targetId=${enc('urn:ngsi-ld:Room:none')}`)).toEqual([]);
  });

  it('targetType selects permissions on entities of the type and on the type itself', async () => {
    expect(await list('alice', 'action=read&targetType=Sensor')).toEqual(['own:Sensor3', 'carolAdminSensor3', 'bobReadSensor3']);
    expect(await list('root', 'action=read&targetType=Sensor')).toEqual(['own:Sensor3', 'daveAdminSensors', 'carolAdminSensor3', 'bobReadSensor3']);
    expect(await list('root', 'action=read&targetType=Room')).toEqual(['own:Room1', 'own:Room2', 'opsWriteRooms', 'bobReadRoom1', 'bobWriteRoom2']);
  });

  it('targetScopeQ selects permissions on the scope and on entities in it', async () => {
    expect(await list('alice', 'action=read&targetScopeQ=/a')).toEqual(['own:Room2', 'bobWriteRoom2']);
    expect(await list('root', 'action=read&targetScopeQ=/a')).toEqual(['own:Room2', 'bobWriteRoom2']);
    expect(await list('alice', 'action=read&targetScopeQ=/b')).toEqual([]);
  });

  it('assignee and assigner select whom it is given to and who gave it', async () => {
    expect(await list('alice', 'action=read&assignee=bob')).toEqual(['bobReadRoom1', 'bobWriteRoom2', 'bobReadSensor3']);
    expect(await list('alice', 'action=read&assigner=dave')).toEqual(['bobReadSensor3']);
    expect(await list('root', `action=read&assigner=${enc(WHO.root.sub)}`)).toEqual(['opsWriteRooms', 'daveAdminSensors']);
    expect(await list('alice', 'action=read&assignee=bob&assigner=alice')).toEqual(['bobReadRoom1', 'bobWriteRoom2']);
  });

  it('/assigned lists the permissions assigned to the caller, directly or through a group', async () => {
    expect(await list('bob', '', true)).toEqual([]);
    expect(await list('bob', 'action=read', true)).toEqual(['bobReadRoom1', 'bobWriteRoom2', 'bobReadSensor3']);
    expect(await list('bob', 'action=write', true)).toEqual(['bobWriteRoom2']);
    expect(await list('bob', `action=read&targetId=${enc(SENSOR3)}`, true)).toEqual(['bobReadSensor3']);
    expect(await list('olga', 'action=read', true)).toEqual(['opsWriteRooms']);
    expect(await list('carol', '', true)).toEqual(['carolAdminSensor3']);
    expect(await list('alice', '', true)).toEqual(['own:Room1', 'own:Room2', 'own:Sensor3']);
    // Nobody sees through /assigned what is assigned to others, the global admin included.
    expect(await list('root', 'action=read', true)).toEqual([]);
  });

  it('details=true shows subjects known to the registry and the target entity with the picked attributes [interface 2.7]', async () => {
    const res = await w.as('alice', 'GET', `${P}?action=read&assignee=bob&targetId=${enc(ROOM1)}&details=true&detailsPick=temperature`);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual([{
      id: ids['bobReadRoom1'], type: 'Permission', action: 'read',
      target: { id: ROOM1, type: 'Room', temperature: { type: 'Property', value: 20 } },
      assignee: { subjectId: 'bob', subjectType: 'USER', subjectInfo: { username: 'bob.b', givenName: 'Bob', familyName: 'Builder' } },
      assigner: { subjectId: 'alice', subjectType: 'USER', subjectInfo: { username: 'alice' } },
    }]);
    // Without detailsPick the target is id and type only; a group assignee shows its name.
    const ops = await w.as('olga', 'GET', `${P}/assigned?action=read&details=true`);
    expect(ops.json).toEqual([{
      id: ids['opsWriteRooms'], type: 'Permission', action: 'write', target: { types: ['Room'] },
      assignee: { subjectId: 'operators', subjectType: 'GROUP', subjectInfo: { name: 'operators' } },
      // The global admin is a user the registry learnt from its token, without a preferred_username.
      assigner: { subjectId: WHO.root.sub, subjectType: 'USER', subjectInfo: { username: WHO.root.sub } },
    }]);
    const plain = await w.as('bob', 'GET', `${P}/assigned?action=read&details=true&targetId=${enc(ROOM2)}`);
    expect(plain.json[0].target).toEqual({ id: ROOM2, type: 'Room' });
    const picked = await w.as('bob', 'GET', `${P}/assigned?action=read&details=true&detailsPick=temperature,humidity&targetId=${enc(ROOM2)}`);
    expect(Object.keys(picked.json[0].target).sort()).toEqual(['humidity', 'id', 'temperature', 'type']);
    // detailsPick alone is refused, not ignored.
    const alone = await w.as('bob', 'GET', `${P}/assigned?action=read&detailsPick=temperature`);
    expect(alone.status).toBe(400);
    expect(alone.json.detail).toBe('detailsPick needs details=true');
  });

  it('sysAttrs=true and options=sysAttrs add createdAt and modifiedAt', async () => {
    for (const q of ['sysAttrs=true', 'options=sysAttrs']) {
      const res = await w.as('carol', 'GET', `${P}/assigned?${q}`);
      expect(res.json).toEqual([expect.objectContaining({ id: ids['carolAdminSensor3'], createdAt: ISO0, modifiedAt: ISO0 })]);
    }
    expect((await w.as('carol', 'GET', `${P}/assigned`)).json[0]).not.toHaveProperty('createdAt');
  });

  it('count=true gives NGSILD-Results-Count; limit and offset page through', async () => {
    const all = await list('alice', 'action=read');
    const res = await w.as('alice', 'GET', `${P}?action=read&count=true&limit=3&offset=2`);
    expect(res.headers.get('ngsild-results-count')).toBe(String(all.length));
    expect(names(res.json)).toEqual(all.slice(2, 5));
    const zero = await w.as('alice', 'GET', `${P}?action=read&count=true&limit=0`);
    expect(zero.json).toEqual([]);
    expect(zero.headers.get('ngsild-results-count')).toBe(String(all.length));
    const assigned = await w.as('bob', 'GET', `${P}/assigned?action=read&count=true&limit=1`);
    expect(names(assigned.json)).toEqual(['bobReadRoom1']);
    expect(assigned.headers.get('ngsild-results-count')).toBe('3');
    expect((await w.as('bob', 'GET', `${P}/assigned?action=read`)).headers.get('ngsild-results-count')).toBeNull();
  });

  it.each([
    ['an unknown parameter', 'type=Room', /type/],
    ['an action outside read, write, admin, own', 'action=delete', /action/],
    ['an unsupported option', 'options=keyValues', /keyValues/],
    ['limit=0 without count', 'limit=0', /limit/],
    ['a negative offset', 'offset=-1', /offset/],
    ['an invalid targetScopeQ', 'targetScopeQ=a', /./],
  ])('answers 400 to %s', async (_name, query, detail) => {
    expectProblem(await w.as('alice', 'GET', `${P}?${query}`), 400, detail);
    expectProblem(await w.as('alice', 'GET', `${P}/assigned?${query}`), 400, detail);
    expect((await w.as('alice', 'GET', P)).status).toBe(200);
  });
});

describe('public permissions [interface 2.6, behaviour §8]', () => {
  // NOTE: startAuthBroker fills in the rest of the authentication section; the patch type wants it whole.
  const PUBLIC_ON = { config: { application: { authentication: { allowPublicPermission: true } } } } as Parameters<typeof startAuthBroker>[0];

  it('with allow-public-permission, a public read lets a request without a token read that entity only, never write', async () => {
    const { as, grant } = await fresh(PUBLIC_ON);
    await grant('alice', perm({ id: ROOM1 }, PUBLIC, 'read'));
    const read = await as(undefined, 'GET', `${E}/${enc(ROOM1)}`);
    expect(read.status, read.text).toBe(200);
    expect(read.json.id).toBe(ROOM1);
    expect((await as(undefined, 'GET', `/ngsi-ld/v1/temporal/entities/${enc(ROOM1)}`)).status).toBe(200);
    expectProblem(await as(undefined, 'PATCH', `${E}/${enc(ROOM1)}/attrs`, { temperature: { type: 'Property', value: 1 } }), 401);
    expectProblem(await as(undefined, 'DELETE', `${E}/${enc(ROOM1)}`), 401);
    // A read public permissions do not allow: 401 with the scheme to authenticate with, not 403 [RFC 9110 §15.5.2].
    const refused = await as(undefined, 'GET', `${E}/${enc(ROOM2)}`);
    expectProblem(refused, 401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
    expectProblem(await as(undefined, 'GET', `/ngsi-ld/v1/temporal/entities/${enc(ROOM2)}`), 401);
    const listed = await as(undefined, 'GET', `${E}?type=Room`);
    expect(listed.json.map((e: { id: string }) => e.id)).toEqual([ROOM1]);
    // An authenticated subject is public too.
    expect((await as('carol', 'GET', `${E}/${enc(ROOM1)}`)).status).toBe(200);
    expectProblem(await as('carol', 'GET', `${E}/${enc(ROOM2)}`), 403);
  });

  it('refuses a public permission other than read (400)', async () => {
    const { as } = await fresh(PUBLIC_ON);
    expectProblem(await as('alice', 'POST', P, perm({ id: ROOM1 }, PUBLIC, 'write')), 400, /read/);
    const id = await grantPublicRead(as);
    expectProblem(await as('alice', 'PATCH', `${P}/${enc(id)}`, { action: 'write' }), 400, /read/);
  });

  it('without the option, a public permission cannot be created, nor reached by a patch (400)', async () => {
    const { as, grant } = await fresh();
    expectProblem(await as('alice', 'POST', P, perm({ id: ROOM1 }, PUBLIC, 'read')), 400, /allow-public-permission/);
    const id = await grant('alice', perm({ id: ROOM1 }, 'bob', 'read'));
    expectProblem(await as('alice', 'PATCH', `${P}/${enc(id)}`, { assignee: PUBLIC }), 400, /allow-public-permission/);
    expectProblem(await as(undefined, 'GET', `${E}/${enc(ROOM1)}`), 401);
  });
});

async function grantPublicRead(as: Req): Promise<string> {
  const res = await as('alice', 'POST', P, perm({ id: ROOM1 }, PUBLIC, 'read'));
  expect(res.status, res.text).toBe(201);
  return locationId(res);
}
