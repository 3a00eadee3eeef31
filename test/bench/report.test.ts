// The benchmark report: rows per measure kind, missing measurements as null, groups in the table,
// and target notes.

import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../bench/load.js';
import { buildRows, compareRows, describeTargets, formatJson, formatTable, type TargetResult } from '../../bench/report.js';
import type { Scenario } from '../../bench/scenario-types.js';

function load(patch: Partial<LoadResult>): LoadResult {
  return {
    completed: 10, errors: 0, firstError: undefined, firstErrorStatus: undefined, responseBytes: 100,
    durationMs: 1000, busyMs: 500, requestsPerSecond: 10, p50Ms: 5, p99Ms: 9, ...patch,
  };
}

const QUERY: Scenario = {
  name: 'query.q', group: 'query', description: '', expectStatus: 200, warmup: 0, measure: { kind: 'rate' },
  request: () => ({ method: 'GET', path: '/' }),
};
const BATCH: Scenario = {
  name: 'batch.upsert-1000', group: 'batch', description: '', expectStatus: 201, warmup: 0,
  measure: { kind: 'rate', concurrency: 1, items: { perRequest: 1000, unit: 'entities/s' } }, target: { row: 'value', atLeast: 0.3 },
  request: () => ({ method: 'POST', path: '/' }),
};
const READ: Scenario = {
  name: 'temporal.last10k', group: 'temporal', description: '', expectStatus: 200, warmup: 0,
  measure: { kind: 'latency', repetitions: 5 }, target: { row: 'value', atMost: 3 }, request: () => ({ method: 'GET', path: '/' }),
};

function target(name: string, results: TargetResult['scenarios']): TargetResult {
  return { name, scenarios: results, rssIdle: undefined, rssLoaded: undefined, notes: [] };
}

const broker = target('broker', [
  { scenario: QUERY, load: load({ requestsPerSecond: 50 }), bytesPerOp: undefined },
  { scenario: BATCH, load: load({ completed: 4, busyMs: 800 }), bytesPerOp: undefined },
  { scenario: READ, load: undefined, bytesPerOp: undefined, missing: { reason: 'not available (501)', isError: false } },
]);
const ceiling = target('ceiling', [
  { scenario: QUERY, load: load({ requestsPerSecond: 100 }), bytesPerOp: undefined },
  { scenario: BATCH, load: load({ completed: 10, busyMs: 200 }), bytesPerOp: undefined },
  { scenario: READ, load: load({ p50Ms: 20 }), bytesPerOp: undefined },
]);

describe('buildRows', () => {
  const rows = buildRows(broker, ceiling);
  const byKey = (key: string) => rows.find((r) => r.key === key);

  it('counts items over summed request time when requests go one at a time', () => {
    expect(byKey('batch.upsert-1000')).toMatchObject({ unit: 'entities/s', value: 5000, ceiling: 50000, ratio: 0.1 });
  });

  it('gives a latency scenario one ms row, null where the broker has no measurement', () => {
    expect(byKey('temporal.last10k')).toMatchObject({ unit: 'ms', value: null, ceiling: 20, ratio: null });
    expect(byKey('temporal.last10k.p99')).toBeUndefined();
  });

  it('keeps the group out of the JSON summary', () => {
    expect(JSON.parse(formatJson(rows))['query.q']).toEqual({ value: 50, unit: 'req/s', ceiling: 100, ratio: 0.5 });
  });

  it('separates groups with a blank line in the table', () => {
    const lines = formatTable(rows).split('\n');
    const blank = lines.indexOf('');
    expect(lines[blank - 1]).toMatch(/^query\.q\.p99/);
    expect(lines[blank + 1]).toMatch(/^batch\.upsert-1000 /);
  });

  it('says whether each target was met', () => {
    expect(describeTargets(rows, [BATCH, READ])).toEqual([
      'target batch.upsert-1000 ratio >= 0.3: 0.1, MISSED',
      'target temporal.last10k ratio <= 3: not measured',
    ]);
  });
});

describe('disk-write rows', () => {
  const UPDATE: Scenario = { ...QUERY, name: 'update', group: 'entities', measure: { kind: 'rate', measureWrites: true } };
  const GROUPED: Scenario = { ...BATCH, measure: { kind: 'rate', concurrency: 1, items: { perRequest: 1000, unit: 'entities/s' }, measureWrites: true } };
  const INGEST: Scenario = {
    ...READ, name: 'temporal.ingest', measure: { kind: 'total', requests: 10, items: { perRequest: 500, unit: 'instances/s' }, measureWrites: true },
  };
  const rows = buildRows(
    target('broker', [
      { scenario: UPDATE, load: load({}), bytesPerOp: 30_000 },
      { scenario: GROUPED, load: load({}), bytesPerOp: 2_000_000 },
      { scenario: INGEST, load: load({}), bytesPerOp: 100_000 },
    ]),
    target('ceiling', [
      { scenario: UPDATE, load: load({}), bytesPerOp: 20_000 },
      { scenario: GROUPED, load: load({}), bytesPerOp: 500_000 },
      { scenario: INGEST, load: undefined, bytesPerOp: undefined, missing: { reason: 'not available (501)', isError: false } },
    ]),
  );
  const byKey = (key: string) => rows.find((r) => r.key === key);

  it('reports a single write per request and a grouped write per item', () => {
    expect(byKey('update.disk-write')).toMatchObject({ unit: 'bytes/op', value: 30_000, ceiling: 20_000, ratio: 1.5 });
    expect(byKey('batch.upsert-1000.disk-write')).toMatchObject({ unit: 'bytes/item', value: 2_000, ceiling: 500, ratio: 4 });
    expect(byKey('temporal.ingest.disk-write')).toMatchObject({ unit: 'bytes/item', value: 200, ceiling: null, ratio: null });
  });

  it('gives a one-shot ingest no p99 row', () => {
    expect(byKey('temporal.ingest.p99')).toBeUndefined();
    expect(byKey('update.p99')).toBeDefined();
  });
});

describe('compareRows', () => {
  const SUBJECT: Scenario = { ...QUERY, name: 'auth.query-1pct', group: 'auth', target: { row: 'value', atLeast: 0.85 } };
  const rows = compareRows(
    { scenario: SUBJECT, load: load({ requestsPerSecond: 90, p50Ms: 4 }), bytesPerOp: undefined },
    { scenario: QUERY, load: load({ requestsPerSecond: 100 }), bytesPerOp: undefined },
  );

  it('keys the rows by the subject and puts the baseline in the ceiling column', () => {
    expect(rows.map((r) => r.key)).toEqual(['auth.query-1pct', 'auth.query-1pct.p50', 'auth.query-1pct.p99']);
    expect(rows[0]).toMatchObject({ group: 'auth', unit: 'req/s', value: 90, ceiling: 100, ratio: 0.9 });
    expect(rows[1]).toMatchObject({ value: 4, ceiling: 5, ratio: 0.8 });
  });

  it('checks the subject\'s target against the baseline', () => {
    expect(describeTargets(rows, [SUBJECT])).toEqual(['target auth.query-1pct ratio >= 0.85: 0.9, met']);
  });

  it('leaves the figures of a missing half null', () => {
    const missing = compareRows(
      { scenario: SUBJECT, load: undefined, bytesPerOp: undefined, missing: { reason: 'setup failed', isError: true } },
      { scenario: QUERY, load: load({}), bytesPerOp: undefined },
    );
    expect(missing[0]).toMatchObject({ value: null, ceiling: 10, ratio: null });
  });
});
