// The subject endpoints (interface 2.8, 4.8, 6 item 4; behaviour §8): groups and users learnt from the
// claims of valid tokens, listed by role, and the deletion of a user with or without its entities.

import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../../helpers/auth.js';
import { startTestBroker } from '../../helpers/broker.js';

const S = '/ngsi-ld/v1/auth/subjects';
const E = '/ngsi-ld/v1/entities';
const P = '/ngsi-ld/v1/auth/permissions';
const enc = encodeURIComponent;

/** Who asks: subject and the claims of its token. */
const WHO = {
  root: { sub: 'urn:ngsi-ld:User:root', claims: { roles: [ADMIN_ROLE], groups: ['/admins'] } },
  alice: {
    sub: 'alice',
    claims: { preferred_username: 'alice.a', given_name: 'Alice', family_name: 'Archer', email: 'alice@example.org', groups: ['/plant/operators', 'auditors'] },
  },
  bob: { sub: 'bob', claims: { groups: ['auditors'], locale: 'fr' } },
  carol: { sub: 'carol', claims: {} },
} satisfies Record<string, { sub: string; claims: NonNullable<Parameters<AuthBroker['token']>[1]> }>;
type Who = keyof typeof WHO;

let brokers: AuthBroker[] = [];
afterEach(async () => {
  await Promise.all(brokers.map((b) => b.close()));
  brokers = [];
});

async function fresh(opts: Parameters<typeof startAuthBroker>[0] = {}) {
  const b = await startAuthBroker(opts);
  brokers.push(b);
  const as = (who: Who, method: string, path: string, body?: unknown) =>
    b.as(WHO[who].sub, method, path, { ...(body !== undefined ? { body } : {}), claims: WHO[who].claims });
  // Every subject shows its token once, so the registry knows it.
  for (const who of Object.keys(WHO) as Who[]) expect((await as(who, 'GET', `${E}?type=Room`)).status).toBe(200);
  return { b, as };
}

const expectProblem = (res: { status: number; json: unknown; text: string }, status: number) => {
  expect(res.status, res.text).toBe(status);
  expect(res.json).toMatchObject({ status, type: expect.stringMatching(/^https:\/\/uri\.etsi\.org\/ngsi-ld\/errors\//) });
};

describe('subject endpoints without authentication [interface 4.8, 7]', () => {
  it('answer 204 with no body', async () => {
    const b = await startTestBroker();
    try {
      for (const path of [`${S}/groups`, `${S}/users`]) {
        const res = await b.request('GET', path);
        expect(res.status).toBe(204);
        expect(res.text).toBe('');
      }
      // Positive control: the broker itself answers.
      expect((await b.request('GET', `${E}?type=Room`)).status).toBe(200);
    } finally {
      await b.close();
    }
  });
});

describe('GET /auth/subjects/groups [interface 2.8, 4.8]', () => {
  it('gives a caller without the admin role its own groups, from its token, without isMemberOf', async () => {
    const { as } = await fresh();
    const res = await as('alice', 'GET', `${S}/groups`);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual([
      { id: 'urn:ngsi-ld:Group:%2Fplant%2Foperators', type: 'Group', name: { type: 'Property', value: 'plant/operators' } },
      { id: 'urn:ngsi-ld:Group:auditors', type: 'Group', name: { type: 'Property', value: 'auditors' } },
    ]);
    expect((await as('carol', 'GET', `${S}/groups`)).json).toEqual([]);
  });

  it('gives an admin every group seen in any token, each with isMemberOf', async () => {
    const { as } = await fresh();
    const res = await as('root', 'GET', `${S}/groups`);
    expect(res.status, res.text).toBe(200);
    const byName = Object.fromEntries((res.json as Array<{ name: { value: string }; isMemberOf: { value: boolean } }>)
      .map((g) => [g.name.value, g]));
    expect(Object.keys(byName).sort()).toEqual(['admins', 'auditors', 'plant/operators']);
    expect(byName['admins']).toEqual({ id: 'urn:ngsi-ld:Group:%2Fadmins', type: 'Group', name: { type: 'Property', value: 'admins' }, isMemberOf: { type: 'Property', value: true } });
    expect(byName['auditors']).toMatchObject({ type: 'Group', isMemberOf: { type: 'Property', value: false } });
    expect(byName['plant/operators']).toMatchObject({ isMemberOf: { type: 'Property', value: false } });
  });

  it('answers 400 to a query parameter', async () => {
    const { as } = await fresh();
    expectProblem(await as('alice', 'GET', `${S}/groups?limit=1`), 400);
  });
});

describe('GET /auth/subjects/users [interface 2.8, 4.8]', () => {
  it('gives an admin every user seen, with username, names and the other claims in subjectInfo', async () => {
    const { as } = await fresh();
    const res = await as('root', 'GET', `${S}/users`);
    expect(res.status, res.text).toBe(200);
    const byId = Object.fromEntries((res.json as Array<{ id: string }>).map((u) => [u.id, u]));
    expect(Object.keys(byId).sort()).toEqual(['urn:ngsi-ld:User:alice', 'urn:ngsi-ld:User:bob', 'urn:ngsi-ld:User:carol', 'urn:ngsi-ld:User:root']);
    expect(byId['urn:ngsi-ld:User:alice']).toEqual({
      id: 'urn:ngsi-ld:User:alice', type: 'User',
      username: { type: 'Property', value: 'alice.a' },
      givenName: { type: 'Property', value: 'Alice' },
      familyName: { type: 'Property', value: 'Archer' },
      subjectInfo: { type: 'Property', value: { email: 'alice@example.org' } },
    });
    // Without preferred_username the username is the subject; no other claim, no subjectInfo.
    expect(byId['urn:ngsi-ld:User:carol']).toEqual({ id: 'urn:ngsi-ld:User:carol', type: 'User', username: { type: 'Property', value: 'carol' } });
    expect(byId['urn:ngsi-ld:User:bob']).toMatchObject({ subjectInfo: { type: 'Property', value: { locale: 'fr' } } });
    // Token claims never show as user attributes.
    for (const claim of ['exp', 'iat', 'iss', 'sub', 'groups', 'realm_access', 'preferred_username']) expect(res.text).not.toContain(`"${claim}"`);
  });

  it('answers 403 ProblemDetails to a caller without the admin role', async () => {
    const { as } = await fresh();
    expectProblem(await as('alice', 'GET', `${S}/users`), 403);
    expect((await as('root', 'GET', `${S}/users`)).status).toBe(200);
  });
});

describe('DELETE /auth/subjects/users/{sub} [interface 6 item 4; behaviour §8]', () => {
  const room = (id: string) => ({ id, type: 'Room', temperature: { type: 'Property', value: 20 } });
  const ALICE1 = 'urn:ngsi-ld:Room:alice1';
  const ALICE2 = 'urn:ngsi-ld:Room:alice2';
  const BOB1 = 'urn:ngsi-ld:Room:bob1';

  async function owners(opts: Parameters<typeof startAuthBroker>[0] = {}) {
    const w = await fresh(opts);
    for (const [who, id] of [['alice', ALICE1], ['alice', ALICE2], ['bob', BOB1]] as const) {
      expect((await w.as(who, 'POST', E, room(id))).status).toBe(201);
    }
    // alice holds a permission on bob's room, by sub and by the URI the subject API shows.
    for (const assignee of ['alice', 'urn:ngsi-ld:User:alice']) {
      expect((await w.as('bob', 'POST', P, { type: 'Permission', target: { id: BOB1 }, assignee, action: 'read' })).status).toBe(201);
    }
    expect((await w.as('bob', 'POST', P, { type: 'Permission', target: { id: BOB1 }, assignee: 'carol', action: 'read' })).status).toBe(201);
    return w;
  }
  const userIds = async (w: Awaited<ReturnType<typeof fresh>>) => (await w.as('root', 'GET', `${S}/users`)).json.map((u: { id: string }) => u.id);

  it('answers 403 to a caller without the admin role and 404 to an unknown user', async () => {
    const w = await owners();
    expectProblem(await w.as('bob', 'DELETE', `${S}/users/alice`), 403);
    expectProblem(await w.as('alice', 'DELETE', `${S}/users/alice`), 403);
    expectProblem(await w.as('root', 'DELETE', `${S}/users/nobody`), 404);
    // Only administrators learn which users exist.
    expectProblem(await w.as('bob', 'DELETE', `${S}/users/nobody`), 403);
    expect(await userIds(w)).toContain('urn:ngsi-ld:User:alice');
  });

  it('removes the user and every permission assigned to it; without cascade its entities stay', async () => {
    const w = await owners();
    const res = await w.as('root', 'DELETE', `${S}/users/alice`);
    expect(res.status, res.text).toBe(204);
    expect(await userIds(w)).not.toContain('urn:ngsi-ld:User:alice');
    const left = await w.as('root', 'GET', `${P}?action=read&targetId=${enc(BOB1)}`);
    expect(left.json.map((p: { assignee: string }) => p.assignee)).toEqual(['bob', 'carol']);
    expect((await w.as('root', 'GET', `${P}?action=own&assignee=alice`)).json).toEqual([]);
    for (const id of [ALICE1, ALICE2, BOB1]) expect((await w.as('root', 'GET', `${E}/${enc(id)}`)).status).toBe(200);
    expectProblem(await w.as('root', 'DELETE', `${S}/users/alice`), 404);
  });

  it('accepts the user id as the subject API shows it', async () => {
    const w = await owners();
    expect((await w.as('root', 'DELETE', `${S}/users/${enc('urn:ngsi-ld:User:alice')}`)).status).toBe(204);
    expect(await userIds(w)).not.toContain('urn:ngsi-ld:User:alice');
  });

  it('with search.on-owner-delete-cascade-entities, deletes every entity it owned for good, and only those', async () => {
    const w = await owners({ config: { search: { onOwnerDeleteCascadeEntities: true } } });
    expect((await w.as('root', 'DELETE', `${S}/users/alice`)).status).toBe(204);
    for (const id of [ALICE1, ALICE2]) {
      expectProblem(await w.as('root', 'GET', `${E}/${enc(id)}`), 404);
      expectProblem(await w.as('root', 'GET', `/ngsi-ld/v1/temporal/entities/${enc(id)}`), 404);
    }
    expect((await w.as('root', 'GET', `${E}/${enc(BOB1)}`)).status).toBe(200);
    expect((await w.as('root', 'GET', `/ngsi-ld/v1/temporal/entities/${enc(BOB1)}`)).status).toBe(200);
    expect((await w.as('root', 'GET', `${E}?type=Room`)).json.map((e: { id: string }) => e.id)).toEqual([BOB1]);
    // The ids are free again: their permissions went with them.
    expect((await w.as('bob', 'POST', E, room(ALICE1))).status).toBe(201);
    expect((await w.as('root', 'GET', `${P}?action=own&targetId=${enc(ALICE1)}`)).json.map((p: { assignee: string }) => p.assignee)).toEqual(['bob']);
  });
});
