// The owner of an entity id across its lives (interface 2.6 rule 4, 5 rule 4): the first creator
// owns the id; deleting and creating it again grants no other owner, and the owner keeps its rights.

import { describe, expect, it } from 'vitest';
import { E, P, ROOM1, enc, expectProblem, perm, worldsClosedAfterEach } from '../../helpers/permission-world.js';

const fresh = worldsClosedAfterEach();
const T = '/ngsi-ld/v1/temporal/entities';

describe('the owner of an entity id', () => {
  it('stays the first creator when a writer creates the id again after its owner deleted it', async () => {
    const w = await fresh();
    const owners = async (): Promise<string[]> => {
      const res = await w.as('root', 'GET', `${P}?action=own&targetId=${enc(ROOM1)}`);
      expect(res.status, res.text).toBe(200);
      return (res.json as Array<{ assignee: string }>).map((p) => p.assignee);
    };
    expect(await owners()).toEqual(['alice']);
    await w.grant('alice', perm({ id: ROOM1 }, 'bob', 'write'));

    expect((await w.as('alice', 'DELETE', `${E}/${enc(ROOM1)}`)).status).toBe(204);
    // The id keeps its permissions: carol, who holds none, may not create it again; bob, a writer, may.
    expectProblem(await w.as('carol', 'POST', E, { id: ROOM1, type: 'Room', temperature: { type: 'Property', value: 1 } }), 403);
    const again = await w.as('bob', 'POST', E, { id: ROOM1, type: 'Room', temperature: { type: 'Property', value: 21 } });
    expect(again.status, again.text).toBe(201);

    expect(await owners()).toEqual(['alice']);
    expect((await w.as('alice', 'GET', `${E}/${enc(ROOM1)}`)).json).toMatchObject({ temperature: { value: 21 } });
    // Both lives' history, and the deletion between them, are the owner's to read.
    const history = await w.as('alice', 'GET', `${T}/${enc(ROOM1)}?attrs=temperature&timeproperty=modifiedAt`);
    expect(history.status, history.text).toBe(200);
    expect((history.json as { temperature: Array<{ value: number }> }).temperature.map((i) => i.value).sort()).toEqual([20, 21, 'urn:ngsi-ld:null']);
    // The writer did not become an administrator by creating the id again; the owner is one.
    expectProblem(await w.as('bob', 'DELETE', `${E}/${enc(ROOM1)}`), 403);
    expect((await w.as('alice', 'DELETE', `${E}/${enc(ROOM1)}`)).status).toBe(204);
  });

  it('an owner permission cannot be changed or deleted through its id', async () => {
    const w = await fresh();
    const list = await w.as('alice', 'GET', `${P}?action=own&targetId=${enc(ROOM1)}`);
    const [own] = list.json as Array<{ id: string }>;
    expect(own?.id).toMatch(/^urn:ngsi-ld:Permission:/);
    const got = await w.as('alice', 'GET', `${P}/${enc(own?.id ?? '')}`);
    expect(got.status, got.text).toBe(200);
    expect(got.json).toMatchObject({ id: own?.id, action: 'own', assignee: 'alice', target: { id: ROOM1 } });
    expectProblem(await w.as('alice', 'DELETE', `${P}/${enc(own?.id ?? '')}`), 400, /own/);
    expectProblem(await w.as('root', 'PATCH', `${P}/${enc(own?.id ?? '')}`, { assignee: 'bob' }), 400, /own/);
    expect((await w.as('alice', 'GET', `${P}/${enc(own?.id ?? '')}`)).json).toMatchObject({ assignee: 'alice' });
  });
});
