// Instance ids as temporal reads give them back: canonical instance URNs (stored as 16 bytes) and any
// other id (stored verbatim) come back as written, whatever characters they start with.

import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { HistoryInstance, Store } from '../../../src/store/index.js';
import { memoryStore, NS, property } from '../helpers.js';

const E = 'urn:ngsi-ld:Sensor:i1';
const ATTR = NS + 'level';
const T = Date.UTC(2024, 2, 3);

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

describe('instance ids of history reads', () => {
  it('reads back canonical and verbatim ids, in both orders', () => {
    const store = memoryStore();
    stores.push(store);
    const ids = [
      `urn:ngsi-ld:Instance:${randomUUID()}`, 'urn:ngsi-ld:Instance:not-a-uuid', '~tilde', `urn:ngsi-ld:Instance:${randomUUID()}`,
      '0123456789abcdef0123456789abcdef', `urn:ngsi-ld:Instance:${randomUUID().toUpperCase()}`, '',
      // The length of a canonical URN, but not a canonical uuid: no dashes, a dash misplaced, a
      // character just outside the hex digits, a non-ASCII one.
      'urn:ngsi-ld:Instance:0123456789abcdef0123456789abcdef0123', 'urn:ngsi-ld:Instance:0123456-89abc-def0-1234-56789abcdef0',
      'urn:ngsi-ld:Instance:0123456g-89ab-cdef-0123-456789abcdef', 'urn:ngsi-ld:Instance:01234567-89ab-cdef-0123-456789abcde\u00e9',
    ];
    const instances: HistoryInstance[] = ids.map((instanceId, i) => ({
      entityId: E, attr: ATTR, instanceId, createdAt: T + i, modifiedAt: T + i, observedAt: T + i,
      attribute: property(i, { createdAt: T + i, modifiedAt: T + i, observedAt: T + i }),
    }));
    store.history.append('', instances);
    const series = store.history.series({ tenant: '' }, [E]);
    const w = { timeproperty: 'observedAt' } as const;
    expect(store.history.read(series, w, { order: 'asc', skip: 0, limit: Infinity }).map((r) => r.instance.instanceId)).toEqual(ids);
    expect(store.history.read(series, w, { order: 'desc', skip: 1, limit: 3 }).map((r) => r.instance.instanceId))
      .toEqual([...ids].reverse().slice(1, 4));
    expect(store.history.read(series, w, { order: 'asc', skip: 0, limit: Infinity }).map((r) => r.instance))
      .toEqual(store.history.listForEntity({ tenant: '' }, E));
  });
});
