// The rights of subjects now, as the notifications of their subscriptions follow them: from the
// built-in identity provider's users, else from the rights of a user's last token kept in the
// subject registry; kept per subject until told of a change.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IdentitySubject } from '../../src/lib/index.js';
import { createSubjectRightsCache } from '../../src/permissions/index.js';
import type { Store } from '../../src/store/index.js';
import { memoryStore } from '../store/helpers.js';

const CLAIMS = { adminRole: 'service-admin', claimsPaths: ['realm_access.roles', 'groups'] };
const SNAPSHOT = { admin: true, assignees: ['snapshot'] };
const AUTHENTICATED = 'urn:ngsi-ld:Subject:authenticated';

let store: Store;
beforeEach(() => {
  store = memoryStore();
});
afterEach(() => store.close());

const user = (id: string, access?: { admin: boolean; assignees: string[]; local: boolean }) =>
  store.subjects.put({ id, kind: 'User', info: { username: id, groups: [], ...(access ? { access } : {}) }, updatedAt: 0 });

describe('subject rights', () => {
  it('gives the rights of the last token the registry kept, until told the subject changed', () => {
    user('alice', { admin: false, assignees: ['alice', 'operators'], local: false });
    const rights = createSubjectRightsCache({ subjects: store.subjects, claims: CLAIMS });
    expect(rights.of('alice', SNAPSHOT)).toEqual({ admin: false, assignees: ['alice', 'operators'] });
    user('alice', { admin: false, assignees: ['alice'], local: false });
    // Kept: no read of the registry until a change is told.
    expect(rights.of('alice', SNAPSHOT)).toEqual({ admin: false, assignees: ['alice', 'operators'] });
    rights.changed('alice');
    expect(rights.of('alice', SNAPSHOT)).toEqual({ admin: false, assignees: ['alice'] });
  });

  it('treats a subject missing from the registry as deleted, and one without kept rights by its snapshot', () => {
    user('bob');
    const rights = createSubjectRightsCache({ subjects: store.subjects, claims: CLAIMS });
    expect(rights.of('nobody', SNAPSHOT)).toBeUndefined();
    expect(rights.of('bob', SNAPSHOT)).toEqual(SNAPSHOT);
    store.subjects.delete('bob');
    rights.changed();
    expect(rights.of('bob', SNAPSHOT)).toBeUndefined();
  });

  it('reads a user of the built-in identity provider from its roles and groups now, and none once it is removed', () => {
    const provider = new Map<string, IdentitySubject>([['urn:ngsi-ld:User:carol', { sub: 'urn:ngsi-ld:User:carol', roles: ['service-admin'], groups: ['/site-a'] }]]);
    user('urn:ngsi-ld:User:carol', { admin: true, assignees: [], local: true });
    user('dave', { admin: false, assignees: ['dave'], local: false });
    const rights = createSubjectRightsCache({ subjects: store.subjects, localSubject: (sub) => provider.get(sub), claims: CLAIMS });
    const carol = rights.of('urn:ngsi-ld:User:carol', SNAPSHOT);
    expect(carol?.admin).toBe(true);
    expect(carol?.assignees).toEqual(expect.arrayContaining(['urn:ngsi-ld:User:carol', 'service-admin', '/site-a', AUTHENTICATED]));
    provider.set('urn:ngsi-ld:User:carol', { sub: 'urn:ngsi-ld:User:carol', roles: [], groups: [] });
    rights.changed();
    expect(rights.of('urn:ngsi-ld:User:carol', SNAPSHOT)).toMatchObject({ admin: false });
    expect(rights.of('urn:ngsi-ld:User:carol', SNAPSHOT)?.assignees).not.toContain('/site-a');
    provider.delete('urn:ngsi-ld:User:carol');
    rights.changed();
    expect(rights.of('urn:ngsi-ld:User:carol', SNAPSHOT)).toBeUndefined();
    // A subject of another identity provider keeps the rights of its last token.
    expect(rights.of('dave', SNAPSHOT)).toEqual({ admin: false, assignees: ['dave'] });
  });
});
