// The benchmark's scenario runner against a stand-in target on 127.0.0.1: an endpoint that does not
// exist yet is reported as not available without failing the run; elsewhere such answers are failures.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerProcess } from '../../bench/child.js';
import { seededRandom } from '../../bench/random.js';
import type { Missing, ScenarioResult } from '../../bench/report.js';
import { runScenario, type ScenarioRun } from '../../bench/run-scenario.js';
import type { Scenario } from '../../bench/scenario-types.js';
import { TEMPORAL_SCENARIOS } from '../../bench/temporal-scenarios.js';

/** Creates entities; every temporal path is 501; anything else is 404. */
function answer(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  req.on('end', () => {
    const url = req.url ?? '';
    if (url.startsWith('/ngsi-ld/v1/temporal/')) res.writeHead(501, { 'Content-Type': 'application/json' }).end('{"type":"NotImplemented"}');
    else if (req.method === 'POST' && url === '/ngsi-ld/v1/entities') res.writeHead(201).end();
    else if (url === '/ngsi-ld/v1/wrong') res.writeHead(200, { 'Content-Type': 'application/json' }).end('[]');
    else res.writeHead(404).end();
  });
}

let server: Server;
let port = 0;

beforeAll(async () => {
  server = createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port; // NOTE: a TCP server's address is an AddressInfo
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function newRun(): ScenarioRun & { results: ScenarioResult[] } {
  const target: ServerProcess = { name: 'broker', pid: process.pid, port, tail: () => '', stop: async () => 'stopped', kill: () => {} };
  return {
    server: target, state: { created: 0, batched: 0, ingested: 0, random: seededRandom(1) },
    concurrency: 2, durationMs: 200, warmupMs: 0, datasets: new Map<string, Missing | undefined>(), results: [], notes: [],
    afterWarmup: async () => {},
  };
}

function scenario(name: string): Scenario {
  const found = TEMPORAL_SCENARIOS.find((s) => s.name === name);
  if (!found) throw new Error(`no scenario ${name}`);
  return found;
}

describe('runScenario', () => {
  it('reports an optional endpoint answering 501 as not available, not as an error', async () => {
    const run = newRun();
    const result = await runScenario(run, scenario('temporal.ingest'));
    expect(result.load).toBeUndefined();
    expect(result.missing?.isError).toBe(false);
    expect(result.missing?.reason).toContain('not available (501)');
  });

  it('skips a scenario whose data comes from one that was not measured, without an error', async () => {
    const run = newRun();
    run.results.push(await runScenario(run, scenario('temporal.ingest')));
    const result = await runScenario(run, scenario('temporal.last10k'));
    expect(result.missing).toEqual({ reason: 'needs the data of temporal.ingest, which was not measured', isError: false });
  });

  it('counts 404 answers of a scenario that is not optional as errors', async () => {
    const run = newRun();
    const missingRoute: Scenario = {
      name: 'x', group: 'query', description: '', expectStatus: 200, warmup: 0, measure: { kind: 'latency', repetitions: 2 },
      request: () => ({ method: 'GET', path: '/ngsi-ld/v1/nothing' }),
    };
    const result = await runScenario(run, missingRoute);
    expect(result.missing).toBeUndefined();
    expect(result.load?.errors).toBe(2);
    expect(run.notes.join('\n')).toContain('x: 2 errors');
  });

  it('counts a first answer that fails its check as an error', async () => {
    const run = newRun();
    const wrong: Scenario = {
      name: 'y', group: 'query', description: '', expectStatus: 200, warmup: 0, measure: { kind: 'latency', repetitions: 3 },
      check: (body) => (body === '[]' ? 'empty' : undefined), request: () => ({ method: 'GET', path: '/ngsi-ld/v1/wrong' }),
    };
    const result = await runScenario(run, wrong);
    expect(result.load?.errors).toBe(1);
    expect(result.load?.firstError).toContain('empty');
  });
});
