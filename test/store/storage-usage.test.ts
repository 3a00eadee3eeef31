// What the disk budget reads of the store: the pages in use (a dropped bucket frees its pages inside
// the file, which does not shrink), the bytes per tier from dbstat (in memory on the event loop, for a
// file on a thread of its own) adding up to no more than the file, the daily figures, and the hold on
// writes (hasRoom false while over budget).

import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { HistoryInstance, Store } from '../../src/store/index.js';
import { fileStore, memoryStore, NS, property, T0, tempDir } from './helpers.js';

const stores: Store[] = [];
const dirs: Array<{ cleanup(): void }> = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) d.cleanup();
});

const DAY = 86_400_000;

/** `n` instances of one series, a second apart from `from`. */
function instances(n: number, from: number): HistoryInstance[] {
  return Array.from({ length: n }, (_, i) => {
    const t = from + i * 1000;
    return {
      entityId: 'urn:ngsi-ld:Sensor:u1', attr: NS + 'temperature', instanceId: `urn:ngsi-ld:Instance:${randomUUID()}`, observedAt: t, createdAt: t, modifiedAt: t,
      attribute: property(i % 50, { observedAt: t, createdAt: t, modifiedAt: t }),
    };
  });
}

describe('store.usage', () => {
  it('counts the pages in use: a dropped bucket frees them inside the file, which keeps its size', () => {
    const d = tempDir();
    dirs.push(d);
    const store = fileStore(d.file, { historyBucket: 'day' });
    stores.push(store);
    const empty = store.usage.usedBytes();
    store.history.upsertObserved('', instances(5000, T0 - 3 * DAY));
    store.history.upsertObserved('', instances(5000, T0 - 2 * DAY));
    const full = store.usage.usedBytes();
    expect(full).toBeGreaterThan(empty + 200_000);
    const fileBytes = store.usage.fileBytes();
    expect(store.history.dropBucketBefore(T0)).toBe('history_20240112');
    const after = store.usage.usedBytes();
    expect(after).toBeLessThan(full - 100_000);
    expect(store.usage.fileBytes()).toBe(fileBytes);
    store.checkpoint('TRUNCATE');
    expect(statSync(d.file).size).toBe(fileBytes);
  });

  it('measures the bytes per tier on a thread for a file, no more than the file, and on the event loop in memory', async () => {
    const d = tempDir();
    dirs.push(d);
    const file = fileStore(d.file, { historyBucket: 'day' });
    const memory = memoryStore();
    stores.push(file, memory);
    for (const s of [file, memory]) s.history.upsertObserved('', instances(5000, T0 - DAY));
    const onThread = await file.usage.measureTiers();
    const here = await memory.usage.measureTiers();
    for (const tiers of [onThread, here]) {
      expect(tiers.raw).toBeGreaterThan(100_000);
      expect(tiers.minute).toBe(0);
      expect(tiers.hour).toBe(0);
      expect(tiers.other).toBeGreaterThan(0);
    }
    expect(onThread.raw + onThread.other).toBeLessThanOrEqual(file.usage.fileBytes());
    expect(onThread.raw + onThread.other).toBeLessThanOrEqual(file.usage.usedBytes());
  });

  it('keeps the bytes written per day, adding to a day, forgetting the old ones', () => {
    const store = memoryStore();
    stores.push(store);
    store.usage.addWritten(T0 - 9 * DAY, 5);
    store.usage.addWritten(T0 - DAY, 100);
    store.usage.addWritten(T0, 7);
    store.usage.addWritten(T0, 3);
    expect(store.usage.written(T0 - 7 * DAY)).toEqual([{ day: T0 - DAY, bytes: 100 }, { day: T0, bytes: 10 }]);
    store.usage.forgetWritten(T0);
    expect(store.usage.written(0)).toEqual([{ day: T0, bytes: 10 }]);
  });

  it('has no room while held at the budget', () => {
    const store = memoryStore();
    stores.push(store);
    expect(store.hasRoom()).toBe(true);
    store.usage.setOverBudget(true);
    expect(store.hasRoom()).toBe(false);
    store.usage.setOverBudget(false);
    expect(store.hasRoom()).toBe(true);
  });
});
