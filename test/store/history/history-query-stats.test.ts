// Per-period statistics computed only as asked: the statistics asked for equal those of a full
// computation and the others are null, strings are counted when values are not all numbers, and
// periods are the same whether or not the window lets SQL skip ranking them.

import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { HistoryInstance, HistoryWindow, PeriodGrid, PeriodStats, Store } from '../../../src/store/index.js';
import { memoryStore, NS, property } from '../helpers.js';

const E = 'urn:ngsi-ld:Sensor:s1';
const ATTR = NS + 'level';
const HOUR = 3_600_000;
const BASE = Date.UTC(2024, 0, 30);

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

function at(value: number | string | boolean, t: number, datasetId?: string): HistoryInstance {
  const inst: HistoryInstance = {
    entityId: E, attr: ATTR, instanceId: `urn:ngsi-ld:Instance:${randomUUID()}`, createdAt: t, modifiedAt: t, observedAt: t,
    attribute: property(value, { createdAt: t, modifiedAt: t, observedAt: t, ...(datasetId ? { datasetId } : {}) }),
  };
  if (datasetId) inst.datasetId = datasetId;
  return inst;
}

/** 3 days of values every 20 minutes across a month boundary, numbers in one series and a mix in another. */
function loaded(): Store {
  const store = memoryStore({ historyBucket: 'day' });
  stores.push(store);
  const instances: HistoryInstance[] = [];
  for (let i = 0; i < 216; i++) {
    const t = BASE + i * 20 * 60_000;
    instances.push(at(((i * 37) % 23) + 0.25 * (i % 4), t));
    instances.push(at(i % 5 === 0 ? ['kiwi', 'fig', 'plum'][i % 3]! : i % 7 === 0 ? i % 2 === 0 : i, t, 'urn:ngsi-ld:Dataset:mixed'));
  }
  store.history.append('', instances);
  return store;
}

const OPTIONAL: Array<keyof PeriodStats> = ['distinct', 'sum', 'sumsq', 'min', 'max', 'minString', 'maxString', 'first', 'last'];
const GRIDS: PeriodGrid[] = [
  { kind: 'whole' },
  { kind: 'fixed', origin: BASE, ms: 6 * HOUR },
  { kind: 'calendar', starts: [BASE, BASE + 20 * HOUR, Date.UTC(2024, 1, 1), Date.UTC(2024, 1, 1, 7)] },
];

describe('history aggregation of chosen statistics', () => {
  it('computes what is asked for, as a full computation does, and leaves the rest null', () => {
    const store = loaded();
    const series = store.history.series({ tenant: '' }, [E]);
    const w: HistoryWindow = { timeproperty: 'observedAt', from: BASE, to: BASE + 3 * 24 * HOUR };
    for (const grid of GRIDS) {
      const all = store.history.aggregate(series, w, grid, { order: 'asc', skip: 0, limit: Infinity });
      expect(all.some((r) => r.strings > 0)).toBe(true);
      for (const asked of [[], ['sum'], ['min', 'minString'], ['max', 'maxString', 'distinct'], ['sumsq', 'first', 'last']] as const) {
        const some = store.history.aggregate(series, w, grid, { order: 'asc', skip: 0, limit: Infinity, stats: new Set(asked) });
        expect(some.length).toBe(all.length);
        some.forEach((r, i) => {
          const full = all[i]!;
          expect([r.series, r.period, r.count, r.numbers, r.strings]).toEqual([full.series, full.period, full.count, full.numbers, full.strings]);
          for (const m of OPTIONAL) expect(r[m], `${grid.kind} ${m}`).toEqual((asked as readonly string[]).includes(m) ? full[m] : null);
        });
      }
    }
  });

  it('counts no strings among numbers and takes the string min and max of a mix', () => {
    const store = loaded();
    const [numbers, mixed] = store.history.series({ tenant: '' }, [E]);
    const w: HistoryWindow = { timeproperty: 'observedAt' };
    const stats = new Set<keyof PeriodStats>(['min', 'minString', 'max', 'maxString']);
    const [n] = store.history.aggregate([numbers!], w, { kind: 'whole' }, { order: 'asc', skip: 0, limit: 10, stats });
    expect(n).toMatchObject({ count: 216, numbers: 216, strings: 0, minString: null, maxString: null });
    const [m] = store.history.aggregate([mixed!], w, { kind: 'whole' }, { order: 'asc', skip: 0, limit: 10, stats });
    expect(m).toMatchObject({ count: 216, numbers: 216 - 44, strings: 44, minString: 'fig', maxString: 'plum' });
  });

  it('keeps the same periods with a bounded window as an open one, sliced from either end', () => {
    const store = loaded();
    const series = store.history.series({ tenant: '' }, [E]);
    const grid: PeriodGrid = { kind: 'fixed', origin: BASE, ms: 6 * HOUR };
    const bounded: HistoryWindow = { timeproperty: 'observedAt', from: BASE, to: BASE + 3 * 24 * HOUR };
    const open: HistoryWindow = { timeproperty: 'observedAt', from: BASE };
    const periods = (w: HistoryWindow, order: 'asc' | 'desc', skip: number, limit: number): string[] =>
      store.history.aggregate(series, w, grid, { order, skip, limit, stats: new Set(['sum']) }).map((r) => `${r.series}/${r.period}/${r.sum}`);
    for (const order of ['asc', 'desc'] as const) {
      for (const [skip, limit] of [[0, 100], [0, 12], [0, 5], [2, 3], [0, 1]] as const) {
        expect(periods(bounded, order, skip, limit), `${order} ${skip} ${limit}`).toEqual(periods(open, order, skip, limit));
      }
    }
    expect(periods(bounded, 'desc', 0, 100)).toHaveLength(24);
    expect(periods(bounded, 'desc', 0, 5)).toHaveLength(10);
  });
});
