// Purge Entities with authentication on: the selection is what the caller may read, and every
// selected entity needs the right the purge takes (admin to delete, write to drop attributes),
// checked before anything is written: one refused entity refuses the whole purge, nothing deleted.

import { describe, expect, it } from 'vitest';
import { E, ROOM1, ROOM2, enc, expectProblem, perm, worldsClosedAfterEach } from '../../helpers/permission-world.js';

const fresh = worldsClosedAfterEach();

describe('a purge with authentication on', () => {
  it('403 and nothing deleted when one selected entity may be read but not deleted', async () => {
    const w = await fresh();
    // bob owns a Room of his own, and may read (not delete) alice's Room:1; Room:2 he cannot read.
    expect((await w.as('bob', 'POST', E, { id: 'urn:ngsi-ld:Room:bob', type: 'Room' })).status).toBe(201);
    await w.grant('alice', perm({ id: ROOM1 }, 'bob', 'read'));

    expectProblem(await w.as('bob', 'DELETE', `${E}?type=Room`), 403, /urn:ngsi-ld:Room:1/);
    for (const id of ['urn:ngsi-ld:Room:bob', ROOM1, ROOM2]) {
      expect((await w.as('root', 'GET', `${E}/${enc(id)}`)).status, id).toBe(200);
    }
    // Dropping an attribute needs write on each selected entity: refused the same way.
    expectProblem(await w.as('bob', 'DELETE', `${E}?type=Room&drop=temperature`), 403);
    expect((await w.as('root', 'GET', `${E}/${enc(ROOM1)}`)).json).toHaveProperty('temperature');
  });

  it('deletes what the caller may delete and leaves what it may not read alone', async () => {
    const w = await fresh();
    expect((await w.as('bob', 'POST', E, { id: 'urn:ngsi-ld:Room:bob', type: 'Room' })).status).toBe(201);
    expect((await w.as('bob', 'DELETE', `${E}?type=Room`)).status).toBe(204);
    expect((await w.as('root', 'GET', `${E}/${enc('urn:ngsi-ld:Room:bob')}`)).status).toBe(404);
    expect((await w.as('root', 'GET', `${E}/${enc(ROOM1)}`)).status).toBe(200);
    expect((await w.as('root', 'GET', `${E}/${enc(ROOM2)}`)).status).toBe(200);
  });
});
