// Aggregations answered from the rollups equal those from the raw rows: two stores get the same
// random history (several series, datasetIds, numbers, booleans, strings, back-filled and replaced
// instances, deleted instances, late data), one never rolls up (every answer from the raw rows), the
// other rolls up at random points; every aggregation by whole minutes or hours must agree.

import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/lib/index.js';
import { runRollups } from '../../../src/temporal/index.js';
import type { HistoryInstance, HistorySeries, PeriodGrid, PeriodStats, Store } from '../../../src/store/index.js';
import type { Json } from '../../../src/ngsi/index.js';
import { fuzzRuns } from '../../helpers/fuzz-runs.js';
import { memoryStore, NS, property } from '../helpers.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const START = Date.UTC(2026, 2, 30, 20);
/** Far enough after the history for every period to have closed. */
const LATER = START + 5 * DAY;
const ENTITIES = ['urn:ngsi-ld:Sensor:a', 'urn:ngsi-ld:Sensor:b'];
const ATTRS = [NS + 'temperature', NS + 'state'];

type Op =
  | { kind: 'write'; entity: number; attr: number; dataset: boolean; at: number; value: Json }
  | { kind: 'delete'; pick: number }
  | { kind: 'roll' };

const value = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -1000, max: 1000 }).map((n) => n / 4) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constantFrom('open', 'closed', 'fault') },
);

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant('write' as const), entity: fc.nat(ENTITIES.length - 1), attr: fc.nat(ATTRS.length - 1), dataset: fc.boolean(),
      // Instants on whole seconds in the first two hours (many in the same minute, some replacing
      // one), or on whole minutes over three days.
      at: fc.oneof(fc.integer({ min: 0, max: 7199 }).map((s) => START + s * 1000), fc.integer({ min: 0, max: 3 * 24 * 60 - 1 }).map((m) => START + m * MINUTE)),
      value,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'roll' as const }) },
);

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

function instanceOf(o: Extract<Op, { kind: 'write' }>): HistoryInstance {
  const inst: HistoryInstance = {
    entityId: ENTITIES[o.entity]!, attr: ATTRS[o.attr]!, instanceId: `urn:ngsi-ld:Instance:${randomUUID()}`,
    observedAt: o.at, createdAt: o.at, modifiedAt: o.at, attribute: property(o.value, { observedAt: o.at, createdAt: o.at, modifiedAt: o.at }),
  };
  if (o.dataset) inst.datasetId = 'urn:ngsi-ld:Dataset:d';
  return inst;
}

/** Applies the operations to both stores; `tiered` rolls up where the operations say so. */
async function apply(ops: readonly Op[], raw: Store, tiered: Store): Promise<void> {
  const written: HistoryInstance[] = [];
  for (const o of ops) {
    if (o.kind === 'roll') {
      await runRollups({ store: tiered, log: silentLogger, mergeBefore: Number.NEGATIVE_INFINITY }, LATER);
      continue;
    }
    if (o.kind === 'write') {
      const inst = instanceOf(o);
      written.push(inst);
      for (const s of [raw, tiered]) s.history.upsertObserved('', [inst]);
      continue;
    }
    const victim = written[o.pick % Math.max(1, written.length)];
    if (victim === undefined) continue;
    for (const s of [raw, tiered]) s.history.deleteInstance('', victim.entityId, victim.attr, victim.instanceId);
  }
}

const keyOf = (s: HistorySeries): string => `${s.entityId} ${s.attr} ${s.datasetId ?? ''}`;

/** The aggregation of every series of the store, by series key, without the series ids (which differ). */
function aggregate(store: Store, grid: PeriodGrid, from: number | undefined, to: number | undefined, withDistinct: boolean,
  page: { order: 'asc' | 'desc'; skip: number; limit: number } = { order: 'asc', skip: 0, limit: 100_000 }): Map<string, Array<Omit<PeriodStats, 'series'>>> {
  const series = store.history.series({ tenant: '' }, ENTITIES);
  const window = { timeproperty: 'observedAt' as const, ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
  // Without a distinct count, a tier answers periods of several summaries too.
  const stats = new Set<keyof PeriodStats>(['sum', 'sumsq', 'min', 'max', 'minString', 'maxString', 'first', 'last', ...(withDistinct ? ['distinct' as const] : [])]);
  const rows = store.history.aggregate(series, window, grid, { ...page, stats });
  const byId = new Map(series.map((s) => [s.id, keyOf(s)]));
  const out = new Map<string, Array<Omit<PeriodStats, 'series'>>>();
  for (const { series: id, ...rest } of rows) {
    const key = byId.get(id)!;
    out.set(key, [...(out.get(key) ?? []), rest]);
  }
  return out;
}

/** Equal, sums and sums of squares up to floating-point rounding (they are added in another order). */
function expectSame(tiered: Map<string, Array<Omit<PeriodStats, 'series'>>>, raw: Map<string, Array<Omit<PeriodStats, 'series'>>>, exactDistinct: boolean): void {
  expect([...tiered.keys()].sort(), JSON.stringify([...raw])).toEqual([...raw.keys()].sort());
  for (const [key, periods] of raw) {
    const other = tiered.get(key)!;
    expect(other.map((p) => p.period)).toEqual(periods.map((p) => p.period));
    periods.forEach((p, i) => {
      const q = other[i]!;
      const close = (a: number | null, b: number | null): void => {
        if (a === null || b === null) expect(a).toBe(b);
        else expect(Math.abs(a - b)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(b)));
      };
      close(q.sum, p.sum);
      close(q.sumsq, p.sumsq);
      expect({ ...q, sum: 0, sumsq: 0, distinct: exactDistinct ? q.distinct : 0 }).toEqual({ ...p, sum: 0, sumsq: 0, distinct: exactDistinct ? p.distinct : 0 });
    });
  }
}

const GRIDS: Array<{ name: string; grid: PeriodGrid; from?: number; to?: number; exactDistinct: boolean }> = [
  { name: 'PT1M', grid: { kind: 'fixed', origin: START, ms: MINUTE }, from: START, to: START + 3 * DAY, exactDistinct: true },
  { name: 'PT1H', grid: { kind: 'fixed', origin: START, ms: HOUR }, from: START, to: START + 3 * DAY, exactDistinct: true },
  { name: 'PT15M', grid: { kind: 'fixed', origin: START, ms: 15 * MINUTE }, from: START, exactDistinct: false },
  { name: 'P1D', grid: { kind: 'fixed', origin: START, ms: DAY }, from: START, to: START + 2 * DAY, exactDistinct: false },
  { name: 'calendar days', grid: { kind: 'calendar', starts: [START, START + 4 * HOUR, START + 28 * HOUR, START + 52 * HOUR] }, from: START, exactDistinct: false },
  { name: 'whole', grid: { kind: 'whole' }, from: START, to: START + 3 * DAY, exactDistinct: false },
];

describe('aggregations from the rollups', () => {
  it('equal those from the raw rows, whatever the history, its edits and when the rollups ran', async () => {
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 120 }), async (ops) => {
      const raw = memoryStore({ historyBucket: 'day' });
      const tiered = memoryStore({ historyBucket: 'day' });
      stores.push(raw, tiered);
      await apply(ops, raw, tiered);
      for (const g of GRIDS) {
        expectSame(aggregate(tiered, g.grid, g.from, g.to, g.exactDistinct), aggregate(raw, g.grid, g.from, g.to, g.exactDistinct), g.exactDistinct);
      }
      // After a last run every closed period is summarized: the aligned reads take the tiers.
      await runRollups({ store: tiered, log: silentLogger, mergeBefore: Number.NEGATIVE_INFINITY }, LATER);
      expect(tiered.history.rollups.completeBefore('hour')).toBeGreaterThan(START + 3 * DAY);
      for (const g of GRIDS) {
        expectSame(aggregate(tiered, g.grid, g.from, g.to, g.exactDistinct), aggregate(raw, g.grid, g.from, g.to, g.exactDistinct), g.exactDistinct);
        // Pages of periods (lastN, temporal pagination): the same periods are kept.
        for (const page of [{ order: 'desc' as const, skip: 0, limit: 3 }, { order: 'asc' as const, skip: 2, limit: 5 }]) {
          expectSame(aggregate(tiered, g.grid, g.from, g.to, g.exactDistinct, page), aggregate(raw, g.grid, g.from, g.to, g.exactDistinct, page), g.exactDistinct);
        }
      }
      for (const s of stores.splice(0)) s.close();
    }), { numRuns: fuzzRuns(60) });
  });
});
