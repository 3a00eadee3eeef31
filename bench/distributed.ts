// Distributed query benchmark, on brokers of their own: a query by type answered by a broker from
// its store plus a second edgeld on loopback registered as an inclusive context source (half the
// entities each), against the same query on a broker holding every entity; then the same query's
// latency while the source is down (its process stopped) and while it is silent (a socket that
// never answers, bounded by the registration's management.timeout).

import { createServer, type Server, type Socket } from 'node:net';
import type { ServerProcess } from './child.js';
import type { Cleanup } from './cleanup.js';
import { isRecord } from './json.js';
import { runLoad, type LoadResult } from './load.js';
import { withFreshTarget, type MeasureOptions, type Target } from './measure.js';
import type { Row } from './report.js';

const ENTITIES = 200;
const SILENT_TIMEOUT_MS = 250;
/** Rounds of the local and the distributed query, each measured right after the other. */
const ROUNDS = 3;
/** The least ratio of the distributed query's rate to the same query with every entity local. */
export const DISTRIBUTED_TARGET = 0.4;
const QUERY = `/ngsi-ld/v1/entities?type=Room&limit=${ENTITIES}`;

export interface DistributedBenchResult {
  readonly rows: Row[];
  readonly notes: string[];
  readonly hasErrors: boolean;
}

const roomId = (n: number): string => `urn:ngsi-ld:Room:dist${n}`;

async function call(port: number, method: string, path: string, body?: unknown): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method, signal: AbortSignal.timeout(30_000),
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  await res.text();
  return res.status;
}

async function createRooms(port: number, from: number, to: number): Promise<void> {
  const rooms = [];
  for (let n = from; n < to; n++) {
    rooms.push({ id: roomId(n), type: 'Room', temperature: { type: 'Property', value: n, observedAt: '2026-01-01T00:00:00Z' }, name: { type: 'Property', value: `room ${n}` } });
  }
  const status = await call(port, 'POST', '/ngsi-ld/v1/entityOperations/create', rooms);
  if (status !== 201) throw new Error(`creating rooms ${from}-${to}: ${status}`);
}

async function register(port: number, endpoint: string, management?: Record<string, number>): Promise<void> {
  const status = await call(port, 'POST', '/ngsi-ld/v1/csourceRegistrations', {
    type: 'ContextSourceRegistration', information: [{ entities: [{ type: 'Room' }] }], endpoint, ...(management ? { management } : {}),
  });
  if (status !== 201) throw new Error(`registering ${endpoint}: ${status}`);
}

const expectRooms = (count: number) => (body: string): string | undefined => {
  const parsed: unknown = JSON.parse(body);
  return Array.isArray(parsed) && parsed.length === count && parsed.every(isRecord) ? undefined : `expected ${count} rooms, got ${body.slice(0, 200)}`;
};

function queryLoad(port: number, options: MeasureOptions, count: number, durationMs = options.durationMs): Promise<LoadResult> {
  return runLoad({
    port, concurrency: options.concurrency, maxRequests: Number.MAX_SAFE_INTEGER, durationMs, expectStatus: 200,
    next: () => ({ method: 'GET', path: QUERY }), check: expectRooms(count),
  });
}

/** A TCP server that accepts connections and never answers: a context source that hangs. */
async function startSilent(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

const round = (x: number, digits = 0): number => Math.round(x * 10 ** digits) / 10 ** digits;

interface Figures {
  local: LoadResult;
  distributed: LoadResult;
  /** The ratio of each round, in order. */
  ratios: number[];
  down: LoadResult;
  silent: LoadResult;
}

/**
 * NOTE: longer than other scenarios' warm-up: three processes (the front, its source, the baseline)
 * reach their steady state; after 1 s the first of the rounds stayed about 0.1 below the others.
 */
const warmupOf = (options: MeasureOptions): number => Math.max(3_000, options.warmupMs);

async function measure(front: ServerProcess, all: ServerProcess, source: Target, options: MeasureOptions, cleanup: Cleanup): Promise<Figures> {
  await createRooms(all.port, 0, ENTITIES);
  await createRooms(front.port, 0, ENTITIES / 2);
  const warmup = warmupOf(options);
  const upFigures = await withFreshTarget(source, options, cleanup, async (src) => {
    await createRooms(src.port, ENTITIES / 2, ENTITIES);
    await register(front.port, `http://127.0.0.1:${src.port}`);
    await queryLoad(all.port, options, ENTITIES, warmup);
    await queryLoad(front.port, options, ENTITIES, warmup);
    // Rounds of the two, one right after the other: the median round's pair is reported.
    const rounds: Array<{ local: LoadResult; distributed: LoadResult; ratio: number }> = [];
    for (let i = 0; i < ROUNDS; i++) {
      const local = await queryLoad(all.port, options, ENTITIES);
      const distributed = await queryLoad(front.port, options, ENTITIES);
      rounds.push({ local, distributed, ratio: distributed.requestsPerSecond / local.requestsPerSecond });
    }
    const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(ROUNDS / 2)]!; // NOTE: ROUNDS ≥ 1 rounds
    return { local: median.local, distributed: median.distributed, ratios: rounds.map((r) => r.ratio) };
  });
  // The source's process is gone: each query gets a refused connection and a warning.
  const down = await queryLoad(front.port, options, ENTITIES / 2);
  const silent = await startSilent();
  try {
    await register(front.port, `http://127.0.0.1:${silent.port}`, { timeout: SILENT_TIMEOUT_MS });
    return { ...upFigures, down, silent: await queryLoad(front.port, options, ENTITIES / 2) };
  } finally {
    await silent.close();
  }
}

/** Runs the distributed query scenarios on brokers of their own; rows for the report, and notes. */
export async function benchDistributed(broker: Target, options: MeasureOptions, cleanup: Cleanup): Promise<DistributedBenchResult> {
  const source: Target = { ...broker, name: 'broker-source' };
  const front: Target = { ...broker, name: 'broker-front' };
  const f = await withFreshTarget(front, options, cleanup, (frontServer) => withFreshTarget(broker, options, cleanup,
    (allServer) => measure(frontServer, allServer, source, options, cleanup)));
  const ratio = f.distributed.requestsPerSecond / f.local.requestsPerSecond;
  const rows: Row[] = [
    {
      key: 'query.distributed', group: 'distributed', unit: 'req/s', value: round(f.distributed.requestsPerSecond),
      ceiling: round(f.local.requestsPerSecond), ratio: round(ratio, 2),
    },
    { key: 'query.distributed.p99', group: 'distributed', unit: 'ms', value: round(f.distributed.p99Ms, 2), ceiling: round(f.local.p99Ms, 2), ratio: round(f.distributed.p99Ms / f.local.p99Ms, 2) },
    { key: 'query.distributed.source-down.p99', group: 'distributed', unit: 'ms', value: round(f.down.p99Ms, 2), ceiling: null, ratio: null },
    { key: 'query.distributed.source-silent.p99', group: 'distributed', unit: 'ms', value: round(f.silent.p99Ms, 2), ceiling: SILENT_TIMEOUT_MS, ratio: round(f.silent.p99Ms / SILENT_TIMEOUT_MS, 2) },
  ];
  const problems = [f.local, f.distributed, f.down, f.silent].flatMap((l) => (l.errors > 0 ? [`distributed query failed: ${l.firstError ?? ''}`] : []));
  const notes = [
    `query.distributed: GET ${QUERY} on a broker holding ${ENTITIES / 2} Rooms with a second edgeld on loopback registered as an inclusive context source holding the other ${ENTITIES / 2} (every answer checked to hold ${ENTITIES}), against the same query on a broker holding all ${ENTITIES} (ceiling column); concurrency ${options.concurrency}, ${options.durationMs / 1000} s each after a warm-up of ${warmupOf(options) / 1000} s of each, ${ROUNDS} rounds of the two, the median round reported (ratios ${f.ratios.map((r) => r.toFixed(2)).join(', ')}); the three processes share the machine's cores`,
    `query.distributed.source-down.p99: the same query once the source's process is stopped (a refused connection, a NGSILD-Warning, the ${ENTITIES / 2} local Rooms); source-silent: a second registration to a socket that accepts and never answers, management.timeout ${SILENT_TIMEOUT_MS} ms`,
    `target query.distributed ratio >= ${DISTRIBUTED_TARGET}: ${round(ratio, 2)}, ${ratio >= DISTRIBUTED_TARGET ? 'met' : 'MISSED'}`,
    ...problems,
  ];
  return { rows, notes, hasErrors: problems.length > 0 };
}
