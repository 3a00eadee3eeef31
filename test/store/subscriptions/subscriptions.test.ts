// The subscription repository: insert (AlreadyExists per tenant), get, paged list with count,
// replace keeping counters, delete, listAll across tenants, and recordDelivery.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AlreadyExistsError } from '../../../src/ngsi/index.js';
import type { Store, StoredSubscription } from '../../../src/store/index.js';
import { memoryStore, T0 } from '../helpers.js';

let store: Store;
beforeEach(() => {
  store = memoryStore();
});
afterEach(() => store.close());

const stored = (id: string, doc: unknown = { v: 1, name: id }): StoredSubscription =>
  ({ id, doc, createdAt: T0, modifiedAt: T0, delivery: { timesSent: 0 } });

describe('subscription repository', () => {
  it('inserts and gets back the document, refusing an existing id in the same tenant only', () => {
    store.subscriptions.insert('', stored('urn:s:1'));
    expect(store.subscriptions.get('', 'urn:s:1')).toEqual(stored('urn:s:1'));
    expect(() => store.subscriptions.insert('', stored('urn:s:1'))).toThrow(AlreadyExistsError);
    store.subscriptions.insert('t2', stored('urn:s:1'));
    expect(store.subscriptions.get('t3', 'urn:s:1')).toBeUndefined();
  });

  it('lists a tenant in creation order, a page at a time, with a count when asked', () => {
    for (const n of [3, 1, 2]) store.subscriptions.insert('', stored(`urn:s:${n}`));
    store.subscriptions.insert('t2', stored('urn:s:9'));
    const page = store.subscriptions.list('', { limit: 2, offset: 1, count: true });
    expect(page.items.map((s) => s.id)).toEqual(['urn:s:1', 'urn:s:2']);
    expect(page.count).toBe(3);
    expect(store.subscriptions.list('', { limit: 0, offset: 0, count: false })).toEqual({ items: [] });
    expect(store.subscriptions.listAll().map((e) => `${e.tenant}/${e.sub.id}`)).toEqual(['/urn:s:3', '/urn:s:1', '/urn:s:2', 't2/urn:s:9']);
  });

  it('replaces the document and keeps the delivery counters; deletes', () => {
    store.subscriptions.insert('', stored('urn:s:1'));
    store.subscriptions.recordDelivery('', 'urn:s:1', { at: T0 + 1, ok: true });
    expect(store.subscriptions.replace('', 'urn:s:1', { v: 1, name: 'new' }, T0 + 2)).toBe(true);
    expect(store.subscriptions.get('', 'urn:s:1')).toMatchObject({ doc: { name: 'new' }, modifiedAt: T0 + 2, delivery: { timesSent: 1 } });
    expect(store.subscriptions.replace('', 'urn:s:none', {}, T0)).toBe(false);
    expect(store.subscriptions.delete('', 'urn:s:1')).toBe(true);
    expect(store.subscriptions.delete('', 'urn:s:1')).toBe(false);
  });

  it('records deliveries: counts, instants, status and the last error', () => {
    store.subscriptions.insert('', stored('urn:s:1'));
    expect(store.subscriptions.recordDelivery('', 'urn:s:1', { at: T0 + 1, ok: true }))
      .toEqual({ timesSent: 1, lastNotification: T0 + 1, lastSuccess: T0 + 1, status: 'ok' });
    expect(store.subscriptions.recordDelivery('', 'urn:s:1', { at: T0 + 2, ok: false, error: 'HTTP 503' })).toEqual({
      timesSent: 2, lastNotification: T0 + 2, lastSuccess: T0 + 1, lastFailure: T0 + 2, status: 'failed', lastError: 'HTTP 503',
    });
    expect(store.subscriptions.recordDelivery('', 'urn:s:none', { at: T0, ok: true })).toBeUndefined();
  });
});
