// Temporal scenarios: ingest of 1,000,000 history instances into one attribute, a read of its last
// 10,000, and an hourly aggregation over 30 days of 1-minute data held by a second entity.

import { formatCount } from './format-count.js';
import type { BenchRequest } from './load.js';
import type { Check, Dataset, Scenario } from './scenario-types.js';
import { isRecord } from './json.js';

const ENTITIES = '/ngsi-ld/v1/entities';
const TEMPORAL = '/ngsi-ld/v1/temporal/entities';
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

interface Series {
  readonly id: string;
  readonly start: number;
  readonly stepMs: number;
  readonly count: number;
  readonly chunk: number;
}

/** The ingest series: one instance a second from 2024-01-01, written by the measured scenario. */
const PER_SECOND: Series = { id: 'urn:ngsi-ld:Series:per-second', start: Date.UTC(2024, 0, 1), stepMs: 1_000, count: 1_000_000, chunk: 10_000 };
/** The aggregation series: 30 days of 1-minute data from 2024-03-01, written during setup. */
const PER_MINUTE: Series = { id: 'urn:ngsi-ld:Series:per-minute', start: Date.UTC(2024, 2, 1), stepMs: 60_000, count: 30 * 24 * 60, chunk: 7_200 };
const LAST_N = 10_000;
const HOURS = (PER_MINUTE.count * PER_MINUTE.stepMs) / HOUR_MS;

/** Value of instance i: a slow wave, deterministic and with two decimals. */
const valueAt = (i: number): number => Math.round(2000 + 500 * Math.sin(i / 1000)) / 100;
const iso = (t: number): string => new Date(t).toISOString();

/** Adds instances first … first + n - 1 of a series to its temperature (NGSI-LD §6.20.3.1). */
function addInstances(series: Series, first: number, n: number): BenchRequest {
  const temperature = Array.from({ length: n }, (_, k) => {
    const i = first + k;
    return { type: 'Property', value: valueAt(i), observedAt: iso(series.start + i * series.stepMs) };
  });
  return { method: 'POST', path: `${TEMPORAL}/${encodeURIComponent(series.id)}/attrs`, body: JSON.stringify({ temperature }) };
}

function createEntity(series: Series): BenchRequest {
  return { method: 'POST', path: ENTITIES, body: JSON.stringify({ id: series.id, type: 'Series' }) };
}

function temporalPath(series: Series, params: Readonly<Record<string, string>>): string {
  const query = Object.entries(params).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  return `${TEMPORAL}/${encodeURIComponent(series.id)}?${query}`;
}

const SERIES_DATA: Dataset = {
  name: 'series',
  isOptional: true,
  note:
    `temporal setup: ${PER_SECOND.id} and ${PER_MINUTE.id} created without attributes; ${PER_MINUTE.id} temperature then ` +
    `gets ${formatCount(PER_MINUTE.count)} instances (30 days, one a minute, from ${iso(PER_MINUTE.start)}) in ` +
    `${PER_MINUTE.count / PER_MINUTE.chunk} posts of ${formatCount(PER_MINUTE.chunk)}; temporal.ingest then writes ` +
    `${formatCount(PER_SECOND.count)} instances (one a second from ${iso(PER_SECOND.start)}) into ${PER_SECOND.id} temperature ` +
    `in ${PER_SECOND.count / PER_SECOND.chunk} posts of ${formatCount(PER_SECOND.chunk)}`,
  steps: [
    { requests: 1, expectStatus: 201, request: () => createEntity(PER_SECOND) },
    { requests: 1, expectStatus: 201, request: () => createEntity(PER_MINUTE) },
    {
      requests: PER_MINUTE.count / PER_MINUTE.chunk,
      expectStatus: 204,
      request: (n) => addInstances(PER_MINUTE, n * PER_MINUTE.chunk, PER_MINUTE.chunk),
    },
  ],
};


function temperatureOf(body: string): unknown {
  const parsed: unknown = JSON.parse(body);
  return isRecord(parsed) ? parsed.temperature : undefined;
}

/** The last 10,000 instances, oldest first, ending with the last one ingested. */
const checkLastN: Check = (body) => {
  const instances = temperatureOf(body);
  if (!Array.isArray(instances)) return 'temperature is not an array of instances';
  if (instances.length !== LAST_N) return `expected ${LAST_N} instances, got ${instances.length}`;
  const first: unknown = instances[0];
  const last: unknown = instances[LAST_N - 1];
  const firstAt = iso(PER_SECOND.start + (PER_SECOND.count - LAST_N) * PER_SECOND.stepMs);
  const lastAt = iso(PER_SECOND.start + (PER_SECOND.count - 1) * PER_SECOND.stepMs);
  if (!isRecord(first) || first.observedAt !== firstAt) return `the first instance is not the one observed at ${firstAt}`;
  if (!isRecord(last) || last.observedAt !== lastAt) return `the last instance is not the one observed at ${lastAt}`;
  return undefined;
};

/** avg, min and max of the first hour, as the answer must give them. */
function firstHour(): { avg: number; min: number; max: number } {
  const values = Array.from({ length: HOUR_MS / PER_MINUTE.stepMs }, (_, i) => valueAt(i));
  return { avg: values.reduce((a, b) => a + b, 0) / values.length, min: Math.min(...values), max: Math.max(...values) };
}

/** One period per hour for each method; the first period's figures match the data. */
const checkHourly: Check = (body) => {
  const aggregated = temperatureOf(body);
  if (!isRecord(aggregated)) return 'temperature is not an aggregated attribute';
  const expected = firstHour();
  for (const method of ['avg', 'min', 'max'] as const) {
    const periods = aggregated[method];
    if (!Array.isArray(periods) || periods.length !== HOURS) return `expected ${HOURS} ${method} periods`;
    const head: unknown = periods[0];
    const value: unknown = Array.isArray(head) ? head[0] : undefined;
    if (typeof value !== 'number' || Math.abs(value - expected[method]) > 1e-6) return `the first ${method} is not ${expected[method]}`;
  }
  return undefined;
};

const LAST_10K = temporalPath(PER_SECOND, {
  attrs: 'temperature', lastN: String(LAST_N), timerel: 'before', timeAt: iso(PER_SECOND.start + PER_SECOND.count * PER_SECOND.stepMs),
});
const HOURLY = temporalPath(PER_MINUTE, {
  attrs: 'temperature', options: 'aggregatedValues', aggrMethods: 'avg,min,max', aggrPeriodDuration: 'PT1H',
  timerel: 'between', timeAt: iso(PER_MINUTE.start), endTimeAt: iso(PER_MINUTE.start + 30 * DAY_MS),
});

export const TEMPORAL_SCENARIOS: readonly Scenario[] = [
  {
    name: 'temporal.ingest',
    group: 'temporal',
    description: `POST /temporal/entities/{id}/attrs, ${formatCount(PER_SECOND.count)} instances in chunks of ${formatCount(PER_SECOND.chunk)}, once`,
    expectStatus: 204,
    warmup: 0,
    isOptional: true,
    measure: { kind: 'total', requests: PER_SECOND.count / PER_SECOND.chunk, items: { perRequest: PER_SECOND.chunk, unit: 'instances/s' }, measureWrites: true },
    dataset: SERIES_DATA,
    request: (state) => {
      const first = state.ingested;
      state.ingested += PER_SECOND.chunk;
      return addInstances(PER_SECOND, first, PER_SECOND.chunk);
    },
  },
  {
    name: 'temporal.last10k',
    group: 'temporal',
    description: `GET /temporal/entities/{id}?attrs=temperature&lastN=${LAST_N}&timerel=before&timeAt=<after the last>, out of ${formatCount(PER_SECOND.count)}`,
    expectStatus: 200,
    warmup: 2,
    measure: { kind: 'latency', repetitions: 7 },
    isOptional: true,
    needs: 'temporal.ingest',
    noteBytes: true,
    target: { row: 'value', atMost: 3 },
    check: checkLastN,
    request: () => ({ method: 'GET', path: LAST_10K }),
  },
  {
    name: 'temporal.aggr-hourly',
    group: 'temporal',
    description:
      'GET /temporal/entities/{id}?attrs=temperature&options=aggregatedValues&aggrMethods=avg,min,max&aggrPeriodDuration=PT1H' +
      `&timerel=between over 30 days, ${formatCount(PER_MINUTE.count)} instances`,
    expectStatus: 200,
    warmup: 2,
    measure: { kind: 'latency', repetitions: 7 },
    isOptional: true,
    dataset: SERIES_DATA,
    noteBytes: true,
    target: { row: 'value', atMost: 2 },
    check: checkHourly,
    request: () => ({ method: 'GET', path: HOURLY }),
  },
];
