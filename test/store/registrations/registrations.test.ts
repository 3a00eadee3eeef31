// The registrations repository: documents per tenant, the match index kept in step with each write,
// candidates narrowed by type, attribute or entity id, and expired ones left out.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFixedClock, silentLogger } from '../../../src/lib/index.js';
import { openStore, type RegistrationKeys, type Store, type StoredRegistration } from '../../../src/store/index.js';

let store: Store;
beforeEach(() => {
  store = openStore({ path: ':memory:', historyBucket: 'month', log: silentLogger, clock: createFixedClock(0) });
});
afterEach(() => store.close());

const row = (id: string, more: Partial<StoredRegistration> = {}): StoredRegistration => ({ id, doc: { v: 1, n: id }, mode: 'inclusive', createdAt: 1, modifiedAt: 1, ...more });
const keys = (type: string | undefined, attr: string | undefined, id?: string): RegistrationKeys => ({
  entities: [{ info: 0, ...(type ? { type } : {}), ...(id ? { id } : {}) }],
  attrs: [{ info: 0, ...(attr ? { attr } : {}) }],
});
const ids = (found: StoredRegistration[]): string[] => found.map((r) => r.id);

describe('the registrations repository', () => {
  it('narrows candidates by type, attribute or entity id; index rows without a value match every value', () => {
    store.transaction(() => {
      store.registrations.insert('', row('r1'), keys('T1', 'a'));
      store.registrations.insert('', row('r2'), keys('T2', undefined, 'urn:x:2'));
      store.registrations.insert('', row('r3'), keys(undefined, 'b'));
      store.registrations.insert('other', row('r4'), keys('T1', 'a'));
    });
    const at = { now: 10, limit: 100 };
    expect(ids(store.registrations.candidates('', { ...at, types: ['T1'] }))).toEqual(['r1', 'r3']);
    expect(ids(store.registrations.candidates('', { ...at, types: ['T2', 'T1'] }))).toEqual(['r1', 'r2', 'r3']);
    expect(ids(store.registrations.candidates('', { ...at, attrs: ['a'] }))).toEqual(['r1', 'r2']);
    expect(ids(store.registrations.candidates('', { ...at, ids: ['urn:x:9'] }))).toEqual(['r1', 'r3']);
    expect(ids(store.registrations.candidates('', { ...at, types: ['T1'], limit: 1 }))).toEqual(['r1']);
    expect(ids(store.registrations.candidates('other', { ...at }))).toEqual(['r4']);
  });

  it('replaces the index with the document, leaves out expired and others\' registrations, and deletes both', () => {
    store.transaction(() => store.registrations.insert('', row('r1', { owner: 'alice', expiresAt: 50 }), keys('T1', 'a')));
    expect(() => store.transaction(() => store.registrations.insert('', row('r1'), keys('T1', 'a')))).toThrow(/Already exists/);
    store.transaction(() => store.registrations.replace('', row('r1', { owner: 'alice', mode: 'exclusive', expiresAt: 50 }), keys('T9', 'z')));
    expect(ids(store.registrations.candidates('', { now: 10, limit: 10, types: ['T1'] }))).toEqual([]);
    expect(ids(store.registrations.candidates('', { now: 10, limit: 10, types: ['T9'], owner: 'alice' }))).toEqual(['r1']);
    expect(ids(store.registrations.candidates('', { now: 10, limit: 10, types: ['T9'], owner: 'bob' }))).toEqual([]);
    expect(ids(store.registrations.withModes('', ['exclusive'], 10, 10))).toEqual(['r1']);
    expect(ids(store.registrations.candidates('', { now: 50, limit: 10, types: ['T9'] }))).toEqual([]);
    expect(store.registrations.get('', 'r1')).toMatchObject({ mode: 'exclusive', owner: 'alice', expiresAt: 50, doc: { n: 'r1' } });
    expect(store.transaction(() => store.registrations.delete('', 'r1'))).toBe(true);
    expect(store.registrations.get('', 'r1')).toBeUndefined();
    expect(ids(store.registrations.candidates('', { now: 10, limit: 10, types: ['T9'] }))).toEqual([]);
  });
});
