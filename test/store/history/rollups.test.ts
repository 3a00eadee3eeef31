// The rollups of history: what a summary holds, when a period is computed (closed, and again after
// late data), rows added to their summaries before the merge horizon, the completeness instant that
// guards reads and retention, removal with the series, and the job's chunks.

import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/lib/index.js';
import type { Json } from '../../../src/ngsi/index.js';
import type { HistoryInstance, Store } from '../../../src/store/index.js';
import { runRollups } from '../../../src/temporal/index.js';
import { memoryStore, NS, property } from '../helpers.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const H0 = Date.UTC(2026, 5, 1, 8);
const E = 'urn:ngsi-ld:Sensor:s1';
const TEMP = NS + 'temperature';
const MODE = NS + 'mode';

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

function open(): Store {
  const s = memoryStore({ historyBucket: 'day' });
  stores.push(s);
  return s;
}

function instance(attr: string, at: number, value: Json): HistoryInstance {
  return {
    entityId: E, attr, instanceId: `urn:ngsi-ld:Instance:${randomUUID()}`, observedAt: at, createdAt: at, modifiedAt: at,
    attribute: property(value, { observedAt: at, createdAt: at, modifiedAt: at }),
  };
}

const roll = (s: Store, now: number, mergeBefore = Number.NEGATIVE_INFINITY): ReturnType<typeof runRollups> =>
  runRollups({ store: s, log: silentLogger, mergeBefore }, now);

const seriesId = (s: Store, attr: string): number => s.history.series({ tenant: '' }, [E], [attr])[0]!.id;

describe('a summary', () => {
  it('holds the counts, sums, extremes and the first and last instants with their numbers', async () => {
    const s = open();
    s.history.upsertObserved('', [instance(TEMP, H0 + 5_000, 20), instance(TEMP, H0 + 50_000, 23), instance(TEMP, H0 + 20_000, 17), instance(TEMP, H0 + MINUTE + 1, 30)]);
    await roll(s, H0 + 2 * HOUR);
    const [m0, m1] = s.history.rollups.rows('minute', [seriesId(s, TEMP)], H0, H0 + HOUR);
    expect(m0).toEqual({
      series: seriesId(s, TEMP), t: H0, n: 3, numbers: 3, strings: 0, distinct_n: 3, sum: 60, sumsq: 20 * 20 + 23 * 23 + 17 * 17,
      min: 17, max: 23, min_s: null, max_s: null, first_t: H0 + 5_000, last_t: H0 + 50_000, first_num: 20, last_num: 23,
    });
    expect(m1).toMatchObject({ t: H0 + MINUTE, n: 1, sum: 30, first_num: 30, last_num: 30 });
    expect(s.history.rollups.rows('hour', [seriesId(s, TEMP)], H0, H0 + HOUR)).toEqual([
      expect.objectContaining({ t: H0, n: 4, sum: 90, min: 17, max: 30, distinct_n: 4, first_t: H0 + 5_000, last_t: H0 + MINUTE + 1, last_num: 30 }),
    ]);
  });

  it('counts strings with their extremes, booleans as numbers, and repeated values once in the distinct count', async () => {
    const s = open();
    s.history.upsertObserved('', [instance(MODE, H0 + 1_000, 'open'), instance(MODE, H0 + 2_000, 'closed'), instance(MODE, H0 + 3_000, 'open'),
      instance(TEMP, H0 + 1_000, true), instance(TEMP, H0 + 2_000, false), instance(TEMP, H0 + 3_000, true)]);
    await roll(s, H0 + 2 * HOUR);
    expect(s.history.rollups.rows('minute', [seriesId(s, MODE)], H0, H0 + HOUR)[0]).toMatchObject({
      n: 3, numbers: 0, strings: 3, distinct_n: 2, min_s: 'closed', max_s: 'open', sum: null, first_num: null,
    });
    expect(s.history.rollups.rows('minute', [seriesId(s, TEMP)], H0, H0 + HOUR)[0]).toMatchObject({ n: 3, numbers: 3, sum: 2, min: 0, max: 1, distinct_n: 2 });
  });
});

describe('the rollup job', () => {
  it('computes a period once closed, and again when late, replaced or deleted instances change it', async () => {
    const s = open();
    const first = instance(TEMP, H0 + 10_000, 10);
    s.history.upsertObserved('', [first, instance(TEMP, H0 + HOUR + 10_000, 99)]);
    // The hour H0 has closed; H0+1h has not (nor its minute, within the grace).
    const report = await roll(s, H0 + HOUR + 15_000);
    expect(report.read).toBe(2);
    const id = seriesId(s, TEMP);
    expect(s.history.rollups.rows('hour', [id], H0, H0 + 2 * HOUR).map((r) => r.t)).toEqual([H0]);
    expect(s.history.rollups.completeBefore('hour')).toBe(H0 + HOUR);
    // Late data in the closed hour, a replaced instance, a deletion.
    s.history.upsertObserved('', [instance(TEMP, H0 + 30 * MINUTE, 40), instance(TEMP, H0 + 10_000, 12)]);
    expect(s.history.rollups.completeBefore('hour')).toBe(H0);
    await roll(s, H0 + 3 * HOUR);
    expect(s.history.rollups.rows('hour', [id], H0, H0 + HOUR)).toEqual([expect.objectContaining({ n: 2, sum: 52, min: 12, max: 40 })]);
    const late = s.history.listForEntity({ tenant: '' }, E, TEMP).find((i) => i.observedAt === H0 + 30 * MINUTE)!;
    expect(s.history.deleteInstance('', E, TEMP, late.instanceId)).toBe(true);
    await roll(s, H0 + 3 * HOUR);
    expect(s.history.rollups.rows('hour', [id], H0, H0 + HOUR)).toEqual([expect.objectContaining({ n: 1, sum: 12 })]);
    expect(s.history.rollups.rows('minute', [id], H0 + 30 * MINUTE, H0 + 31 * MINUTE)).toEqual([]);
  });

  it('adds rows observed before the merge horizon to their summaries (their neighbours may be gone): no distinct count then', async () => {
    const s = open();
    s.history.upsertObserved('', [instance(TEMP, H0 + 1_000, 5), instance(TEMP, H0 + 2_000, 5)]);
    await roll(s, H0 + 2 * HOUR, H0 + HOUR);
    const id = seriesId(s, TEMP);
    expect(s.history.rollups.rows('minute', [id], H0, H0 + MINUTE)).toEqual([expect.objectContaining({ n: 2, sum: 10, distinct_n: null })]);
    // Rows read once are never added twice.
    s.history.upsertObserved('', [instance(TEMP, H0 + 3_000, 7)]);
    await roll(s, H0 + 2 * HOUR, H0 + HOUR);
    await roll(s, H0 + 2 * HOUR, H0 + HOUR);
    expect(s.history.rollups.rows('minute', [id], H0, H0 + MINUTE)).toEqual([expect.objectContaining({ n: 3, sum: 17, min: 5, max: 7, last_num: 7 })]);
    expect(s.history.rollups.rows('hour', [id], H0, H0 + HOUR)).toEqual([expect.objectContaining({ n: 3, sum: 17 })]);
  });

  it('reads in chunks across runs and leaves nothing unread; completeness waits for the rows not read yet', async () => {
    const s = open();
    const list: HistoryInstance[] = [];
    for (let k = 0; k < 12_000; k++) list.push(instance(TEMP, H0 + k * 1_000, k % 50));
    s.history.upsertObserved('', list);
    expect(s.history.rollups.completeBefore('minute')).toBe(Number.NEGATIVE_INFINITY);
    const report = await roll(s, H0 + 5 * HOUR);
    expect(report.read).toBe(12_000);
    // Minutes closed and read whole are summarized as they are read; the hours once closed.
    expect(report.rolled.hour).toBe(4);
    expect(s.history.rollups.count('minute')).toBe(200);
    expect(s.history.rollups.completeBefore('minute')).toBe(H0 + 5 * HOUR - MINUTE);
    s.history.upsertObserved('', [instance(TEMP, H0 + 90 * MINUTE + 1, 1)]);
    expect(s.history.rollups.completeBefore('minute')).toBe(H0 + 90 * MINUTE);
    expect((await roll(s, H0 + 5 * HOUR)).read).toBe(1);
  });

  it('keeps no distinct count for a dense hour: a distinct count by the hour then reads the raw rows', async () => {
    const s = open();
    const list: HistoryInstance[] = [];
    for (let k = 0; k < 50_001; k++) list.push(instance(TEMP, H0 + Math.floor(k * 70), k % 7));
    s.history.upsertObserved('', list);
    await roll(s, H0 + 2 * HOUR);
    const id = seriesId(s, TEMP);
    expect(s.history.rollups.rows('hour', [id], H0, H0 + HOUR)).toEqual([expect.objectContaining({ n: 50_001, distinct_n: null })]);
    expect(s.history.rollups.rows('minute', [id], H0, H0 + MINUTE)).toEqual([expect.objectContaining({ distinct_n: 7 })]);
    const series = s.history.series({ tenant: '' }, [E]);
    const byHour = s.history.aggregate(series, { timeproperty: 'observedAt', from: H0, to: H0 + HOUR }, { kind: 'fixed', origin: H0, ms: HOUR },
      { order: 'asc', skip: 0, limit: 10 });
    expect(byHour).toEqual([expect.objectContaining({ count: 50_001, distinct: 7 })]);
  });

  it('forgets the summaries of removed series', async () => {
    const s = open();
    s.history.upsertObserved('', [instance(TEMP, H0 + 1_000, 1), instance(MODE, H0 + 1_000, 'x')]);
    await roll(s, H0 + 2 * HOUR);
    const temp = seriesId(s, TEMP);
    const mode = seriesId(s, MODE);
    expect(s.history.removeSeries('', E, TEMP, 'all')).toBe(1);
    expect(s.history.rollups.rows('minute', [temp, mode], H0, H0 + HOUR).map((r) => r.series)).toEqual([mode]);
    expect(s.history.rollups.rows('hour', [temp], H0, H0 + HOUR)).toEqual([]);
  });
});

describe('summary tables', () => {
  it('are a month of minutes and a year of hours, dropped whole or pruned by rows', async () => {
    const s = open();
    s.history.upsertObserved('', [instance(TEMP, Date.UTC(2026, 0, 31, 23), 1), instance(TEMP, Date.UTC(2026, 1, 1, 1), 2)]);
    await roll(s, Date.UTC(2026, 2, 1));
    expect(s.history.rollups.tables().map((t) => t.name)).toEqual(['rollup_hour_2026', 'rollup_minute_202601', 'rollup_minute_202602']);
    expect(s.history.rollups.dropTableBefore('minute', Date.UTC(2026, 1, 1))).toBe('rollup_minute_202601');
    expect(s.history.rollups.dropTableBefore('minute', Date.UTC(2026, 1, 1))).toBeUndefined();
    expect(s.history.rollups.pruneBefore('hour', Date.UTC(2026, 1, 1), 10)).toBe(1);
    expect(s.history.rollups.count('hour')).toBe(1);
  });
});
