// HTTPS benchmark, on brokers of their own: the creates of `create` over HTTPS (keep-alive
// connections, as real clients hold them) against a broker serving a certificate made at the start of
// the run by scripts/make-certs.mjs into a temporary directory, beside the same creates over plain
// HTTP on a broker without TLS, measured right before: the ratio is the cost of TLS.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scenarioRun } from './auth.js';
import type { ServerProcess } from './child.js';
import type { Cleanup } from './cleanup.js';
import { withFreshTarget, type MeasureOptions, type Target } from './measure.js';
import { compareRows, type Row, type ScenarioResult } from './report.js';
import { runScenario } from './run-scenario.js';
import type { Scenario } from './scenario-types.js';
import { CREATE } from './scenarios.js';


/** `create` over HTTPS; its ratio is taken against plain `create`. */
export const TLS_CREATE: Scenario = {
  ...CREATE,
  name: 'tls.create',
  group: 'tls',
  description: 'POST /entities, one new Sensor each, over HTTPS (TLS 1.3, P-256 certificate of a local CA, keep-alive connections), against the same creates over plain HTTP on a broker without TLS',
  target: { row: 'value', atLeast: 0.7 },
};

export interface TlsBenchResult {
  readonly rows: Row[];
  readonly notes: string[];
  readonly scenarios: Scenario[];
  readonly hasErrors: boolean;
}

// NOTE: from dist-bench/run.js, the bundle, with scripts/ beside dist-bench/.
const MAKE_CERTS = fileURLToPath(new URL('../scripts/make-certs.mjs', import.meta.url));

/** A local CA and a gateway certificate for 127.0.0.1 in a temporary directory. */
function makeCerts(options: MeasureOptions, cleanup: Cleanup): { dir: string; ca: Buffer } {
  const dir = mkdtempSync(join(options.tmp, 'edgeld-bench-tls-'));
  cleanup.add(() => rm(dir, { recursive: true, force: true }), () => rmSync(dir, { recursive: true, force: true }));
  execFileSync(process.execPath, [MAKE_CERTS, '--dir', dir, 'localhost', '127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  return { dir, ca: readFileSync(join(dir, 'ca.pem')) };
}

/** Rounds of plain then HTTPS creates: the machine's pace changes less within a round than across the run. */
const ROUNDS = 3;

const rateOf = (r: ScenarioResult): number => r.load?.requestsPerSecond ?? Number.NaN;

/** The server's CPU µs per request over every round: what a request costs, whatever else slowed the machine. */
function cpuPerRequest(results: readonly ScenarioResult[]): number | null {
  let cpuUs = 0;
  let requests = 0;
  for (const r of results) {
    if (r.cpuUsPerOp === undefined || r.load === undefined) return null;
    cpuUs += r.cpuUsPerOp * r.load.completed;
    requests += r.load.completed;
  }
  return requests > 0 ? Math.round(cpuUs / requests) : null;
}

/** `tls.create.cpu`: CPU per request over HTTPS against plain HTTP (above 1 is costlier). */
function cpuRow(subject: readonly ScenarioResult[], baseline: readonly ScenarioResult[]): Row {
  const value = cpuPerRequest(subject);
  const ceiling = cpuPerRequest(baseline);
  const ratio = value !== null && ceiling !== null && ceiling > 0 ? Math.round((value / ceiling) * 100) / 100 : null;
  return { key: `${TLS_CREATE.name}.cpu`, group: 'tls', unit: 'µs/req', value, ceiling, ratio };
}

/**
 * Plain `create` on one broker, then `tls.create` on a broker with HTTPS, ROUNDS times; the rows are
 * those of the round with the median ratio, plain in the ceiling column, and a note lists every round;
 * `tls.create.cpu` compares the CPU per request over all rounds.
 */
export async function benchTls(broker: Target, options: MeasureOptions, cleanup: Cleanup): Promise<TlsBenchResult> {
  const { dir, ca } = makeCerts(options, cleanup);
  const tlsTarget: Target = {
    ...broker, name: 'broker-tls', tls: { ca },
    env: { ...broker.env, SERVER_TLS_KEY: join(dir, 'gateway-key.pem'), SERVER_TLS_CERT: join(dir, 'gateway.pem') },
  };
  const notes: string[] = [];
  const rounds = await withFreshTarget(tlsTarget, options, cleanup, (tlsServer) => withFreshTarget(broker, options, cleanup, async (plainServer) => {
    const secureRun = scenarioRun(tlsServer, options, notes, { measureCpu: true });
    const plainRun = scenarioRun(plainServer, options, notes, { measureCpu: true });
    const out: Array<{ subject: ScenarioResult; baseline: ScenarioResult }> = [];
    for (let i = 0; i < ROUNDS; i++) {
      const baseline = await runScenario(plainRun, CREATE);
      out.push({ baseline, subject: await runScenario(secureRun, TLS_CREATE) });
    }
    return out;
  }));
  const ratios = rounds.map((r) => rateOf(r.subject) / rateOf(r.baseline));
  const median = [...ratios.keys()].sort((a, b) => (ratios[a] ?? 0) - (ratios[b] ?? 0))[Math.floor(ROUNDS / 2)] ?? 0;
  const { subject, baseline } = rounds[median]!; // NOTE: an index of rounds, which holds ROUNDS entries
  for (const r of rounds.flatMap((x) => [x.baseline, x.subject])) if (r.missing) notes.push(`${r.scenario.name}: not measured: ${r.missing.reason}`);
  notes.push(
    `${TLS_CREATE.name}: ${TLS_CREATE.description}`,
    `tls.*: on a broker of its own with server.tls-key and server.tls-cert set; the ceiling column holds plain create on a broker without TLS, measured right before on the same load and client count; ${ROUNDS} rounds, the median one reported; ratio of each round: ${ratios.map((r) => r.toFixed(2)).join(', ')}`,
  );
  const hasErrors = rounds.some((r) => [r.subject, r.baseline].some((x) => (x.load?.errors ?? 0) > 0 || x.missing?.isError === true));
  const cpu = cpuRow(rounds.map((r) => r.subject), rounds.map((r) => r.baseline));
  notes.push('tls.create.cpu: the broker\'s CPU time (user + system) per request over the measured phases of every round, against plain create\'s: the cost of TLS even when other work on the machine moves the rates');
  return { rows: [...compareRows(subject, baseline), cpu], notes, scenarios: [TLS_CREATE], hasErrors };
}
