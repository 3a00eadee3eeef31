// Persistence of cached and implicitly created JSON-LD contexts.

import { describe, expect, it } from 'vitest';
import type { PersistedContext } from '../../../src/lib/index.js';
import { memoryStore, T0 } from '../helpers.js';

const ctx = (id: string, url: string, at = T0): PersistedContext => ({ id, url, body: `{"@context":{"a":"${id}"}}`, kind: 'Cached', createdAt: at });

describe('store context persistence', () => {
  it('puts, gets by url and by id, lists and deletes', () => {
    const store = memoryStore();
    const a = ctx('c1', 'https://example.org/a.jsonld');
    const b: PersistedContext = { ...ctx('c2', 'urn:ngsi-ld:Context:2', T0 + 1), kind: 'ImplicitlyCreated' };
    store.contexts.put(a);
    store.contexts.put(b);
    expect(store.contexts.get(a.url)).toEqual(a);
    expect(store.contexts.getById('c2')).toEqual(b);
    expect(store.contexts.list()).toEqual([a, b]);
    expect(store.contexts.delete('c1')).toBe(true);
    expect(store.contexts.delete('c1')).toBe(false);
    expect(store.contexts.get(a.url)).toBeUndefined();
    expect(store.contexts.list()).toEqual([b]);
    store.close();
  });

  it('upserts by url', () => {
    const store = memoryStore();
    store.contexts.put(ctx('c1', 'https://example.org/a.jsonld'));
    const newer = { ...ctx('c9', 'https://example.org/a.jsonld', T0 + 10), body: '{"@context":{}}' };
    store.contexts.put(newer);
    expect(store.contexts.list()).toEqual([newer]);
    expect(store.contexts.getById('c1')).toBeUndefined();
    store.close();
  });

  it('returns undefined for unknown contexts', () => {
    const store = memoryStore();
    expect(store.contexts.get('https://nowhere')).toBeUndefined();
    expect(store.contexts.getById('nope')).toBeUndefined();
    store.close();
  });
});
