// Temporal reads over history buckets: every window, time property and order against a brute-force
// oracle over listForEntity, for day and month buckets alike; counts, extents, next times, SQL stats.

import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { HistoryInstance, HistorySeries, HistoryWindow, Store, TimeProperty } from '../../../src/store/index.js';
import { fileStore, memoryStore, NS, property, tempDir } from '../helpers.js';

const E = 'urn:ngsi-ld:Sensor:q1';
const ATTR = NS + 'temperature';
const DAY = 86_400_000;
const HOUR = 3_600_000;
const BASE = Date.UTC(2024, 0, 30, 0, 0, 0);
const PROPS: TimeProperty[] = ['observedAt', 'createdAt', 'modifiedAt', 'deletedAt'];

/** 60 instances over 6 days across a month boundary: observed or not, two datasets, some deletions. */
function sampleInstances(): HistoryInstance[] {
  const out: HistoryInstance[] = [];
  for (let i = 0; i < 60; i++) {
    const observed = BASE + i * 2 * HOUR + 7;
    const createdAt = observed + (i % 5) * 13 * HOUR + 11 * i;
    const modifiedAt = createdAt + (i % 3) * HOUR + 3 * i;
    const base = { entityId: E, attr: ATTR, instanceId: `urn:ngsi-ld:Instance:${randomUUID()}`, createdAt, modifiedAt };
    const inst: HistoryInstance = i % 11 === 10
      ? { ...base, deletedAt: modifiedAt }
      : { ...base, attribute: property(i % 4 === 0 ? 10 + i : i * 1.5, { createdAt, modifiedAt }) };
    if (i % 7 !== 3 && !inst.deletedAt) {
      inst.observedAt = observed;
      if (inst.attribute) inst.attribute.observedAt = observed;
    }
    if (i % 2 === 1) {
      inst.datasetId = 'urn:ngsi-ld:Dataset:b';
      if (inst.attribute) inst.attribute.datasetId = 'urn:ngsi-ld:Dataset:b';
    }
    if (i % 3 === 0) inst.subject = 'alice';
    out.push(inst);
  }
  return out;
}

const timeOf = (i: HistoryInstance, tp: TimeProperty): number | undefined =>
  tp === 'observedAt' ? i.observedAt : tp === 'createdAt' ? i.createdAt : tp === 'modifiedAt' ? i.modifiedAt : i.deletedAt;

function oracle(all: HistoryInstance[], w: HistoryWindow): Array<{ time: number; instance: HistoryInstance }> {
  return all.flatMap((instance) => {
    const time = timeOf(instance, w.timeproperty);
    if (time === undefined || (w.from !== undefined && time < w.from) || (w.to !== undefined && time >= w.to)) return [];
    return [{ time, instance }];
  }).sort((a, b) => a.time - b.time);
}

const WINDOWS = (tp: TimeProperty): HistoryWindow[] => [
  { timeproperty: tp },
  { timeproperty: tp, from: BASE + 2 * DAY },
  { timeproperty: tp, to: BASE + 2 * DAY + 5 },
  { timeproperty: tp, from: BASE + DAY + HOUR, to: BASE + 4 * DAY },
  { timeproperty: tp, from: BASE + 40 * DAY },
];

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

function loaded(bucket: 'day' | 'month', instances = sampleInstances()): { store: Store; all: HistoryInstance[]; series: HistorySeries[] } {
  const store = memoryStore({ historyBucket: bucket });
  stores.push(store);
  store.history.append('', instances);
  return { store, all: store.history.listForEntity({ tenant: '' }, E), series: store.history.series({ tenant: '' }, [E]) };
}

describe('history reads', () => {
  for (const bucket of ['day', 'month'] as const) {
    it(`returns exactly the instances of every window and time property, in time order (${bucket} buckets)`, () => {
      const { store, all, series } = loaded(bucket);
      expect(series.map((s) => s.datasetId)).toEqual([undefined, 'urn:ngsi-ld:Dataset:b']);
      for (const tp of PROPS) {
        for (const w of WINDOWS(tp)) {
          const expected = oracle(all, w);
          const asc = store.history.read(series, w, { order: 'asc', skip: 0, limit: Infinity });
          expect(asc.map((r) => [r.time, r.instance.instanceId])).toEqual(expected.map((r) => [r.time, r.instance.instanceId]));
          expect(asc.map((r) => r.instance)).toEqual(expected.map((r) => r.instance));
          const desc = store.history.read(series, w, { order: 'desc', skip: 0, limit: Infinity });
          expect(desc.map((r) => r.instance.instanceId)).toEqual([...expected].reverse().map((r) => r.instance.instanceId));
          expect(store.history.count(series, w)).toBe(expected.length);
          const times = expected.map((r) => r.time);
          expect(store.history.extent(series, w)).toEqual(times.length === 0 ? undefined : { min: times[0], max: times[times.length - 1] });
        }
      }
    });
  }

  it('slices with skip and limit in both orders', () => {
    const { store, all, series } = loaded('day');
    const w: HistoryWindow = { timeproperty: 'modifiedAt', from: BASE + HOUR };
    const expected = oracle(all, w).map((r) => r.instance.instanceId);
    for (const [skip, limit] of [[0, 1], [3, 5], [10, 100], [0, 0], [expected.length, 3]] as const) {
      expect(store.history.read(series, w, { order: 'asc', skip, limit }).map((r) => r.instance.instanceId))
        .toEqual(expected.slice(skip, skip + limit));
      expect(store.history.read(series, w, { order: 'desc', skip, limit }).map((r) => r.instance.instanceId))
        .toEqual([...expected].reverse().slice(skip, skip + limit));
    }
  });

  it('finds the next distinct time on either side', () => {
    const { store, all, series } = loaded('day');
    const w: HistoryWindow = { timeproperty: 'observedAt', from: BASE, to: BASE + 3 * DAY };
    const times = [...new Set(oracle(all, w).map((r) => r.time))];
    expect(store.history.nextTime(series, w, times[4]!, 'asc')).toBe(times[5]);
    expect(store.history.nextTime(series, w, times[4]!, 'desc')).toBe(times[3]);
    expect(store.history.nextTime(series, w, times[times.length - 1]!, 'asc')).toBeUndefined();
    expect(store.history.nextTime(series, w, times[0]!, 'desc')).toBeUndefined();
  });

  it('gives identical answers over day and month buckets', () => {
    const instances = sampleInstances();
    const day = loaded('day', instances);
    const month = loaded('month', instances);
    expect(day.store.history.buckets().length).toBeGreaterThan(month.store.history.buckets().length);
    for (const tp of PROPS) {
      for (const w of WINDOWS(tp)) {
        for (const order of ['asc', 'desc'] as const) {
          const a = day.store.history.read(day.series, w, { order, skip: 2, limit: 17 });
          const b = month.store.history.read(month.series, w, { order, skip: 2, limit: 17 });
          expect(a).toEqual(b);
        }
        const grid = { kind: 'fixed', origin: w.from ?? BASE - DAY, ms: 6 * HOUR } as const;
        expect(day.store.history.aggregate(day.series, w, grid, { order: 'asc', skip: 0, limit: Infinity }))
          .toEqual(month.store.history.aggregate(month.series, w, grid, { order: 'asc', skip: 0, limit: Infinity }));
      }
    }
  });

  it('keeps catalogue bounds that cover every row of each bucket', () => {
    const { store, all } = loaded('day');
    expect(store.history.buckets().length).toBeGreaterThan(3);
    const created = all.map((i) => i.createdAt);
    // Every createdAt lies in some bucket's bounds: a createdAt window read finds them all.
    expect(store.history.count(store.history.series({ tenant: '' }, [E]), { timeproperty: 'createdAt' })).toBe(created.length);
  });
});

describe('bucket pruning', () => {
  it('touches no bucket whose time range or catalogued bounds lie outside the window', () => {
    const tmp = tempDir();
    try {
      const store = fileStore(tmp.file, { historyBucket: 'month' });
      stores.push(store);
      const jan = Date.UTC(2024, 0, 10);
      const mar = Date.UTC(2024, 2, 10);
      const at = (observed: number, created: number): HistoryInstance => ({
        entityId: E, attr: ATTR, instanceId: `urn:ngsi-ld:Instance:${randomUUID()}`, observedAt: observed, createdAt: created, modifiedAt: created,
        attribute: property(1, { observedAt: observed, createdAt: created, modifiedAt: created }),
      });
      store.history.append('', [at(jan, jan + HOUR), at(mar, mar + HOUR)]);
      const series = store.history.series({ tenant: '' }, [E]);
      // Remove January's table behind the catalogue's back: reading it now would fail.
      const raw = new Database(tmp.file);
      raw.exec('DROP TABLE history_202401');
      raw.close();
      for (const w of [
        { timeproperty: 'observedAt', from: Date.UTC(2024, 1, 1) },
        { timeproperty: 'createdAt', from: jan + 2 * DAY },
        { timeproperty: 'modifiedAt', to: jan - DAY },
        { timeproperty: 'deletedAt' },
      ] as const) {
        expect(() => store.history.read(series, w, { order: 'asc', skip: 0, limit: 10 })).not.toThrow();
        expect(() => store.history.count(series, w)).not.toThrow();
      }
      expect(() => store.history.count(series, { timeproperty: 'createdAt', to: jan + 2 * DAY })).toThrow(/no such table/);
      store.close();
    } finally {
      tmp.cleanup();
    }
  });
});

describe('history aggregation in SQL', () => {
  const stats = (xs: HistoryInstance[]) => {
    const nums = xs.flatMap((i) => (i.attribute?.kind === 'Property' && typeof i.attribute.value === 'number' ? [i.attribute.value] : []));
    return {
      count: nums.length, numbers: nums.length, sum: nums.reduce((a, b) => a + b, 0), min: Math.min(...nums), max: Math.max(...nums),
      sumsq: nums.reduce((a, b) => a + b * b, 0), distinct: new Set(nums).size,
    };
  };

  for (const grid of [
    { kind: 'whole' } as const,
    { kind: 'fixed', origin: BASE, ms: DAY } as const,
    { kind: 'calendar', starts: [BASE, Date.UTC(2024, 1, 1), Date.UTC(2024, 2, 1)] } as const,
  ]) {
    it(`matches an independent computation per series and period (${grid.kind})`, () => {
      const { store, all, series } = loaded('day');
      const w: HistoryWindow = { timeproperty: 'observedAt', from: BASE };
      const rows = store.history.aggregate(series, w, grid, { order: 'asc', skip: 0, limit: Infinity });
      const periodOf = (t: number): number => (grid.kind === 'whole' ? 0 : grid.kind === 'fixed' ? Math.floor((t - BASE) / DAY)
        : grid.starts.filter((s) => s <= t).length - 1);
      const expected = new Map<string, HistoryInstance[]>();
      for (const { time, instance } of oracle(all, w)) {
        if (!instance.attribute) continue;
        const s = series.find((x) => x.datasetId === instance.datasetId)!;
        const key = `${s.id}/${periodOf(time)}`;
        expected.set(key, [...(expected.get(key) ?? []), instance]);
      }
      expect(rows.map((r) => `${r.series}/${r.period}`).sort()).toEqual([...expected.keys()].sort());
      for (const r of rows) {
        const e = stats(expected.get(`${r.series}/${r.period}`)!);
        expect({ count: r.count, numbers: r.numbers, min: r.min, max: r.max, distinct: r.distinct }).toEqual(
          { count: e.count, numbers: e.numbers, min: e.min, max: e.max, distinct: e.distinct });
        expect(r.sum).toBeCloseTo(e.sum, 9);
        expect(r.sumsq).toBeCloseTo(e.sumsq, 6);
        expect(r.strings).toBe(0);
      }
    });
  }

  it('limits periods per series from either end', () => {
    const { store, series } = loaded('day');
    const w: HistoryWindow = { timeproperty: 'observedAt', from: BASE };
    const grid = { kind: 'fixed', origin: BASE, ms: 6 * HOUR } as const;
    const all = store.history.aggregate(series, w, grid, { order: 'asc', skip: 0, limit: Infinity });
    const first = store.history.aggregate(series, w, grid, { order: 'asc', skip: 1, limit: 2 });
    const last = store.history.aggregate(series, w, grid, { order: 'desc', skip: 0, limit: 2 });
    for (const s of series) {
      const mine = all.filter((r) => r.series === s.id).map((r) => r.period);
      expect(first.filter((r) => r.series === s.id).map((r) => r.period)).toEqual(mine.slice(1, 3));
      expect(last.filter((r) => r.series === s.id).map((r) => r.period)).toEqual(mine.slice(-2));
    }
  });

  it('counts strings apart and takes their lexical min and max', () => {
    const store = memoryStore();
    stores.push(store);
    const at = (v: string | number, t: number): HistoryInstance => ({
      entityId: E, attr: ATTR, instanceId: `urn:ngsi-ld:Instance:${randomUUID()}`, createdAt: t, modifiedAt: t, observedAt: t,
      attribute: property(v, { createdAt: t, modifiedAt: t, observedAt: t }),
    });
    store.history.append('', [at('pear', BASE), at('apple', BASE + 1), at('pear', BASE + 2), at(3, BASE + 3)]);
    const [row] = store.history.aggregate(store.history.series({ tenant: '' }, [E]), { timeproperty: 'observedAt' }, { kind: 'whole' },
      { order: 'asc', skip: 0, limit: Infinity });
    expect(row).toMatchObject({ count: 4, numbers: 1, strings: 3, distinct: 3, minString: 'apple', maxString: 'pear', min: 3, max: 3 });
  });
});
