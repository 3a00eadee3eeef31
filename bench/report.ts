// Turns benchmark measurements into rows, a readable table grouped by scenario family and the
// one-line JSON summary.

import { formatCount } from './format-count.js';
import type { LoadResult } from './load.js';
import type { Scenario } from './scenario-types.js';

export interface ScenarioResult {
  readonly scenario: Scenario;
  /** Undefined when nothing was measured; `missing` says why. */
  readonly load: LoadResult | undefined;
  /** Disk bytes written per request; undefined when not measured or /proc/<pid>/io is unreadable. */
  readonly bytesPerOp: number | undefined;
  /** The target's CPU time (user + system) per request of the measured phase, in µs, when asked for (ScenarioRun.measureCpu). */
  readonly cpuUsPerOp?: number;
  readonly missing?: Missing;
}

/** Why a scenario has no measurement. Not an error when the target does not offer the endpoint yet. */
export interface Missing {
  readonly reason: string;
  readonly isError: boolean;
}

export interface TargetResult {
  readonly name: string;
  readonly scenarios: readonly ScenarioResult[];
  /** RSS after the first requests and a rest (see measure.ts REST_MS). */
  readonly rssIdle: number | undefined;
  /** RSS one second after the first requests. */
  readonly rssAfterRequests?: number | undefined;
  readonly rssLoaded: number | undefined;
  readonly notes: readonly string[];
}

export interface Row {
  readonly key: string;
  /** Rows of one group are printed together; not part of the JSON summary. */
  readonly group: string;
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

function row(group: string, key: string, unit: string, value: number | null, ceiling: number | null): Row {
  const ratio = value !== null && ceiling !== null && ceiling !== 0 ? round(value / ceiling, 2) : null;
  return { key, group, unit, value, ceiling, ratio };
}

/** True when requests go one at a time: throughput then counts request time only. */
export function isSequential(scenario: Scenario): boolean {
  const { measure } = scenario;
  return measure.kind !== 'rate' || measure.concurrency === 1;
}

/** The throughput unit of a scenario: req/s unless it counts items. */
export function unitOf(scenario: Scenario): string {
  return scenario.measure.kind === 'latency' ? 'req/s' : (scenario.measure.items?.unit ?? 'req/s');
}

/** Requests (or items) per second of a measurement. */
export function throughputOf(scenario: Scenario, load: LoadResult): number {
  const perRequest = scenario.measure.kind === 'latency' ? 1 : (scenario.measure.items?.perRequest ?? 1);
  if (!isSequential(scenario)) return load.requestsPerSecond * perRequest;
  return load.busyMs > 0 ? (load.completed * perRequest) / (load.busyMs / 1000) : Number.NaN;
}

function scenarioRows(scenario: Scenario, subject: ScenarioResult | undefined, ceiling: ScenarioResult | undefined): Row[] {
  const { name, group, measure } = scenario;
  const pick = (r: ScenarioResult | undefined, f: (load: LoadResult, r: ScenarioResult) => number | undefined, digits: number) =>
    r?.load === undefined ? null : round(f(r.load, r), digits);
  const p50 = (unitKey: string) => row(group, unitKey, 'ms', pick(subject, (l) => l.p50Ms, 2), pick(ceiling, (l) => l.p50Ms, 2));
  if (measure.kind === 'latency') return [p50(name)];
  const rate = (r: ScenarioResult | undefined) => pick(r, (l) => throughputOf(scenario, l), 0);
  const rows = [row(group, name, unitOf(scenario), rate(subject), rate(ceiling)), p50(`${name}.p50`)];
  if (measure.kind === 'rate') rows.push(row(group, `${name}.p99`, 'ms', pick(subject, (l) => l.p99Ms, 2), pick(ceiling, (l) => l.p99Ms, 2)));
  if (measure.measureWrites === true) {
    // Grouped writes (a batch, a temporal post) are counted per item, as measurements are.
    const perRequest = measure.items?.perRequest ?? 1;
    const bytes = (r: ScenarioResult | undefined) => pick(r, (_, res) => (res.bytesPerOp === undefined ? undefined : res.bytesPerOp / perRequest), 0);
    rows.push(row(group, `${name}.disk-write`, measure.items === undefined ? 'bytes/op' : 'bytes/item', bytes(subject), bytes(ceiling)));
  }
  return rows;
}

/**
 * The rows of a scenario measured against a baseline other than the ceiling (the same work on another
 * broker, or another request), keyed by the subject's scenario; the baseline fills the ceiling column.
 */
export function compareRows(subject: ScenarioResult, baseline: ScenarioResult): Row[] {
  return scenarioRows(subject.scenario, subject, baseline);
}

/** One row per measurement. `subject` is the broker; undefined when only the ceiling ran. */
export function buildRows(subject: TargetResult | undefined, ceiling: TargetResult): Row[] {
  const rows: Row[] = [];
  for (const c of ceiling.scenarios) {
    const s = subject?.scenarios.find((r) => r.scenario.name === c.scenario.name);
    rows.push(...scenarioRows(c.scenario, s, c));
  }
  // NOTE: the ceiling's RSS says little about the broker's, so memory rows carry no ceiling or ratio.
  const mib = (bytes: number | undefined) => round(bytes === undefined ? undefined : bytes / MIB, 1);
  rows.push(row('memory', 'rss.idle', 'MiB', mib(subject?.rssIdle), null));
  rows.push(row('memory', 'rss.idle.1s', 'MiB', mib(subject?.rssAfterRequests), null));
  rows.push(row('memory', 'rss.loaded', 'MiB', mib(subject?.rssLoaded), null));
  return rows;
}

/** Whether each scenario target was met, as note lines. */
export function describeTargets(rows: readonly Row[], scenarios: readonly Scenario[]): string[] {
  const notes: string[] = [];
  for (const { name, target } of scenarios) {
    if (!target) continue;
    const key = target.row === 'p50' ? `${name}.p50` : name;
    const found = rows.find((r) => r.key === key);
    const bound = target.atMost !== undefined ? `<= ${target.atMost}` : `>= ${target.atLeast ?? 0}`;
    const ratio = found?.ratio ?? null;
    const met = ratio !== null && (target.atMost === undefined || ratio <= target.atMost) && (target.atLeast === undefined || ratio >= target.atLeast);
    notes.push(`target ${key} ratio ${bound}: ${ratio === null ? 'not measured' : `${ratio}, ${met ? 'met' : 'MISSED'}`}`);
  }
  return notes;
}

/** Answer sizes and request counts of both targets, side by side, as note lines. */
export function describeSizes(subject: TargetResult | undefined, ceiling: TargetResult): string[] {
  const figure = (t: TargetResult, name: string, f: (load: LoadResult) => number | undefined): string => {
    const load = t.scenarios.find((r) => r.scenario.name === name)?.load;
    return `${(load === undefined ? undefined : f(load)) ?? '-'} (${t.name})`;
  };
  const both = (name: string, f: (load: LoadResult) => number | undefined): string =>
    [subject, ceiling].flatMap((t) => (t ? [figure(t, name, f)] : [])).join(', ');
  const notes: string[] = [];
  for (const { scenario } of ceiling.scenarios) {
    const { name, measure } = scenario;
    if (scenario.noteBytes) notes.push(`${name}: bytes per answer: ${both(name, (l) => l.responseBytes)}`);
    if (measure.kind !== 'latency' && measure.items) {
      notes.push(`${name}: requests of ${formatCount(measure.items.perRequest)} sent: ${both(name, (l) => l.completed)}`);
    }
  }
  return notes;
}

function cell(value: number | null): string {
  return value === null ? '-' : String(value);
}

/** A fixed-width table: scenario, value, unit, ceiling, ratio; a blank line between groups. */
export function formatTable(rows: readonly Row[]): string {
  const header = ['scenario', 'value', 'unit', 'ceiling', 'ratio'];
  const body = rows.map((r) => [r.key, cell(r.value), r.unit, cell(r.ceiling), cell(r.ratio)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 || i === 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ').trimEnd();
  const lines = [line(header), line(widths.map((w) => '-'.repeat(w)))];
  rows.forEach((r, i) => {
    if (i > 0 && rows[i - 1]?.group !== r.group) lines.push('');
    lines.push(line(body[i] ?? []));
  });
  return lines.join('\n');
}

/** The machine-readable summary: `{"create": {"value", "unit", "ceiling", "ratio"}, ...}`. */
export function formatJson(rows: readonly Row[]): string {
  const out: Record<string, Omit<Row, 'key' | 'group'>> = {};
  for (const r of rows) out[r.key] = { value: r.value, unit: r.unit, ceiling: r.ceiling, ratio: r.ratio };
  return JSON.stringify(out);
}
