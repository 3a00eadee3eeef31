// Benchmarks one target: starts it on a fresh data directory, warms it up, runs every scenario while
// sampling memory and disk writes, then stops it.

import { mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findFreePort, startServer, type ServerProcess } from './child.js';
import type { Cleanup } from './cleanup.js';
import { runLoad } from './load.js';
import { readRssBytes, readWriteBytes, RssSampler } from './proc.js';
import type { ScenarioResult, TargetResult } from './report.js';
import { SCENARIOS, seededRandom, type BenchState, type Scenario } from './scenarios.js';

const WARMUP_MAX_MS = 10_000;
const MAX_REQUESTS = 1_000_000;
const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 15_000;
const IDLE_SETTLE_MS = 1_000;
const WRITE_SETTLE_MS = 250;
const SEED = 42;

export interface MeasureOptions {
  readonly concurrency: number;
  /** Measured milliseconds per scenario. */
  readonly durationMs: number;
  /** Parent of the temporary data directory. */
  readonly tmp: string;
}

export interface Target {
  readonly name: 'broker' | 'ceiling';
  readonly script: string;
}

interface StartedTarget {
  readonly server: ServerProcess;
  /** Stops the server and removes its data directory; resolves with how the server ended. */
  readonly stop: () => Promise<string>;
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

async function runScenario(
  server: ServerProcess,
  scenario: Scenario,
  state: BenchState,
  options: MeasureOptions,
): Promise<ScenarioResult> {
  const before = scenario.measureWrites ? await readWriteBytes(server.pid) : undefined;
  const load = await runLoad({
    port: server.port,
    concurrency: options.concurrency,
    maxRequests: MAX_REQUESTS,
    durationMs: options.durationMs,
    expectStatus: scenario.expectStatus,
    next: () => scenario.request(state),
  });
  let bytesPerOp: number | undefined;
  if (scenario.measureWrites) {
    await sleep(WRITE_SETTLE_MS);
    const after = await readWriteBytes(server.pid);
    if (before !== undefined && after !== undefined && load.completed > 0) bytesPerOp = (after - before) / load.completed;
  }
  const seconds = (load.durationMs / 1000).toFixed(1);
  const rate = Math.round(load.requestsPerSecond);
  log(`[${server.name}] ${scenario.name}: ${load.completed} requests in ${seconds} s, ${rate} req/s, ${load.errors} errors`);
  return { scenario, load, bytesPerOp };
}

/** Unmeasured requests of every scenario, so the measured runs see a warm JIT and warm caches. */
async function warmUp(server: ServerProcess, state: BenchState, options: MeasureOptions, notes: string[]): Promise<void> {
  for (const scenario of SCENARIOS) {
    const load = await runLoad({
      port: server.port,
      concurrency: options.concurrency,
      maxRequests: scenario.warmup,
      durationMs: WARMUP_MAX_MS,
      expectStatus: scenario.expectStatus,
      next: () => scenario.request(state),
    });
    if (load.errors > 0) {
      notes.push(`${server.name} warm-up ${scenario.name}: ${load.errors} errors; first: ${load.firstError ?? ''}`);
    }
  }
}

/** Starts the target with a fresh data directory; both are undone by `cleanup`. */
async function startTarget(target: Target, options: MeasureOptions, cleanup: Cleanup): Promise<StartedTarget> {
  const dataDir = mkdtempSync(join(options.tmp, `edgeld-bench-${target.name}-`));
  const removeDir = cleanup.add(
    () => rm(dataDir, { recursive: true, force: true }),
    () => rmSync(dataDir, { recursive: true, force: true }),
  );
  const port = await findFreePort();
  const env = {
    SERVER_PORT: String(port),
    SERVER_HOST: '127.0.0.1',
    STORAGE_DIR: dataDir,
    LOG_LEVEL: 'warn',
    MQTT_PORT: String(await findFreePort()),
    NODE_ENV: 'production',
  };
  log(`[${target.name}] starting ${target.script} on 127.0.0.1:${port}, data in ${dataDir}`);
  let stopped = '';
  let stopServer = async (): Promise<void> => {};
  const server = await startServer({
    name: target.name,
    script: target.script,
    port,
    env,
    readyTimeoutMs: READY_TIMEOUT_MS,
    register: (s) => {
      stopServer = cleanup.add(
        async () => {
          stopped = await s.stop(STOP_GRACE_MS);
        },
        () => s.kill(),
      );
    },
  });
  const stop = async (): Promise<string> => {
    await stopServer();
    await removeDir();
    return stopped;
  };
  return { server, stop };
}

/** Runs every scenario against one target and reports what it measured. */
export async function benchTarget(target: Target, options: MeasureOptions, cleanup: Cleanup): Promise<TargetResult> {
  const { server, stop } = await startTarget(target, options, cleanup);
  const notes: string[] = [];
  const state: BenchState = { created: 0, random: seededRandom(SEED) };
  await warmUp(server, state, options, notes);
  await sleep(IDLE_SETTLE_MS);
  const rssIdle = await readRssBytes(server.pid);

  const sampler = new RssSampler(server.pid);
  sampler.start();
  const scenarios: ScenarioResult[] = [];
  for (const scenario of SCENARIOS) {
    const result = await runScenario(server, scenario, state, options);
    scenarios.push(result);
    const { errors, firstError } = result.load;
    if (errors > 0) notes.push(`${target.name} ${scenario.name}: ${errors} errors; first: ${firstError ?? ''}`);
    if (scenario.measureWrites && result.bytesPerOp === undefined) {
      notes.push(`${target.name}: /proc/${server.pid}/io is unreadable; no disk-write figure`);
    }
  }
  const rssLoaded = await sampler.stop();
  if (rssIdle === undefined) notes.push(`${target.name}: /proc/${server.pid}/status is unreadable; no RSS figure`);

  const stopped = await stop();
  notes.push(`${target.name} ${stopped}`);
  if (!stopped.startsWith('stopped on SIGTERM')) notes.push(`${target.name} output:\n${server.tail()}`);
  return { name: target.name, scenarios, rssIdle, rssLoaded, notes };
}

