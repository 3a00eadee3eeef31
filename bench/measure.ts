// Benchmarks one target: starts it on a fresh data directory, runs every scenario (each warmed up
// first) while sampling memory, then stops it.

import { mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findFreePort, startServer, type ServerProcess } from './child.js';
import { CleanupClosedError, type Cleanup } from './cleanup.js';
import { readRssBytes, RssSampler } from './proc.js';
import { seededRandom } from './random.js';
import type { Missing, ScenarioResult, TargetResult } from './report.js';
import { runScenario, type ScenarioRun } from './run-scenario.js';
import type { BenchState } from './scenario-types.js';
import { SCENARIOS } from './scenarios.js';

const READY_TIMEOUT_MS = 30_000;
/** A broker with a million history rows may need a while to checkpoint its WAL on SIGTERM. */
const STOP_GRACE_MS = 30_000;
const IDLE_SETTLE_MS = 1_000;
/**
 * How long the broker rests before its idle RSS is read: V8 gives back the young generation it grew
 * under load once the process has been idle for about ten seconds, and the checkpoint thread ends 30 s
 * after its last cycle. A gateway at rest for a minute holds what this reads.
 */
const REST_MS = 40_000;
const SEED = 42;

export interface MeasureOptions {
  readonly concurrency: number;
  /** Measured milliseconds per scenario. */
  readonly durationMs: number;
  /** Least warm-up milliseconds of a throughput scenario (see ScenarioRun.warmupMs). */
  readonly warmupMs: number;
  /** Parent of the temporary data directory. */
  readonly tmp: string;
}

export interface Target {
  readonly name: 'broker' | 'ceiling' | 'broker-auth' | 'broker-tls' | 'broker-abuse' | 'ceiling-mqtt' | 'broker-edge' | 'broker-cloud' | 'cloud-sink' | 'broker-front' | 'broker-source' | 'broker-rollups';
  readonly script: string;
  /** The flags `npm start` gives node (package.json `config.nodeFlags`), for both targets alike. */
  readonly nodeFlags: readonly string[];
  /** Configuration variables besides the bench's own (ports, data directory, log level). */
  readonly env?: Readonly<Record<string, string>>;
  /** It serves HTTPS (its env names the key and certificate) with a certificate of this CA. */
  readonly tls?: { readonly ca: Buffer };
  /** The HTTP port to listen on (a port another process was told of before this one started); else a free one. */
  readonly port?: number;
}

interface StartedTarget {
  readonly server: ServerProcess;
  readonly mqttPort: number;
  /** Stops the server and removes its data directory; resolves with how the server ended. */
  readonly stop: () => Promise<string>;
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** Starts the target with a fresh data directory; both are undone by `cleanup`. */
async function startTarget(target: Target, options: MeasureOptions, cleanup: Cleanup): Promise<StartedTarget> {
  const dataDir = mkdtempSync(join(options.tmp, `edgeld-bench-${target.name}-`));
  const removeDir = cleanup.add(
    () => rm(dataDir, { recursive: true, force: true }),
    () => rmSync(dataDir, { recursive: true, force: true }),
  );
  const port = target.port ?? await findFreePort();
  const mqttPort = await findFreePort();
  const env = {
    ...target.env,
    SERVER_PORT: String(port),
    SERVER_HOST: '127.0.0.1',
    STORAGE_DIR: dataDir,
    LOG_LEVEL: 'warn',
    MQTT_PORT: String(mqttPort),
    NODE_ENV: 'production',
  };
  log(`[${target.name}] starting ${target.script} on 127.0.0.1:${port}, data in ${dataDir}`);
  let stopped = '';
  let stopServer = async (): Promise<void> => {};
  const server = await startServer({
    name: target.name,
    script: target.script,
    nodeFlags: target.nodeFlags,
    port,
    env,
    readyTimeoutMs: READY_TIMEOUT_MS,
    ...(target.tls ? { tls: target.tls } : {}),
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
  return { server, mqttPort, stop };
}

/** Starts the target on a fresh data directory, runs `fn` against it, and stops it. */
export async function withFreshTarget<T>(target: Target, options: MeasureOptions, cleanup: Cleanup,
  fn: (server: ServerProcess, mqttPort: number) => Promise<T>): Promise<T> {
  const { server, mqttPort, stop } = await startTarget(target, options, cleanup);
  try {
    return await fn(server, mqttPort);
  } finally {
    await stop();
  }
}

/** One started target with its scenario state, between its first and its last scenario. */
interface TargetRun {
  readonly run: ScenarioRun;
  /** The run's results and notes, written as scenarios end. */
  readonly results: ScenarioResult[];
  readonly notes: string[];
  /** A scenario ended: the largest RSS while it ran is noted. */
  readonly scenarioDone: (name: string) => void;
  /** Stops sampling and the server; what the target measured. */
  readonly finish: () => Promise<TargetResult>;
}

async function openTargetRun(target: Target, options: MeasureOptions, cleanup: Cleanup): Promise<TargetRun> {
  const { server, stop } = await startTarget(target, options, cleanup);
  const notes: string[] = [];
  const state: BenchState = { created: 0, batched: 0, ingested: 0, random: seededRandom(SEED) };
  const sampler = new RssSampler(server.pid);
  let rssIdle: number | undefined;
  let rssAfterRequests: number | undefined;
  let isSampling = false;
  const results: ScenarioResult[] = [];
  const run: ScenarioRun = {
    server, state, notes, results, concurrency: options.concurrency, durationMs: options.durationMs,
    warmupMs: options.warmupMs, datasets: new Map<string, Missing | undefined>(),
    // NOTE: the idle figures are taken once, after the first counted warm-up (a few hundred requests)
    // and before the timed one: memory of a broker that has served requests, not of a bare start;
    // one second after them, and after REST_MS at rest.
    afterWarmup: async () => {
      if (isSampling) return;
      isSampling = true;
      await sleep(IDLE_SETTLE_MS);
      rssAfterRequests = await readRssBytes(server.pid);
      await sleep(REST_MS - IDLE_SETTLE_MS);
      rssIdle = await readRssBytes(server.pid);
      sampler.start();
    },
  };
  /** The largest RSS of each scenario, where the loaded figure comes from. */
  const peaks: string[] = [];
  const scenarioDone = (name: string): void => {
    const peak = isSampling ? sampler.window() : undefined;
    if (peak !== undefined) peaks.push(`${name} ${(peak / 1_048_576).toFixed(1)}`);
  };
  const finish = async (): Promise<TargetResult> => {
    // Stopped on failure too: a live interval would keep the process from exiting.
    const rssLoaded = isSampling ? await sampler.stop() : undefined;
    if (peaks.length > 0) notes.push(`${target.name} largest RSS while each scenario ran (MiB): ${peaks.join(', ')}`);
    if (rssIdle === undefined) notes.push(`${target.name}: /proc/${server.pid}/status is unreadable; no RSS figure`);
    const stopped = await stop();
    notes.push(`${target.name} ${stopped}`);
    if (!stopped.startsWith('stopped on SIGTERM')) notes.push(`${target.name} output:\n${server.tail()}`);
    return { name: target.name, scenarios: results, rssIdle, rssAfterRequests, rssLoaded, notes };
  };
  return { run, results, notes, scenarioDone, finish };
}

/**
 * Runs every scenario against every target and reports what each measured, in the targets' order.
 * NOTE: scenario by scenario, each target right after the other (all are started first, and wait
 * idle while another is measured): a ratio then compares two figures taken seconds apart, not a
 * minute apart, when the machine may have changed pace.
 */
export async function benchTargets(targets: readonly Target[], options: MeasureOptions, cleanup: Cleanup): Promise<TargetResult[]> {
  const runs: TargetRun[] = [];
  try {
    for (const target of targets) runs.push(await openTargetRun(target, options, cleanup));
    for (const scenario of SCENARIOS) {
      for (const { run, results, notes, scenarioDone } of runs) {
        if (cleanup.isClosed) throw new CleanupClosedError(`${run.server.name}: interrupted before ${scenario.name}`);
        const result = await runScenario(run, scenario);
        results.push(result);
        scenarioDone(scenario.name);
        if (result.missing) notes.push(`${run.server.name} ${scenario.name}: not measured: ${result.missing.reason}`);
      }
    }
  } catch (err) {
    for (const r of runs) await r.finish().catch(() => undefined);
    throw err;
  }
  const out: TargetResult[] = [];
  for (const r of runs) out.push(await r.finish());
  return out;
}
