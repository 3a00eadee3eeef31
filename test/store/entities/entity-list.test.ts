// Entity listing: creation order, type and id filters, paging and count.

import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/index.js';
import { entity, memoryStore, NS } from '../helpers.js';

const A = NS + 'A';
const B = NS + 'B';
const C = NS + 'C';
const id = (n: number): string => `urn:ngsi-ld:E:${String(n).padStart(2, '0')}`;
const ids = (r: { entities: Array<{ id: string }> }): string[] => r.entities.map((e) => e.id);

describe('store entities: list', () => {
  let store: Store;
  beforeEach(() => {
    store = memoryStore();
    // Created in a shuffled id order so creation order differs from id order.
    for (const n of [5, 1, 4, 2, 3, 6]) store.entities.insert('', entity(id(n), n % 2 === 0 ? [A] : n === 3 ? [A, B] : [B]));
    store.entities.insert('other', entity(id(7), [A]));
    return () => store.close();
  });

  it('returns live entities in creation order', () => {
    expect(ids(store.entities.list({ tenant: '' }, { limit: 100, offset: 0, count: false }))).toEqual([5, 1, 4, 2, 3, 6].map(id));
  });

  it('filters by any of the types', () => {
    expect(ids(store.entities.list({ tenant: '' }, { types: [A], limit: 100, offset: 0, count: false }))).toEqual([4, 2, 3, 6].map(id));
    expect(ids(store.entities.list({ tenant: '' }, { types: [B, A], limit: 100, offset: 0, count: false }))).toEqual([5, 1, 4, 2, 3, 6].map(id));
    expect(ids(store.entities.list({ tenant: '' }, { types: [C], limit: 100, offset: 0, count: true }))).toEqual([]);
    expect(store.entities.list({ tenant: '' }, { types: [C, NS + 'Never'], limit: 10, offset: 0, count: true }).count).toBe(0);
  });

  it('filters by any of the ids, combined with types', () => {
    expect(ids(store.entities.list({ tenant: '' }, { ids: [id(3), id(5), id(9)], limit: 100, offset: 0, count: false }))).toEqual([5, 3].map(id));
    expect(ids(store.entities.list({ tenant: '' }, { ids: [id(3), id(5)], types: [A], limit: 100, offset: 0, count: false }))).toEqual([id(3)]);
  });

  it('pages with limit and offset and counts only when asked', () => {
    const page = store.entities.list({ tenant: '' }, { types: [A], limit: 2, offset: 1, count: true });
    expect(ids(page)).toEqual([2, 3].map(id));
    expect(page.count).toBe(4);
    const noCount = store.entities.list({ tenant: '' }, { limit: 2, offset: 4, count: false });
    expect(ids(noCount)).toEqual([3, 6].map(id));
    expect('count' in noCount).toBe(false);
  });

  it('counts without fetching when limit is 0', () => {
    expect(store.entities.list({ tenant: '' }, { ids: [id(1), id(2)], limit: 0, offset: 0, count: true })).toEqual({ entities: [], count: 2 });
  });

  it('leaves out soft-deleted entities and other tenants', () => {
    store.entities.markDeleted('', id(4), 1);
    expect(store.entities.list({ tenant: '' }, { types: [A], limit: 100, offset: 0, count: true })).toMatchObject({ count: 3 });
    expect(ids(store.entities.list({ tenant: 'other' }, { limit: 100, offset: 0, count: false }))).toEqual([id(7)]);
  });

  it('treats empty type and id lists as no constraint', () => {
    expect(store.entities.list({ tenant: '' }, { types: [], ids: [], limit: 100, offset: 0, count: true }).count).toBe(6);
  });
});

describe('store entities: list by attributes', () => {
  it('keeps entities having any of the attributes, and follows attribute changes', () => {
    const store = memoryStore();
    const p = { kind: 'Property' as const, value: 1, createdAt: 0, modifiedAt: 0, sub: {} };
    store.entities.insert('', entity('urn:ngsi-ld:E:1', [A], { [NS + 'x']: [p] }));
    store.entities.insert('', entity('urn:ngsi-ld:E:2', [A], { [NS + 'y']: [p] }));
    store.entities.insert('', entity('urn:ngsi-ld:E:3', [A], {}));
    const q = (attrs: string[]) => ids(store.entities.list({ tenant: '' }, { attrs, limit: 10, offset: 0, count: true }));
    expect(q([NS + 'x'])).toEqual(['urn:ngsi-ld:E:1']);
    expect(q([NS + 'x', NS + 'y'])).toEqual(['urn:ngsi-ld:E:1', 'urn:ngsi-ld:E:2']);
    expect(q([NS + 'never'])).toEqual([]);
    store.entities.update('', entity('urn:ngsi-ld:E:3', [A], { [NS + 'x']: [p] }));
    expect(q([NS + 'x'])).toEqual(['urn:ngsi-ld:E:1', 'urn:ngsi-ld:E:3']);
    store.close();
  });
});

describe('store entities: list by idPattern', () => {
  it('matches ids against the pattern, with paging and count', () => {
    const store = memoryStore();
    for (const n of [1, 2, 3, 10, 11]) store.entities.insert('', entity(`urn:ngsi-ld:E:${n}`, [A]));
    const r = store.entities.list({ tenant: '' }, { filters: [{ kind: 'idPattern', pattern: '^urn:ngsi-ld:E:1\\d?$' }], limit: 2, offset: 0, count: true });
    expect(ids(r)).toEqual(['urn:ngsi-ld:E:1', 'urn:ngsi-ld:E:10']);
    expect(r.count).toBe(3);
    store.close();
  });
});
