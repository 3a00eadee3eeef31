// Turns benchmark measurements into rows, a readable table and the one-line JSON summary.

import type { LoadResult } from './load.js';
import type { Scenario } from './scenarios.js';

export interface ScenarioResult {
  readonly scenario: Scenario;
  readonly load: LoadResult;
  /** Disk bytes written per request; undefined when not measured or /proc/<pid>/io is unreadable. */
  readonly bytesPerOp: number | undefined;
}

export interface TargetResult {
  readonly name: string;
  readonly scenarios: readonly ScenarioResult[];
  readonly rssIdle: number | undefined;
  readonly rssLoaded: number | undefined;
  readonly notes: readonly string[];
}

export interface Row {
  readonly key: string;
  readonly unit: string;
  readonly value: number | null;
  readonly ceiling: number | null;
  /** value / ceiling. Below 1 is slower for req/s; above 1 is slower or heavier for ms and bytes. */
  readonly ratio: number | null;
}

const MIB = 1024 * 1024;

function round(value: number | undefined, digits: number): number | null {
  if (value === undefined || !Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function row(key: string, unit: string, value: number | null, ceiling: number | null): Row {
  const ratio = value !== null && ceiling !== null && ceiling !== 0 ? round(value / ceiling, 2) : null;
  return { key, unit, value, ceiling, ratio };
}

function scenarioRows(name: string, subject: ScenarioResult | undefined, ceiling: ScenarioResult | undefined): Row[] {
  const pick = (r: ScenarioResult | undefined, f: (r: ScenarioResult) => number | undefined, digits: number) =>
    r === undefined ? null : round(f(r), digits);
  const rows = [
    row(name, 'req/s', pick(subject, (r) => r.load.requestsPerSecond, 0), pick(ceiling, (r) => r.load.requestsPerSecond, 0)),
    row(`${name}.p50`, 'ms', pick(subject, (r) => r.load.p50Ms, 2), pick(ceiling, (r) => r.load.p50Ms, 2)),
    row(`${name}.p99`, 'ms', pick(subject, (r) => r.load.p99Ms, 2), pick(ceiling, (r) => r.load.p99Ms, 2)),
  ];
  if ((subject ?? ceiling)?.scenario.measureWrites) {
    rows.push(row(`${name}.disk-write`, 'bytes/op', pick(subject, (r) => r.bytesPerOp, 0), pick(ceiling, (r) => r.bytesPerOp, 0)));
  }
  return rows;
}

/** One row per measurement. `subject` is the broker; undefined when only the ceiling ran. */
export function buildRows(subject: TargetResult | undefined, ceiling: TargetResult): Row[] {
  const rows: Row[] = [];
  for (const c of ceiling.scenarios) {
    const s = subject?.scenarios.find((r) => r.scenario.name === c.scenario.name);
    rows.push(...scenarioRows(c.scenario.name, s, c));
  }
  // NOTE: the ceiling's RSS says little about the broker's, so memory rows carry no ceiling or ratio.
  rows.push(row('rss.idle', 'MiB', round(subject && subject.rssIdle !== undefined ? subject.rssIdle / MIB : undefined, 1), null));
  rows.push(row('rss.loaded', 'MiB', round(subject && subject.rssLoaded !== undefined ? subject.rssLoaded / MIB : undefined, 1), null));
  return rows;
}

function cell(value: number | null): string {
  return value === null ? '-' : String(value);
}

/** A fixed-width table: scenario, value, unit, ceiling, ratio. */
export function formatTable(rows: readonly Row[]): string {
  const header = ['scenario', 'value', 'unit', 'ceiling', 'ratio'];
  const body = rows.map((r) => [r.key, cell(r.value), r.unit, cell(r.ceiling), cell(r.ratio)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 || i === 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/** The machine-readable summary: `{"create": {"value", "unit", "ceiling", "ratio"}, ...}`. */
export function formatJson(rows: readonly Row[]): string {
  const out: Record<string, Omit<Row, 'key'>> = {};
  for (const r of rows) out[r.key] = { value: r.value, unit: r.unit, ceiling: r.ceiling, ratio: r.ratio };
  return JSON.stringify(out);
}
