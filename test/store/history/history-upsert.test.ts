// Observed instances replace a stored instance of the same series at the same instant, whichever
// path stored it and in whatever order instants arrive; a bucket skips the look-up only for an
// instant later than any it ever held of the series.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HistoryInstance, Store } from '../../../src/store/index.js';
import { fileStore, memoryStore, T0, tempDir } from '../helpers.js';

const ID = 'urn:ngsi-ld:Device:h1';
const ATTR = 'https://example.org/ns/temperature';
let n = 0;
const instance = (value: number, observedAt: number): HistoryInstance => ({
  entityId: ID, attr: ATTR, instanceId: `urn:ngsi-ld:Instance:${String(n++).padStart(8, '0')}-0000-4000-8000-000000000000`,
  observedAt, createdAt: T0, modifiedAt: T0, attribute: { kind: 'Property', value, observedAt, createdAt: T0, modifiedAt: T0, sub: {} },
});

describe('observed history upserts', () => {
  let store: Store;
  const values = (): unknown[] => store.history.listForEntity({ tenant: '' }, ID, ATTR).map((i) => (i.attribute?.kind === 'Property' ? i.attribute.value : undefined));

  beforeEach(() => {
    store = memoryStore();
  });
  afterEach(() => store.close());

  it('replaces the instance at the same instant, in order and out of order', () => {
    store.history.upsertObserved('', [instance(1, T0 + 10), instance(2, T0 + 20)]);
    store.history.upsertObserved('', [instance(3, T0 + 20), instance(4, T0 + 10), instance(5, T0 + 30), instance(6, T0 + 30)]);
    expect(values()).toEqual([4, 3, 6]);
  });

  it('replaces an instance another path stored later than any before, at the same instant', () => {
    store.history.upsertObserved('', [instance(1, T0 + 10)]);
    // An append (an HTTP update) stores a later instant of the same series...
    store.history.append('', [instance(2, T0 + 50)]);
    // ...and a measurement at that instant replaces it rather than joining it.
    store.history.upsertObserved('', [instance(3, T0 + 50)]);
    expect(values()).toEqual([1, 3]);
  });

  it('replaces an instance stored before the store was opened (no instant known yet)', () => {
    const dir = tempDir();
    try {
      const first = fileStore(dir.file);
      first.history.append('', [instance(1, T0 + 10), instance(2, T0 + 20)]);
      first.close();
      const again = fileStore(dir.file);
      again.history.upsertObserved('', [instance(7, T0 + 20)]);
      expect(again.history.listForEntity({ tenant: '' }, ID, ATTR).map((i) => i.attribute?.kind === 'Property' && i.attribute.value)).toEqual([1, 7]);
      again.close();
    } finally {
      dir.cleanup();
    }
  });
});
