// The load generator: HTTP (or HTTPS) requests at fixed concurrency over keep-alive connections to 127.0.0.1
// for a fixed duration (or request count), measuring throughput and latency percentiles.

import { Agent, request, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';

export interface BenchRequest {
  readonly method: 'GET' | 'POST' | 'PATCH';
  readonly path: string;
  /** JSON text; sent as application/json. */
  readonly body?: string;
  /** Further request headers (`authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface LoadOptions {
  readonly port: number;
  readonly concurrency: number;
  /** Stop issuing new requests after this many. */
  readonly maxRequests: number;
  /** Stop issuing new requests after this long. */
  readonly durationMs: number;
  readonly expectStatus: number;
  /** Builds the n-th request (0-based) of a client (0 … concurrency - 1, one request in flight each). */
  readonly next: (n: number, client: number) => BenchRequest;
  /** Stop issuing new requests after the first failure (setup steps and one-shot phases). */
  readonly stopOnError?: boolean;
  /** Checks the body of the first expected answer; returns what is wrong with it, if anything. */
  readonly check?: (body: string) => string | undefined;
  /** HTTPS, trusting this CA (keep-alive connections, as for HTTP). */
  readonly tls?: { readonly ca: Buffer };
}

export interface LoadResult {
  readonly completed: number;
  readonly errors: number;
  /** The first unexpected response or failure, for the report. */
  readonly firstError: string | undefined;
  /** Status of the first unexpected response; 0 when the request got no response at all. */
  readonly firstErrorStatus: number | undefined;
  /** Bytes in the body of the first expected answer. */
  readonly responseBytes: number | undefined;
  readonly durationMs: number;
  /** Sum of request latencies: with one request in flight, the time the target was busy. */
  readonly busyMs: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

interface Reply {
  readonly status: number;
  readonly body: string;
}

const REQUEST_TIMEOUT_MS = 10_000;

/** An HTTP or HTTPS client: its keep-alive agent and its request function. */
interface Client {
  readonly agent: Agent;
  readonly request: (options: RequestOptions, onResponse: (res: IncomingMessage) => void) => ClientRequest;
}

/**
 * HTTPS agents by target, kept across load phases. NOTE: a client holds its TLS connections open from
 * one request to the next, so the connections made in a warm-up serve the measured phase, as they
 * would a real client: a handshake per phase would measure connection set-up, not requests.
 */
const httpsAgents = new WeakMap<object, HttpsAgent>();

function clientOf(options: LoadOptions): Client & { isShared: boolean } {
  const { tls } = options;
  if (tls === undefined) return { agent: new Agent({ keepAlive: true, maxSockets: options.concurrency }), request, isShared: false };
  let agent = httpsAgents.get(tls);
  if (agent === undefined) {
    agent = new HttpsAgent({ keepAlive: true, ca: tls.ca });
    httpsAgents.set(tls, agent);
  }
  return { agent, request: httpsRequest, isShared: true };
}

function send(client: Client, port: number, req: BenchRequest): Promise<Reply> {
  const headers: OutgoingHttpHeaders =
    req.body === undefined ? { ...req.headers } : { ...req.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(req.body) };
  return new Promise((resolve, reject) => {
    const out = client.request({ host: '127.0.0.1', port, method: req.method, path: req.path, agent: client.agent, headers }, (res) => {
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
  // NOTE: a percent: 0.99 for the 99th percentile was a mistake this guard now catches.
  if (p > 0 && p < 1) throw new RangeError(`percentile takes a percent from 1 to 100, not ${p}`);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** Runs one load phase and returns its measurements. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const http = clientOf(options);
  const latencies: number[] = [];
  let issued = 0;
  let completed = 0;
  let errors = 0;
  let firstError: string | undefined;
  let firstErrorStatus: number | undefined;
  let responseBytes: number | undefined;
  const start = performance.now();
  const deadline = start + options.durationMs;

  const fail = (n: number, status: number, detail: string): void => {
    errors++;
    firstError ??= `request ${n}: ${detail}`;
    firstErrorStatus ??= status;
  };
  const inspect = (n: number, req: BenchRequest, reply: Reply): void => {
    if (reply.status !== options.expectStatus) {
      fail(n, reply.status, `${req.method} ${req.path} → ${reply.status} ${reply.body.slice(0, 300)}`);
      return;
    }
    if (responseBytes !== undefined) return;
    // NOTE: only the first answer is checked and sized, so checks cost the load generator nothing later.
    responseBytes = Buffer.byteLength(reply.body);
    const problem = options.check?.(reply.body);
    if (problem !== undefined) fail(n, reply.status, `${req.method} ${req.path} → ${problem}`);
  };
  const isStopped = (): boolean => options.stopOnError === true && errors > 0;

  const worker = async (client: number): Promise<void> => {
    while (issued < options.maxRequests && performance.now() < deadline && !isStopped()) {
      const n = issued++;
      const req = options.next(n, client);
      const t0 = performance.now();
      try {
        inspect(n, req, await send(http, options.port, req));
      } catch (err) {
        fail(n, 0, `${req.method} ${req.path} → ${err instanceof Error ? err.message : String(err)}`);
      }
      latencies.push(performance.now() - t0);
      completed++;
    }
  };

  try {
    await Promise.all(Array.from({ length: options.concurrency }, (_, client) => worker(client)));
  } finally {
    // Idle keep-alive sockets do not hold the process open (Node unrefs them).
    if (!http.isShared) http.agent.destroy();
  }
  const durationMs = performance.now() - start;
  const sorted = Float64Array.from(latencies).sort();
  return {
    completed,
    errors,
    firstError,
    firstErrorStatus,
    responseBytes,
    durationMs,
    busyMs: latencies.reduce((sum, ms) => sum + ms, 0),
    requestsPerSecond: completed / (durationMs / 1000),
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
  };
}
