// Federation benchmarks, on brokers of their own: an edge with a backlog of measurements written
// while its upstream was down drains it to a second edgeld on loopback (measurements a second until
// the outbox is empty, every instance then counted in the cloud), and the edge's local write
// throughput while a drain runs, against the same writes on a broker without federation: with the
// cloud somewhere else (a stand-in that accepts everything, the target), and with the second edgeld
// on the same machine (reported: on a 2-core machine it takes the CPU the edge's writes need).

import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { findFreePort, type ServerProcess } from './child.js';
import type { Cleanup } from './cleanup.js';
import { formatCount } from './format-count.js';
import { isRecord } from './json.js';
import { runLoad, type LoadResult } from './load.js';
import { withFreshTarget, type MeasureOptions, type Target } from './measure.js';
import type { Row } from './report.js';

const ENTITIES = 200;
const PER_ENTITY = 100;
const BACKLOG = ENTITIES * PER_ENTITY;
const T0 = Date.parse('2026-01-01T00:00:00Z');
const STATUS_POLL_MS = 50;
const DRAIN_TIMEOUT_MS = 300_000;
const WRITE_WARMUP_MS = 1_500;
/** Rounds of the writes without and with federation, in turn. */
const ROUNDS = 3;
/** The least ratio of local writes during a drain to the same writes without federation. */
export const WRITE_TARGET = 0.8;

export interface FederationBenchResult {
  readonly rows: Row[];
  readonly notes: string[];
  readonly hasErrors: boolean;
}

interface Status {
  outboxDepth: number;
  parked: number;
  lastError: unknown;
  sentInstances: number;
}

const sensorId = (n: number): string => `urn:ngsi-ld:Sensor:fed${n}`;
const at = (k: number): string => new Date(T0 + k * 1_000).toISOString();

async function call(port: number, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method, signal: AbortSignal.timeout(30_000),
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
}

async function statusOf(port: number): Promise<Status> {
  const { status, json } = await call(port, 'GET', '/ngsi-ld/v1/federation/status');
  if (status !== 200 || !isRecord(json) || typeof json.outboxDepth !== 'number' || !isRecord(json.sent)) {
    throw new Error(`federation status: ${status} ${JSON.stringify(json).slice(0, 300)}`);
  }
  const sent = json.sent.instances;
  return { outboxDepth: json.outboxDepth, parked: Number(json.parked), lastError: json.lastError, sentInstances: typeof sent === 'number' ? sent : 0 };
}

/** The backlog: PER_ENTITY batch upserts of every Sensor, each with a new temperature one second later. */
async function writeBacklog(port: number): Promise<void> {
  for (let k = 0; k < PER_ENTITY; k++) {
    const batch = Array.from({ length: ENTITIES }, (_, n) => ({
      id: sensorId(n), type: 'Sensor', temperature: { type: 'Property', value: k, observedAt: at(k) },
    }));
    const { status, json } = await call(port, 'POST', '/ngsi-ld/v1/entityOperations/upsert', batch);
    if (status !== 201 && status !== 204) throw new Error(`backlog upsert ${k}: ${status} ${JSON.stringify(json).slice(0, 300)}`);
  }
}

/** Polls the edge until its outbox is empty; milliseconds from `since`. */
async function awaitDrained(port: number, since: number): Promise<{ ms: number; status: Status }> {
  for (;;) {
    const status = await statusOf(port);
    const ms = performance.now() - since;
    if (status.outboxDepth === 0) return { ms, status };
    if (ms > DRAIN_TIMEOUT_MS) throw new Error(`the outbox still holds ${status.outboxDepth} changes after ${DRAIN_TIMEOUT_MS} ms`);
    await sleep(STATUS_POLL_MS);
  }
}

/** What the cloud's temporal API holds that the backlog misses, for every Sensor; '' when nothing. */
async function checkCloud(port: number): Promise<string> {
  const problems: string[] = [];
  for (let n = 0; n < ENTITIES && problems.length < 5; n++) {
    const { status, json } = await call(port, 'GET', `/ngsi-ld/v1/temporal/entities/${encodeURIComponent(sensorId(n))}?attrs=temperature`);
    const instances = isRecord(json) ? json.temperature : undefined;
    const values = Array.isArray(instances) ? instances.map((i: unknown) => (isRecord(i) ? i.value : undefined)) : [];
    const ok = status === 200 && values.length === PER_ENTITY && values.every((v, k) => v === k);
    if (!ok) problems.push(`${sensorId(n)}: ${status}, ${values.length} instances`);
  }
  return problems.join('; ');
}

/** PATCHes of the Sensors' temperatures in turn, each a new measurement (a later observedAt than any before). */
async function writeLoad(port: number, options: MeasureOptions, durationMs: number, counter: { next: number }): Promise<LoadResult> {
  const next = () => {
    const measurement = counter.next++;
    return {
      method: 'PATCH' as const, path: `/ngsi-ld/v1/entities/${encodeURIComponent(sensorId(measurement % ENTITIES))}/attrs`,
      body: JSON.stringify({ temperature: { type: 'Property', value: measurement, observedAt: at(measurement) } }),
    };
  };
  return runLoad({ port, concurrency: options.concurrency, maxRequests: Number.MAX_SAFE_INTEGER, durationMs, expectStatus: 204, next });
}

/** The writes after a warm-up of the same writes; `between` runs between the two. The counter goes on from run to run. */
async function measureWrites(port: number, options: MeasureOptions, counter: { next: number }, between: () => Promise<void> = async () => {}): Promise<LoadResult> {
  await writeLoad(port, options, WRITE_WARMUP_MS, counter);
  await between();
  return writeLoad(port, options, options.durationMs, counter);
}

const round = (x: number, digits = 0): number => Math.round(x * 10 ** digits) / 10 ** digits;

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Rounds of one load as one: their requests over their time; p50 and p99 the median of the rounds'. */
function combine(rounds: readonly LoadResult[]): LoadResult {
  const sum = (f: (r: LoadResult) => number): number => rounds.reduce((a, r) => a + f(r), 0);
  const durationMs = sum((r) => r.durationMs);
  return {
    completed: sum((r) => r.completed), errors: sum((r) => r.errors),
    firstError: rounds.find((r) => r.firstError !== undefined)?.firstError,
    firstErrorStatus: rounds.find((r) => r.firstErrorStatus !== undefined)?.firstErrorStatus,
    responseBytes: rounds[0]?.responseBytes, durationMs, busyMs: sum((r) => r.busyMs),
    requestsPerSecond: (sum((r) => r.completed) / durationMs) * 1000,
    p50Ms: median(rounds.map((r) => r.p50Ms)), p99Ms: median(rounds.map((r) => r.p99Ms)),
  };
}

/** Writes on a broker without federation, then the same writes on the edge while it drains. */
interface WritesDuringDrain {
  baseline: LoadResult;
  during: LoadResult;
  /** The edge's status at the start of the first measured window and at the end of the last. */
  before: Status;
  after: Status;
  /** Instances the edge sent within its measured windows. */
  sentDuring: number;
}

interface Figures {
  drainMs: number;
  drained: Status;
  missing: string;
  /** The cloud elsewhere (the stand-in); the cloud on the same machine. */
  remote: WritesDuringDrain & { received: number; sent: number };
  colocated: WritesDuringDrain;
}

/**
 * ROUNDS rounds of the writes on the broker without federation and on the edge, in turn: on a
 * shared machine a slow spell then falls on both sides, not on one.
 */
async function writesDuringDrain(edge: ServerProcess, plain: ServerProcess, options: MeasureOptions,
  counters: { edge: { next: number }; plain: { next: number } }): Promise<WritesDuringDrain> {
  const baselines: LoadResult[] = [];
  const durings: LoadResult[] = [];
  let first: Status | undefined;
  let sentDuring = 0;
  for (let r = 0; r < ROUNDS; r++) {
    baselines.push(await measureWrites(plain.port, options, counters.plain));
    let start: Status | undefined;
    durings.push(await measureWrites(edge.port, options, counters.edge, async () => {
      start = await statusOf(edge.port);
      first ??= start;
    }));
    const end = await statusOf(edge.port);
    sentDuring += end.sentInstances - (start ?? end).sentInstances;
  }
  const after = await statusOf(edge.port);
  return { baseline: combine(baselines), during: combine(durings), before: first ?? after, after, sentDuring };
}

async function sinkReceived(port: number): Promise<number> {
  const { json } = await call(port, 'GET', '/count');
  return isRecord(json) && typeof json.instances === 'number' ? json.instances : -1;
}

/**
 * The cloud comes up on the port the edge was told of; the backlog drains, then the writes are
 * measured with the cloud on this machine; then the stand-in takes the cloud's port and they are
 * measured again.
 */
async function drainAndWrite(edge: ServerProcess, plain: ServerProcess, cloud: Target, sink: Target, options: MeasureOptions, cleanup: Cleanup): Promise<Figures> {
  const counters = { edge: { next: PER_ENTITY }, plain: { next: PER_ENTITY } };
  const first = await withFreshTarget(cloud, options, cleanup, async (server) => {
    const since = performance.now();
    const { ms: drainMs, status: drained } = await awaitDrained(edge.port, since);
    const missing = await checkCloud(server.port);
    const colocated = await writesDuringDrain(edge, plain, options, counters);
    return { drainMs, drained, missing, colocated };
  });
  const remote = await withFreshTarget(sink, options, cleanup, async (server) => {
    // NOTE: from here on the edge sends to the stand-in only (what it sent before went to the cloud).
    const start = await statusOf(edge.port);
    const figures = await writesDuringDrain(edge, plain, options, counters);
    const { status: drained } = await awaitDrained(edge.port, performance.now());
    return { ...figures, received: await sinkReceived(server.port), sent: drained.sentInstances - start.sentInstances };
  });
  return { ...first, remote };
}

/** Runs the federation scenarios on brokers of their own; rows for the report, and notes. */
export async function benchFederation(broker: Target, options: MeasureOptions, cleanup: Cleanup): Promise<FederationBenchResult> {
  const cloudPort = await findFreePort();
  const edge: Target = {
    ...broker, name: 'broker-edge',
    // NOTE: a short retry keeps the wait between the cloud's start and the first batch under 100 ms.
    env: { ...broker.env, FEDERATION_UPSTREAM_URL: `http://127.0.0.1:${cloudPort}`, FEDERATION_RETRY_BASE: '50', FEDERATION_RETRY_MAX: '100' },
  };
  const cloud: Target = { ...broker, name: 'broker-cloud', port: cloudPort };
  const sink: Target = { name: 'cloud-sink', script: fileURLToPath(new URL('./cloud-sink.js', import.meta.url)), nodeFlags: broker.nodeFlags, port: cloudPort };
  const f = await withFreshTarget(edge, options, cleanup, (edgeServer) => withFreshTarget(broker, options, cleanup, async (plain) => {
    await writeBacklog(edgeServer.port);
    await writeBacklog(plain.port);
    const pending = await statusOf(edgeServer.port);
    if (pending.outboxDepth < BACKLOG) throw new Error(`the edge's outbox holds ${pending.outboxDepth} changes, expected ${BACKLOG}`);
    return drainAndWrite(edgeServer, plain, cloud, sink, options, cleanup);
  }));
  const drainRate = f.drained.sentInstances / (f.drainMs / 1000);
  const { remote, colocated } = f;
  const sentDuring = remote.sentDuring;
  const ratio = remote.during.requestsPerSecond / remote.baseline.requestsPerSecond;
  const colocatedRatio = colocated.during.requestsPerSecond / colocated.baseline.requestsPerSecond;
  const rows: Row[] = [
    { key: 'federation.drain', group: 'federation', unit: 'instances/s', value: round(drainRate), ceiling: null, ratio: null },
    { key: 'federation.drain.seconds', group: 'federation', unit: 's', value: round(f.drainMs / 1000, 2), ceiling: null, ratio: null },
    {
      key: 'federation.write-during-drain', group: 'federation', unit: 'req/s', value: round(remote.during.requestsPerSecond),
      ceiling: round(remote.baseline.requestsPerSecond), ratio: round(ratio, 2),
    },
    {
      key: 'federation.write-during-drain.p99', group: 'federation', unit: 'ms', value: round(remote.during.p99Ms, 2),
      ceiling: round(remote.baseline.p99Ms, 2), ratio: round(remote.during.p99Ms / remote.baseline.p99Ms, 2),
    },
    { key: 'federation.drain-during-writes', group: 'federation', unit: 'instances/s', value: round(sentDuring / (remote.during.durationMs / 1000)), ceiling: null, ratio: null },
    {
      key: 'federation.write-during-drain.colocated', group: 'federation', unit: 'req/s', value: round(colocated.during.requestsPerSecond),
      ceiling: round(colocated.baseline.requestsPerSecond), ratio: round(colocatedRatio, 2),
    },
  ];
  const problems = [
    ...(f.missing === '' ? [] : [`federation.drain: the cloud misses instances: ${f.missing}`]),
    ...(f.drained.sentInstances !== BACKLOG ? [`federation.drain: ${f.drained.sentInstances} instances sent, expected ${BACKLOG}`] : []),
    ...(f.drained.parked > 0 || remote.after.parked > 0 ? [`federation: ${remote.after.parked} changes parked`] : []),
    ...(remote.received < remote.sent ? [`federation.write-during-drain: the stand-in received ${remote.received} instances, the edge sent ${remote.sent}`] : []),
    ...[colocated.baseline, colocated.during, remote.baseline, remote.during].flatMap((l) => (l.errors > 0 ? [`federation writes failed: ${l.firstError ?? ''}`] : [])),
  ];
  const notes = [
    `federation.drain: an edge with a backlog of ${formatCount(BACKLOG)} measurements (${PER_ENTITY} batch upserts of ${ENTITIES} Sensors, written while its upstream was down) drains to a second edgeld on loopback, started on the port the edge was told of; instances (current state and history) a second from the cloud's readiness (seen within 100 ms) until the outbox is empty (status polled every ${STATUS_POLL_MS} ms), federation.batch-size 100; then every Sensor's history in the cloud is read back through its temporal API (${f.missing === '' ? `all ${formatCount(BACKLOG)} instances there, in order` : 'MISSING instances'})`,
    `federation.write-during-drain: PATCH …/attrs of the Sensors' temperatures in turn, each a new measurement, on the edge while its drain forwards them to the cloud, against the same writes on a broker without federation holding the same data (ceiling column), in ${ROUNDS} rounds of each in turn (${options.durationMs / 1000} s each after a ${WRITE_WARMUP_MS / 1000} s warm-up; req/s over all rounds, p99 the median of the rounds'); the cloud is elsewhere: a stand-in on the cloud's port (bench/cloud-sink.ts) that parses each request and accepts it, so the edge's drain is measured, not a second broker sharing its cores; outbox ${formatCount(remote.before.outboxDepth)} changes at the start of the first window and ${formatCount(remote.after.outboxDepth)} after the last, ${formatCount(sentDuring)} instances sent in them (federation.drain-during-writes), ${formatCount(remote.received)} received by the stand-in over its run`,
    `federation.write-during-drain.colocated: the same, with the second edgeld on this machine as the cloud (it stores what the edge writes, on the same cores); outbox ${formatCount(colocated.before.outboxDepth)} and ${formatCount(colocated.after.outboxDepth)} changes at the start and the end`,
    `target federation.write-during-drain ratio >= ${WRITE_TARGET}: ${round(ratio, 2)}, ${ratio >= WRITE_TARGET ? 'met' : 'MISSED'}`,
    ...problems,
  ];
  return { rows, notes, hasErrors: problems.length > 0 };
}
