// Scopes grant nothing to their writers (docs/auth.md, Scopes): the first writer of a scope gets no
// right on the entities others put in it, whether the scope came with a create or an update; a
// permission by scope comes from an administrator and works as the permission model says.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuthBroker } from '../../helpers/auth.js';
import { E, P, asIn, enc, entity, expectProblem, perm, type Req } from '../../helpers/permission-world.js';
import { startAuthBroker } from '../../helpers/auth.js';

const BOBS = 'urn:ngsi-ld:Room:bob';
const ALICES = 'urn:ngsi-ld:Room:alice';
const patch = { temperature: { type: 'Property', value: 31 } };

describe('scope squatting: the first writer of a scope', () => {
  let b: AuthBroker;
  let as: Req;
  beforeEach(async () => {
    b = await startAuthBroker();
    as = asIn(b);
    // bob writes into /plantA first, alice after him.
    expect((await as('bob', 'POST', E, entity(BOBS, 'Room', '/plantA'))).status).toBe(201);
    expect((await as('alice', 'POST', E, entity(ALICES, 'Room', '/plantA'))).status).toBe(201);
  });
  afterEach(() => b.close());

  it("can neither read, patch, delete nor share another subject's entity in that scope (403) [interface 2.6 rule 4]", async () => {
    expectProblem(await as('bob', 'GET', `${E}/${enc(ALICES)}`), 403);
    expectProblem(await as('bob', 'PATCH', `${E}/${enc(ALICES)}/attrs`, patch), 403);
    expectProblem(await as('bob', 'DELETE', `${E}/${enc(ALICES)}`), 403);
    expectProblem(await as('bob', 'POST', P, perm({ id: ALICES }, 'bob', 'write')), 403);
    expectProblem(await as('bob', 'POST', P, perm({ scopes: ['/plantA'] }, 'carol', 'read')), 403);
    expectProblem(await as('bob', 'GET', `/ngsi-ld/v1/temporal/entities/${enc(ALICES)}`), 403);
    // Queries silently leave it out; his own entity in the scope stays his.
    const listed = await as('bob', 'GET', `${E}?type=Room&scopeQ=/plantA`);
    expect(listed.json.map((e: { id: string }) => e.id)).toEqual([BOBS]);
    const batch = await as('bob', 'POST', '/ngsi-ld/v1/entityOperations/upsert?options=update', [{ id: ALICES, type: 'Room', ...patch }]);
    expect(batch.status, batch.text).toBe(207);
    expect(batch.json.errors).toEqual([expect.objectContaining({ entityId: ALICES, error: expect.objectContaining({ status: 403 }) })]);
    // He owns his entity, and nothing by scope.
    const owns = await as('bob', 'GET', `${P}?action=own`);
    expect(owns.json.map((p: { target: unknown }) => p.target)).toEqual([{ id: BOBS }]);
    expect((await as('bob', 'PATCH', `${E}/${enc(BOBS)}/attrs`, patch)).status).toBe(204);
    // Alice's entity is untouched.
    expect((await as('alice', 'GET', `${E}/${enc(ALICES)}`)).json.temperature.value).toBe(20);
  });

  it('gets nothing either when the scope comes with an update of his own entity', async () => {
    const moved = await as('bob', 'PATCH', `${E}/${enc(BOBS)}`, { scope: '/plantB' });
    expect(moved.status, moved.text).toBe(204);
    const alices = 'urn:ngsi-ld:Room:alice-b';
    expect((await as('alice', 'POST', E, entity(alices, 'Room', '/plantB'))).status).toBe(201);
    expectProblem(await as('bob', 'GET', `${E}/${enc(alices)}`), 403);
    expectProblem(await as('bob', 'DELETE', `${E}/${enc(alices)}`), 403);
  });

  it('leaves the creator every right on her entity', async () => {
    expect((await as('alice', 'GET', `${E}/${enc(ALICES)}`)).status).toBe(200);
    expect((await as('alice', 'PATCH', `${E}/${enc(ALICES)}/attrs`, patch)).status).toBe(204);
    expect((await as('alice', 'POST', P, perm({ id: ALICES }, 'carol', 'read'))).status).toBe(201);
    expect((await as('carol', 'GET', `${E}/${enc(ALICES)}`)).status).toBe(200);
    expect((await as('alice', 'DELETE', `${E}/${enc(ALICES)}`)).status).toBe(204);
  });

  it("keeps an administrator's permission by scope working on every entity of the scope", async () => {
    expect((await as('root', 'POST', P, perm({ scopes: ['/plantA'] }, 'carol', 'read'))).status).toBe(201);
    expect((await as('root', 'POST', P, perm({ scopes: ['/plantA'] }, 'dave', 'admin'))).status).toBe(201);
    expect((await as('carol', 'GET', `${E}/${enc(ALICES)}`)).status).toBe(200);
    expect((await as('carol', 'GET', `${E}/${enc(BOBS)}`)).status).toBe(200);
    expectProblem(await as('carol', 'PATCH', `${E}/${enc(ALICES)}/attrs`, patch), 403);
    // Admin by scope, given by an administrator, administers the entities of the scope.
    expect((await as('dave', 'POST', P, perm({ id: ALICES }, 'olga', 'read'))).status).toBe(201);
    expect((await as('dave', 'POST', P, perm({ scopes: ['/plantA'] }, 'olga', 'write'))).status).toBe(201);
    expect((await as('dave', 'DELETE', `${E}/${enc(BOBS)}`)).status).toBe(204);
  });
});
