// The identity repository: users and clients unique by name and by sub, listing, removal, and
// signing keys newest first.

import { afterEach, describe, expect, it } from 'vitest';
import { AlreadyExistsError } from '../../../src/ngsi/index.js';
import type { Store } from '../../../src/store/index.js';
import { memoryStore, T0 } from '../helpers.js';

let store: Store;
afterEach(() => store.close());

const user = (username: string, sub: string) => ({ username, sub, passwordHash: 'h', roles: ['r'], groups: [], createdAt: T0 });
const client = (clientId: string, sub: string) => ({ clientId, sub, secretHash: 'h', roles: [], groups: ['g'], createdAt: T0 });

describe('identity repository', () => {
  it('stores users, unique by username and by sub', () => {
    store = memoryStore();
    store.identity.insertUser({ ...user('alice', 'urn:ngsi-ld:User:1'), givenName: 'Alice' });
    expect(store.identity.findUser('alice')).toEqual({ ...user('alice', 'urn:ngsi-ld:User:1'), givenName: 'Alice' });
    expect(() => store.identity.insertUser(user('alice', 'urn:ngsi-ld:User:2'))).toThrow(AlreadyExistsError);
    expect(() => store.identity.insertUser(user('bob', 'urn:ngsi-ld:User:1'))).toThrow(AlreadyExistsError);
    store.identity.insertUser(user('bob', 'urn:ngsi-ld:User:2'));
    expect(store.identity.listUsers({ limit: 10, offset: 0 }).map((u) => u.username)).toEqual(['alice', 'bob']);
    expect(store.identity.listUsers({ limit: 1, offset: 1 }).map((u) => u.username)).toEqual(['bob']);
    expect(store.identity.deleteUser('alice')).toBe(true);
    expect(store.identity.deleteUser('alice')).toBe(false);
    expect(store.identity.findUser('alice')).toBeUndefined();
  });

  it('stores clients, unique by client id and by sub', () => {
    store = memoryStore();
    store.identity.insertClient(client('gw', 'urn:ngsi-ld:Client:1'));
    expect(store.identity.findClient('gw')).toEqual(client('gw', 'urn:ngsi-ld:Client:1'));
    expect(() => store.identity.insertClient(client('gw', 'urn:ngsi-ld:Client:2'))).toThrow(AlreadyExistsError);
    expect(store.identity.listClients({ limit: 10, offset: 0 })).toHaveLength(1);
    expect(store.identity.deleteClient('gw')).toBe(true);
    expect(store.identity.findClient('gw')).toBeUndefined();
  });

  it('lists signing keys newest first and keeps the first of a kid', () => {
    store = memoryStore();
    const key = (kid: string, createdAt: number, alg = 'ES256') => ({ kid, alg, privateJwk: '{}', publicJwk: '{}', createdAt });
    store.identity.addSigningKey(key('a', T0));
    store.identity.addSigningKey(key('b', T0 + 1, 'RS256'));
    store.identity.addSigningKey(key('a', T0 + 2, 'RS256'));
    expect(store.identity.signingKeys()).toEqual([key('b', T0 + 1, 'RS256'), key('a', T0)]);
  });
});
