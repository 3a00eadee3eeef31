// The load generator: HTTP requests at fixed concurrency over keep-alive connections to 127.0.0.1
// for a fixed duration (or request count), measuring throughput and latency percentiles.

import { Agent, request, type OutgoingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface BenchRequest {
  readonly method: 'GET' | 'POST' | 'PATCH';
  readonly path: string;
  /** JSON text; sent as application/json. */
  readonly body?: string;
}

export interface LoadOptions {
  readonly port: number;
  readonly concurrency: number;
  /** Stop issuing new requests after this many. */
  readonly maxRequests: number;
  /** Stop issuing new requests after this long. */
  readonly durationMs: number;
  readonly expectStatus: number;
  /** Builds the n-th request (0-based). */
  readonly next: (n: number) => BenchRequest;
}

export interface LoadResult {
  readonly completed: number;
  readonly errors: number;
  /** The first unexpected response or failure, for the report. */
  readonly firstError: string | undefined;
  readonly durationMs: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

interface Reply {
  readonly status: number;
  readonly body: string;
}

const REQUEST_TIMEOUT_MS = 10_000;

function send(agent: Agent, port: number, req: BenchRequest): Promise<Reply> {
  const headers: OutgoingHttpHeaders =
    req.body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(req.body) };
  return new Promise((resolve, reject) => {
    const out = request({ host: '127.0.0.1', port, method: req.method, path: req.path, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    out.setTimeout(REQUEST_TIMEOUT_MS, () => out.destroy(new Error(`no response within ${REQUEST_TIMEOUT_MS} ms`)));
    out.on('error', reject);
    out.end(req.body);
  });
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** Runs one load phase and returns its measurements. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const latencies: number[] = [];
  let issued = 0;
  let completed = 0;
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const deadline = start + options.durationMs;

  const fail = (n: number, detail: string): void => {
    errors++;
    firstError ??= `request ${n}: ${detail}`;
  };

  const worker = async (): Promise<void> => {
    while (issued < options.maxRequests && performance.now() < deadline) {
      const n = issued++;
      const req = options.next(n);
      const t0 = performance.now();
      try {
        const reply = await send(agent, options.port, req);
        if (reply.status !== options.expectStatus) {
          fail(n, `${req.method} ${req.path} → ${reply.status} ${reply.body.slice(0, 300)}`);
        }
      } catch (err) {
        fail(n, `${req.method} ${req.path} → ${err instanceof Error ? err.message : String(err)}`);
      }
      latencies.push(performance.now() - t0);
      completed++;
    }
  };

  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    agent.destroy();
  }
  const durationMs = performance.now() - start;
  const sorted = Float64Array.from(latencies).sort();
  return {
    completed,
    errors,
    firstError,
    durationMs,
    requestsPerSecond: completed / (durationMs / 1000),
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
  };
}
