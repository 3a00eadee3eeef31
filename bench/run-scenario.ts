// Runs one scenario against one started target: loads the data it needs (once per target), warms up,
// measures it as its Measure says, and tells an endpoint the target does not offer from a failure.

import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerProcess } from './child.js';
import { runLoad, type LoadOptions, type LoadResult } from './load.js';
import { readCpuMs, readWriteBytes } from './proc.js';
import { isSequential, throughputOf, unitOf, type Missing, type ScenarioResult } from './report.js';
import type { BenchState, Dataset, Scenario } from './scenario-types.js';

const WARMUP_MAX_MS = 10_000;
const MAX_REQUESTS = 1_000_000;
/** Bounds of phases that run to a request count rather than for the run's duration. */
const SETUP_MAX_MS = 300_000;
const TOTAL_MAX_MS = 600_000;
const LATENCY_MAX_MS = 120_000;
const WRITE_SETTLE_MS = 250;
/** Answers meaning the target has no such endpoint (yet), rather than a failing one. */
const UNAVAILABLE_STATUS = new Set([404, 405, 501]);

export interface ScenarioRun {
  readonly server: ServerProcess;
  readonly state: BenchState;
  /** The run's concurrency and measured milliseconds per duration-bound scenario. */
  readonly concurrency: number;
  readonly durationMs: number;
  /**
   * Least warm-up time of a throughput (`rate`) scenario, after its counted warm-up: a broker's
   * request path reaches its optimised steady state only after a second or so of load.
   */
  readonly warmupMs: number;
  /** Datasets already loaded on this target: undefined when loaded, else why they are not. */
  readonly datasets: Map<string, Missing | undefined>;
  /** Results of the scenarios run so far on this target. */
  readonly results: readonly ScenarioResult[];
  readonly notes: string[];
  /** Called after each counted warm-up, before the timed one (the first call reads the idle RSS). */
  readonly afterWarmup: () => Promise<void>;
  /** Read the target's CPU time around the measured phase (ScenarioResult.cpuUsPerOp). */
  readonly measureCpu?: boolean;
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/**
 * Why a phase failed, or undefined when it did not. Not an error when the endpoint is optional and
 * every answer said it does not exist.
 */
function missingOf(load: LoadResult, what: string, isOptional: boolean): Missing | undefined {
  if (load.errors === 0) return undefined;
  const status = load.firstErrorStatus ?? 0;
  const isUnavailable = isOptional && load.errors === load.completed && UNAVAILABLE_STATUS.has(status);
  const reason = `${what} ${isUnavailable ? `is not available (${status})` : 'failed'}: ${load.firstError ?? ''}`;
  return { reason, isError: !isUnavailable };
}

async function loadDataset(run: ScenarioRun, dataset: Dataset): Promise<Missing | undefined> {
  if (run.datasets.has(dataset.name)) return run.datasets.get(dataset.name);
  const started = performance.now();
  let missing: Missing | undefined;
  for (const [i, step] of dataset.steps.entries()) {
    const load = await runLoad({
      port: run.server.port, ...(run.server.tls ? { tls: run.server.tls } : {}), concurrency: 1, maxRequests: step.requests, durationMs: SETUP_MAX_MS,
      expectStatus: step.expectStatus, next: step.request, stopOnError: true,
    });
    missing = missingOf(load, `setup ${dataset.name} step ${i + 1}`, dataset.isOptional === true);
    if (!missing && load.completed < step.requests) {
      missing = { reason: `setup ${dataset.name} step ${i + 1} ran out of time`, isError: true };
    }
    if (missing) break;
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  log(`[${run.server.name}] setup ${dataset.name}: ${missing ? missing.reason : `done in ${seconds} s`}`);
  run.datasets.set(dataset.name, missing);
  return missing;
}

/** The load phase of a scenario's measurement. */
function measuredLoad(run: ScenarioRun, scenario: Scenario): Omit<LoadOptions, 'next'> {
  const base = {
    port: run.server.port, expectStatus: scenario.expectStatus, ...(scenario.check ? { check: scenario.check } : {}), ...(run.server.tls ? { tls: run.server.tls } : {}),
  };
  const { measure } = scenario;
  switch (measure.kind) {
    case 'rate':
      return { ...base, concurrency: measure.concurrency ?? run.concurrency, maxRequests: MAX_REQUESTS, durationMs: run.durationMs };
    case 'total':
      return { ...base, concurrency: 1, maxRequests: measure.requests, durationMs: TOTAL_MAX_MS, stopOnError: true };
    case 'latency':
      return { ...base, concurrency: 1, maxRequests: measure.repetitions, durationMs: LATENCY_MAX_MS };
  }
}

async function measure(run: ScenarioRun, scenario: Scenario): Promise<ScenarioResult> {
  const { server, state } = run;
  const phase = measuredLoad(run, scenario);
  const warmUp = async (maxRequests: number, durationMs: number): Promise<Missing | undefined> => {
    const warm = await runLoad({ ...phase, maxRequests, durationMs, next: (_n, client) => scenario.request(state, client) });
    const missing = missingOf(warm, `warm-up of ${scenario.name}`, scenario.isOptional === true);
    if (missing?.isError === true) run.notes.push(`${server.name} ${missing.reason}`);
    return missing;
  };
  if (scenario.warmup > 0) {
    const missing = await warmUp(scenario.warmup, WARMUP_MAX_MS);
    if (missing && !missing.isError) return { scenario, load: undefined, bytesPerOp: undefined, missing };
  }
  await run.afterWarmup();
  if (scenario.measure.kind === 'rate' && run.warmupMs > 0) await warmUp(MAX_REQUESTS, run.warmupMs);
  const measureWrites = scenario.measure.kind !== 'latency' && scenario.measure.measureWrites === true;
  const before = measureWrites ? await readWriteBytes(server.pid) : undefined;
  const cpuBefore = run.measureCpu === true ? await readCpuMs(server.pid) : undefined;
  const load = await runLoad({ ...phase, next: (_n, client) => scenario.request(state, client) });
  const cpuAfter = cpuBefore === undefined ? undefined : await readCpuMs(server.pid);
  const cpuUsPerOp = cpuBefore !== undefined && cpuAfter !== undefined && load.completed > 0 ? ((cpuAfter - cpuBefore) * 1000) / load.completed : undefined;
  const missing = missingOf(load, scenario.name, scenario.isOptional === true);
  if (missing && !missing.isError) return { scenario, load: undefined, bytesPerOp: undefined, missing };
  let bytesPerOp: number | undefined;
  if (measureWrites) {
    await sleep(WRITE_SETTLE_MS);
    const after = await readWriteBytes(server.pid);
    if (before !== undefined && after !== undefined && load.completed > 0) bytesPerOp = (after - before) / load.completed;
    if (bytesPerOp === undefined) run.notes.push(`${server.name}: /proc/${server.pid}/io is unreadable; no disk-write figure`);
  }
  if (load.errors > 0) run.notes.push(`${server.name} ${scenario.name}: ${load.errors} errors; first: ${load.firstError ?? ''}`);
  if (scenario.measure.kind === 'total' && load.completed < scenario.measure.requests) {
    run.notes.push(`${server.name} ${scenario.name}: stopped after ${load.completed} of ${scenario.measure.requests} requests`);
  }
  const seconds = ((isSequential(scenario) ? load.busyMs : load.durationMs) / 1000).toFixed(1);
  const rate = `${Math.round(throughputOf(scenario, load))} ${unitOf(scenario)}`;
  log(`[${server.name}] ${scenario.name}: ${load.completed} requests in ${seconds} s, ${rate}, p50 ${load.p50Ms.toFixed(2)} ms, ${load.errors} errors`);
  return { scenario, load, bytesPerOp, ...(cpuUsPerOp === undefined ? {} : { cpuUsPerOp }) };
}

/** Runs one scenario; a scenario that cannot run says why in `missing` instead of throwing. */
export async function runScenario(run: ScenarioRun, scenario: Scenario): Promise<ScenarioResult> {
  const skip = (missing: Missing): ScenarioResult => {
    log(`[${run.server.name}] ${scenario.name}: not measured: ${missing.reason}`);
    return { scenario, load: undefined, bytesPerOp: undefined, missing };
  };
  if (scenario.needs !== undefined) {
    const needed = run.results.find((r) => r.scenario.name === scenario.needs);
    if (needed?.load === undefined) {
      return skip({ reason: `needs the data of ${scenario.needs}, which was not measured`, isError: needed?.missing?.isError ?? true });
    }
  }
  if (scenario.dataset) {
    const missing = await loadDataset(run, scenario.dataset);
    if (missing) return skip(missing);
  }
  const result = await measure(run, scenario);
  return result.missing ? skip(result.missing) : result;
}
