// The steady client of the abuse lane: normal authenticated requests at a fixed rate (open loop: the
// next request leaves on time whatever the last one does) from a worker thread of its own, so that the
// attackers' work on the main thread does not delay its requests or its clock.

import { Worker } from 'node:worker_threads';

export interface SteadyOptions {
  readonly port: number;
  readonly path: string;
  readonly token: string;
  readonly perSecond: number;
}

export interface SteadyResult {
  readonly requests: number;
  /** Answers other than 200, and requests without an answer. */
  readonly errors: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface SteadyClient {
  /** Stops sending, waits for the requests in flight, and reports. */
  stop(): Promise<SteadyResult>;
}

// NOTE: plain JavaScript evaluated in the worker: the bench is bundled, and a worker of its own file
// would need a bundle of its own.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { port, path, token, perSecond } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const latencies = [];
let errors = 0;
let inFlight = 0;
let stopping = false;
const TIMEOUT_MS = 10000;
function one() {
  inFlight++;
  const started = performance.now();
  const done = (ok) => {
    latencies.push(performance.now() - started);
    if (!ok) errors++;
    inFlight--;
    if (stopping && inFlight === 0) report();
  };
  const req = http.get({ host: '127.0.0.1', port, path, agent, timeout: TIMEOUT_MS, headers: { authorization: 'Bearer ' + token, accept: 'application/json' } }, (res) => {
    res.resume();
    res.once('end', () => done(res.statusCode === 200));
  });
  req.once('timeout', () => req.destroy(new Error('timeout')));
  req.once('error', () => done(false));
}
const interval = 1000 / perSecond;
const t0 = performance.now();
let sent = 0;
function tick() {
  if (stopping) return;
  const due = Math.floor((performance.now() - t0) / interval) + 1;
  while (sent < due) { sent++; one(); }
  setTimeout(tick, Math.max(1, t0 + sent * interval - performance.now()));
}
function report() {
  agent.destroy();
  parentPort.postMessage({ latencies, errors, requests: sent });
}
parentPort.on('message', () => {
  stopping = true;
  if (inFlight === 0) report();
});
tick();
`;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

export function startSteadyClient(options: SteadyOptions): SteadyClient {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ...options } });
  const reported = new Promise<{ latencies: number[]; errors: number; requests: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    async stop() {
      worker.postMessage('stop');
      const { latencies, errors, requests } = await reported;
      await worker.terminate();
      const sorted = [...latencies].sort((a, b) => a - b);
      return { requests, errors, p50Ms: round(percentile(sorted, 50)), p99Ms: round(percentile(sorted, 99)), maxMs: round(sorted.at(-1) ?? Number.NaN) };
    },
  };
}
