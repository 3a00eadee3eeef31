// Reads from the rollup tiers, and what the tiers cost on disk. A plant of sensors reporting every
// 5 s for 30 days is built in-process (history-data.ts); a broker started on it before any summary
// exists answers an hourly aggregation of each sensor from the raw rows, then the summaries are
// computed and a broker started on the same database answers the same queries from the hour tier.
// Both answers must agree. The database's pages per level give the bytes a raw instance, a minute and
// an hour summary take, from which a 30-day plant of 500 sensors is extrapolated.

import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { findFreePort, startServer, type ServerProcess } from './child.js';
import type { Cleanup } from './cleanup.js';
import { formatCount } from './format-count.js';
import { buildPlant, instancesOf, measureSizes, rollUp, sensorId, type DatabaseSizes, type Plant } from './history-data.js';
import { isRecord } from './json.js';
import { percentile } from './load.js';
import type { Row } from './report.js';

const DAY_MS = 86_400_000;
/** The scaled plant: a few sensors for the full 30 days (the query reads one sensor's 30 days). */
export const TIER_PLANT: Plant = { sensors: 4, days: 30, stepMs: 5_000, start: Date.UTC(2026, 0, 1) };
/** The plant the figures are extrapolated to. */
const FULL_SENSORS = 500;
const METHODS = ['avg', 'min', 'max', 'sum', 'totalCount'] as const;
/** Timed queries per sensor and broker, after two uncounted ones. */
const REPETITIONS = 3;
const WARMUP = 2;
export const TIER_RATIO_TARGET = 0.2;
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 30_000;
const MB = 1_000_000;
const MIB = 1_048_576;

export interface HistoryTierOptions {
  readonly script: string;
  readonly nodeFlags: readonly string[];
  readonly tmp: string;
  readonly plant?: Plant;
  readonly log: (line: string) => void;
}

export interface HistoryTierResult {
  readonly rows: Row[];
  readonly notes: string[];
  readonly hasErrors: boolean;
}

const iso = (t: number): string => new Date(t).toISOString();

function hourlyPath(plant: Plant, n: number): string {
  const params = {
    attrs: 'temperature', options: 'aggregatedValues', aggrMethods: METHODS.join(','), aggrPeriodDuration: 'PT1H',
    timerel: 'between', timeAt: iso(plant.start), endTimeAt: iso(plant.start + plant.days * DAY_MS),
  };
  const query = Object.entries(params).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  return `/ngsi-ld/v1/temporal/entities/${encodeURIComponent(sensorId(n))}?${query}`;
}

interface Timed {
  /** Milliseconds of each timed query, request to the last byte of the answer. */
  readonly ms: number[];
  /** The answer of each sensor. */
  readonly answers: unknown[];
}

async function getJson(port: number, path: string): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(120_000) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as unknown;
}

/** Every sensor's hourly aggregation, WARMUP times uncounted, then REPETITIONS times timed. */
async function timeQueries(port: number, plant: Plant): Promise<Timed> {
  for (let i = 0; i < WARMUP; i++) await getJson(port, hourlyPath(plant, i % plant.sensors));
  const ms: number[] = [];
  const answers: unknown[] = [];
  for (let r = 0; r < REPETITIONS; r++) {
    for (let n = 0; n < plant.sensors; n++) {
      const started = performance.now();
      const body = await getJson(port, hourlyPath(plant, n));
      ms.push(performance.now() - started);
      answers[n] = body;
    }
  }
  return { ms, answers };
}

/** The periods of one method of an answer: [value, start, end] triples. */
function periodsOf(answer: unknown, method: string): unknown[] | undefined {
  const attr = isRecord(answer) ? answer.temperature : undefined;
  const periods = isRecord(attr) ? attr[method] : undefined;
  return Array.isArray(periods) ? periods : undefined;
}

const closeEnough = (a: number, b: number): boolean => a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));

/** How the tier's answers differ from the raw rows' (sums and averages up to float rounding); empty when they agree. */
export function compareAnswers(plant: Plant, raw: readonly unknown[], tier: readonly unknown[]): string[] {
  const hours = (plant.days * DAY_MS) / 3_600_000;
  const out: string[] = [];
  for (let n = 0; n < plant.sensors; n++) {
    for (const method of METHODS) {
      const a = periodsOf(raw[n], method);
      const b = periodsOf(tier[n], method);
      if (a === undefined || b === undefined) {
        out.push(`${sensorId(n)} ${method}: missing from the ${a === undefined ? 'raw' : 'tier'} answer`);
        continue;
      }
      if (a.length !== hours || b.length !== hours) out.push(`${sensorId(n)} ${method}: ${a.length} raw and ${b.length} tier periods, expected ${hours}`);
      const bad = a.findIndex((p, i) => {
        const q = b[i];
        if (!Array.isArray(p) || !Array.isArray(q) || p[1] !== q[1] || p[2] !== q[2]) return true;
        return typeof p[0] !== 'number' || typeof q[0] !== 'number' || !(method === 'sum' || method === 'avg' ? closeEnough(p[0], q[0]) : p[0] === q[0]);
      });
      if (bad >= 0) out.push(`${sensorId(n)} ${method}: period ${bad} differs: raw ${JSON.stringify(a[bad])}, tier ${JSON.stringify(b[bad])}`);
    }
  }
  return out;
}

/** Starts the broker on `dir` with `env`, runs fn, stops it. */
async function onBroker<T>(options: HistoryTierOptions, dir: string, env: Record<string, string>, cleanup: Cleanup,
  fn: (server: ServerProcess) => Promise<T>): Promise<T> {
  const port = await findFreePort();
  const mqttPort = await findFreePort();
  let release = async (): Promise<void> => {};
  const server = await startServer({
    name: 'broker', script: options.script, nodeFlags: options.nodeFlags, port, readyTimeoutMs: READY_TIMEOUT_MS,
    env: { ...env, SERVER_PORT: String(port), SERVER_HOST: '127.0.0.1', MQTT_PORT: String(mqttPort), STORAGE_DIR: dir, LOG_LEVEL: 'warn', NODE_ENV: 'production' },
    register: (s) => {
      release = cleanup.add(async () => void (await s.stop(STOP_GRACE_MS)), () => s.kill());
    },
  });
  try {
    return await fn(server);
  } finally {
    await release();
  }
}

const median = (ms: readonly number[]): number => percentile(Float64Array.from(ms).sort(), 50);
const round = (v: number, digits = 0): number => Math.round(v * 10 ** digits) / 10 ** digits;

interface Measured {
  plant: Plant;
  buildMs: number;
  rollupMs: number;
  raw: Timed;
  tier: Timed;
  before: DatabaseSizes;
  after: DatabaseSizes;
  problems: string[];
}

async function measure(options: HistoryTierOptions, dir: string, cleanup: Cleanup): Promise<Measured> {
  const plant = options.plant ?? TIER_PLANT;
  const end = plant.start + plant.days * DAY_MS;
  options.log(`[history] building ${plant.sensors} sensors × ${plant.days} days at ${plant.stepMs / 1000} s (${formatCount(instancesOf(plant))} instances) in ${dir}`);
  const buildMs = buildPlant(dir, plant, options.log);
  const before = measureSizes(dir);
  const problems: string[] = [];
  // The raw rows answer: no summary exists yet (the tier is complete before -Infinity), and the job is off.
  if (before.minute.rows + before.hour.rows > 0) problems.push('summaries exist before the rollups ran: the raw figure would read them');
  options.log('[history] hourly aggregations from the raw rows (rollups off, none computed)');
  const raw = await onBroker(options, dir, { HISTORY_ROLLUPS: 'false' }, cleanup, (s) => timeQueries(s.port, plant));
  options.log('[history] computing the summaries');
  const rolled = await rollUp(dir, Date.now());
  if (rolled.hourCompleteBefore < end) problems.push(`the hour tier is complete only before ${iso(rolled.hourCompleteBefore)}, not ${iso(end)}`);
  const after = measureSizes(dir);
  options.log(`[history] ${formatCount(rolled.read)} rows read, ${formatCount(rolled.minutes)} minutes and ${formatCount(rolled.hours)} hours summarized in ${Math.round(rolled.ms / 1000)} s; hourly aggregations from the hour tier`);
  const tier = await onBroker(options, dir, { HISTORY_ROLLUPS: 'true' }, cleanup, (s) => timeQueries(s.port, plant));
  problems.push(...compareAnswers(plant, raw.answers, tier.answers));
  return { plant, buildMs, rollupMs: rolled.ms, raw, tier, before, after, problems };
}

/** Bytes per row of a level; null when it holds none. */
const perRow = (level: { rows: number; bytes: number }): number | null => (level.rows === 0 ? null : level.bytes / level.rows);

function plantRows(m: Measured): { rows: Row[]; perDay: { raw: number; minute: number; hour: number } } {
  const raw = perRow(m.after.raw) ?? Number.NaN;
  const minute = perRow(m.after.minute) ?? Number.NaN;
  const hour = perRow(m.after.hour) ?? Number.NaN;
  const perSensorDay = DAY_MS / m.plant.stepMs;
  // One day of the full plant, by level: raw instances, minute and hour summaries.
  const perDay = { raw: FULL_SENSORS * perSensorDay * raw, minute: FULL_SENSORS * 1_440 * minute, hour: FULL_SENSORS * 24 * hour };
  const row = (key: string, unit: string, value: number, ceiling: number | null, digits = 0): Row => ({
    key, group: 'history', unit, value: round(value, digits), ceiling: ceiling === null ? null : round(ceiling, digits),
    ratio: ceiling === null || ceiling === 0 ? null : round(value / ceiling, 3),
  });
  const rawOnly30 = (30 * perDay.raw) / MB;
  const tiered30 = (30 * (perDay.raw + perDay.minute + perDay.hour)) / MB;
  return {
    perDay,
    rows: [
      row('history.plant-30d.db', 'MiB', m.after.inUse / MIB, m.before.inUse / MIB, 1),
      row('history.plant-30d.raw', 'bytes/instance', raw, null, 1),
      row('history.plant-30d.minute', 'bytes/summary', minute, null, 1),
      row('history.plant-30d.hour', 'bytes/summary', hour, null, 1),
      row('history.plant-30d.per-day', 'MB/day', (perDay.raw + perDay.minute + perDay.hour) / MB, perDay.raw / MB, 1),
      row('history.plant-30d.total', 'MB', tiered30, rawOnly30, 0),
    ],
  };
}

/** Builds the plant, times the hourly aggregation from raw rows and from the hour tier, and sizes each level. */
export async function benchHistoryTiers(options: HistoryTierOptions, cleanup: Cleanup): Promise<HistoryTierResult> {
  const dir = mkdtempSync(join(options.tmp, 'edgeld-history-'));
  const removeDir = cleanup.add(async () => rmSync(dir, { recursive: true, force: true }), () => rmSync(dir, { recursive: true, force: true }));
  try {
    const m = await measure(options, dir, cleanup);
    const rawMs = median(m.raw.ms);
    const tierMs = median(m.tier.ms);
    const ratio = tierMs / rawMs;
    const plant = plantRows(m);
    const rows: Row[] = [
      { key: 'aggr.hourly-30d', group: 'history', unit: 'ms', value: round(tierMs, 1), ceiling: round(rawMs, 1), ratio: round(ratio, 3) },
      ...plant.rows,
    ];
    const p = m.plant;
    const mb = (b: number): string => (b / MB).toFixed(1);
    const notes = [
      `aggr.hourly-30d: GET /temporal/entities/<sensor>?aggrMethods=${METHODS.join(',')}&aggrPeriodDuration=PT1H&timerel=between over the 30 days (720 periods of ${formatCount((3_600_000 / p.stepMs))} instances, ${formatCount(instancesOf({ ...p, sensors: 1 }))} in all) of each of ${p.sensors} sensors, ${WARMUP} uncounted then ${REPETITIONS} timed rounds; the median time from the hour tier (value) against the same queries from the raw rows on the same database before any summary existed, the rollup job off (ceiling column); the answers agree${m.problems.length > 0 ? ' NOT' : ''} (sums and averages to 1e-9 relative)`,
      `history data: ${p.sensors} sensors × ${p.days} days, one instance each every ${p.stepMs / 1000} s from ${iso(p.start)} (${formatCount(instancesOf(p))} instances), written in-process by the store's history append in ${Math.round(m.buildMs / 1000)} s; the summaries (${formatCount(m.after.minute.rows)} minutes, ${formatCount(m.after.hour.rows)} hours) computed by the rollup job body in ${Math.round(m.rollupMs / 1000)} s`,
      `history.plant-30d: pages in use of that database with its summaries (value) against raw rows only (ceiling), in MiB; .raw/.minute/.hour: bytes of each level's tables and indexes (dbstat) per row: ${formatCount(m.after.raw.rows)} raw instances in ${mb(m.after.raw.bytes)} MB, ${formatCount(m.after.minute.rows)} minute summaries in ${mb(m.after.minute.bytes)} MB, ${formatCount(m.after.hour.rows)} hour summaries in ${mb(m.after.hour.bytes)} MB`,
      `history.plant-30d.per-day and .total: extrapolated linearly to ${FULL_SENSORS} sensors every ${p.stepMs / 1000} s (${formatCount(FULL_SENSORS * (DAY_MS / p.stepMs))} instances a day) from those bytes per row: a day of raw + minute + hour (value) against raw only (ceiling), then 30 days of each; per day ${mb(plant.perDay.raw)} MB raw, ${mb(plant.perDay.minute)} MB of minutes, ${mb(plant.perDay.hour)} MB of hours`,
      `target aggr.hourly-30d ratio <= ${TIER_RATIO_TARGET}: ${round(ratio, 3)}, ${ratio <= TIER_RATIO_TARGET ? 'met' : 'MISSED'}`,
      ...m.problems.map((e) => `ERROR: aggr.hourly-30d: ${e}`),
    ];
    return { rows, notes, hasErrors: m.problems.length > 0 };
  } finally {
    await removeDir();
  }
}
