// The abuse lane (`--only abuse`): the real broker process with authentication on, the built-in
// identity provider and the lockout at its defaults, under one attack at a time while a steady client
// reads an entity 20 times a second: a PUBLISH announcing 200 MB before CONNECT, then 10,000 failed
// logins from one address and from 1,000, on POST /auth/token and on MQTT CONNECT. For each: the
// steady client's latency and errors, the broker's RSS before, at its peak and after, and what the
// attackers got.

import { setTimeout as sleep } from 'node:timers/promises';
import { oversizedPublish, httpLoginFlood, mqttLoginFlood, type AttackResult, type Outcomes } from './abuse-attacks.js';
import { startSteadyClient, type SteadyResult } from './abuse-steady.js';
import { createKeyFile, mint } from './auth.js';
import type { ServerProcess } from './child.js';
import type { Cleanup } from './cleanup.js';
import { withFreshTarget, type MeasureOptions, type Target } from './measure.js';
import { readRssBytes, RssSampler } from './proc.js';
import type { Row } from './report.js';

const ENTITY_ID = 'urn:ngsi-ld:Thing:steady';
const STEADY_PER_SECOND = 20;
const BASELINE_MS = 5_000;
/** Least time the steady client runs in a phase (an attack may end sooner: the 200 MB packet is refused at once). */
const MIN_PHASE_MS = 5_000;
/**
 * Rest after an attack before its "after" RSS is read: V8 gives back the heap it grew once the process
 * has been idle for about ten seconds (see measure.ts).
 */
const SETTLE_MS = 12_000;
const LOGINS = 10_000;
const SPREAD_ADDRESSES = 1_000;
const CONCURRENCY = 50;
/** How long an attacker waits for an answer the lockout holds back before giving up and asking again. */
const HOLD_MS = 200;
/** The targets of the issue: p99 of the steady client; RSS peak over the idle figure; RSS back within this of idle. */
const P99_TARGET_MS = 50;
const PEAK_BOUND_MIB = 96;
const AFTER_BOUND_MIB = 32;
const MIB = 1_048_576;

export interface AbuseBenchResult {
  readonly rows: Row[];
  readonly notes: string[];
  readonly hasErrors: boolean;
}

interface Phase {
  readonly name: string;
  readonly description: string;
  readonly run: (server: ServerProcess, mqttPort: number) => Promise<AttackResult | undefined>;
}

const PHASES: readonly Phase[] = [
  {
    name: 'baseline', description: `the steady client alone for ${BASELINE_MS / 1000} s`,
    run: async () => {
      await sleep(BASELINE_MS);
      return undefined;
    },
  },
  {
    name: 'publish-200mb', description: 'one raw TCP connection to the MQTT port: a PUBLISH fixed header announcing 200 MB without CONNECT, then zeros for as long as the broker reads them',
    run: (_server, mqttPort) => oversizedPublish(mqttPort),
  },
  {
    name: 'http-1-address', description: `${LOGINS} failed password grants on POST /auth/token from one address, ${CONCURRENCY} in flight, a user name of its own each; an answer held back over ${HOLD_MS} ms is given up`,
    run: (server) => httpLoginFlood(server.port, { count: LOGINS, concurrency: CONCURRENCY, addresses: 1, holdMs: HOLD_MS }),
  },
  {
    name: 'http-1000-addresses', description: `${LOGINS} failed password grants spread over ${SPREAD_ADDRESSES} loopback addresses (10 each), as above`,
    run: (server) => httpLoginFlood(server.port, { count: LOGINS, concurrency: CONCURRENCY, addresses: SPREAD_ADDRESSES, holdMs: HOLD_MS }),
  },
  {
    name: 'mqtt-1-address', description: `${LOGINS} MQTT CONNECTs with wrong device secrets from one address, ${CONCURRENCY} in flight, a device name of its own each; an answer held back over ${HOLD_MS} ms is given up`,
    run: (_server, mqttPort) => mqttLoginFlood(mqttPort, { count: LOGINS, concurrency: CONCURRENCY, addresses: 1, holdMs: HOLD_MS }),
  },
  {
    name: 'mqtt-1000-addresses', description: `${LOGINS} MQTT CONNECTs with wrong device secrets spread over ${SPREAD_ADDRESSES} addresses, as above`,
    run: (_server, mqttPort) => mqttLoginFlood(mqttPort, { count: LOGINS, concurrency: CONCURRENCY, addresses: SPREAD_ADDRESSES, holdMs: HOLD_MS }),
  },
];

interface PhaseResult {
  readonly phase: Phase;
  readonly steady: SteadyResult;
  readonly attack: AttackResult | undefined;
  readonly rssBefore: number | undefined;
  readonly rssPeak: number | undefined;
  readonly rssAfter: number | undefined;
}

async function createEntity(port: number, token: string): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/ngsi-ld/v1/entities`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: ENTITY_ID, type: 'Thing', temperature: { type: 'Property', value: 21 } }),
  });
  if (res.status !== 201) throw new Error(`creating the steady client's entity: ${res.status} ${await res.text()}`);
}

async function runPhase(phase: Phase, server: ServerProcess, mqttPort: number, sampler: RssSampler, token: string): Promise<PhaseResult> {
  process.stderr.write(`[broker-abuse] ${phase.name}\n`);
  const rssBefore = await readRssBytes(server.pid);
  sampler.window();
  const steady = startSteadyClient({ port: server.port, path: `/ngsi-ld/v1/entities/${encodeURIComponent(ENTITY_ID)}`, token, perSecond: STEADY_PER_SECOND });
  const started = performance.now();
  const attack = await phase.run(server, mqttPort);
  const left = MIN_PHASE_MS - (performance.now() - started);
  if (left > 0) await sleep(left);
  const result = await steady.stop();
  const rssPeak = sampler.window();
  await sleep(SETTLE_MS);
  const rssAfter = await readRssBytes(server.pid);
  return { phase, steady: result, attack, rssBefore, rssPeak, rssAfter };
}

const mib = (bytes: number | undefined): number | null => (bytes === undefined ? null : Math.round((bytes / MIB) * 10) / 10);

function row(key: string, unit: string, value: number | null, ceiling: number | null): Row {
  const ratio = value !== null && ceiling !== null && ceiling !== 0 ? Math.round((value / ceiling) * 100) / 100 : null;
  return { key, group: 'abuse', unit, value, ceiling, ratio };
}

/** Rows: the steady client's p50 and p99 (ceiling: the baseline), its errors, and RSS peak and after (ceiling: RSS before). */
function rowsOf(results: readonly PhaseResult[]): Row[] {
  const baseline = results.find((r) => r.phase.name === 'baseline');
  return results.flatMap((r) => {
    const k = `abuse.${r.phase.name}`;
    const isBaseline = r === baseline;
    return [
      row(`${k}.p50`, 'ms', r.steady.p50Ms, isBaseline ? null : baseline?.steady.p50Ms ?? null),
      row(`${k}.p99`, 'ms', r.steady.p99Ms, isBaseline ? null : baseline?.steady.p99Ms ?? null),
      row(`${k}.errors`, 'requests', r.steady.errors, null),
      row(`${k}.rss-peak`, 'MiB', mib(r.rssPeak), mib(r.rssBefore)),
      row(`${k}.rss-after`, 'MiB', mib(r.rssAfter), mib(r.rssBefore)),
    ];
  });
}

const formatOutcomes = (o: Outcomes): string => Object.entries(o).sort(([, a], [, b]) => b - a).map(([k, n]) => `${k}: ${n}`).join(', ');

/** The notes: what each phase did and got, and each target met or missed. */
function notesOf(results: readonly PhaseResult[], idle: number | undefined): { notes: string[]; missed: boolean } {
  const notes: string[] = [];
  let missed = false;
  for (const r of results) {
    const attack = r.attack ? `; attackers (${(r.attack.durationMs / 1000).toFixed(1)} s): ${formatOutcomes(r.attack.outcomes)}` : '';
    notes.push(`abuse.${r.phase.name}: ${r.phase.description}; steady client ${r.steady.requests} requests, max ${r.steady.maxMs} ms${attack}`);
  }
  for (const r of results) {
    const peakOver = r.rssPeak !== undefined && idle !== undefined ? (r.rssPeak - idle) / MIB : undefined;
    const afterOver = r.rssAfter !== undefined && idle !== undefined ? (r.rssAfter - idle) / MIB : undefined;
    const checks: Array<[string, boolean | undefined]> = [
      [`p99 ${r.steady.p99Ms} ms < ${P99_TARGET_MS} ms`, r.steady.p99Ms < P99_TARGET_MS],
      [`no errors (${r.steady.errors})`, r.steady.errors === 0],
      [`RSS peak idle + ${peakOver?.toFixed(1) ?? '?'} MiB < idle + ${PEAK_BOUND_MIB} MiB`, peakOver === undefined ? undefined : peakOver < PEAK_BOUND_MIB],
      [`RSS after idle + ${afterOver?.toFixed(1) ?? '?'} MiB < idle + ${AFTER_BOUND_MIB} MiB`, afterOver === undefined ? undefined : afterOver < AFTER_BOUND_MIB],
    ];
    for (const [, ok] of checks) if (ok === false) missed = true;
    notes.push(`target abuse.${r.phase.name}: ${checks.map(([what, ok]) => `${what} ${ok === undefined ? 'not measured' : ok ? 'met' : 'MISSED'}`).join('; ')}`);
  }
  return { notes, missed };
}

/** Runs every phase against one broker, in order; the lockout and every limit at their defaults. */
export async function benchAbuse(broker: Target, options: MeasureOptions, cleanup: Cleanup): Promise<AbuseBenchResult> {
  const { keyFile, privateKey } = await createKeyFile(options, cleanup);
  const token = await mint(privateKey, 'urn:ngsi-ld:User:steady');
  const target: Target = {
    ...broker, name: 'broker-abuse',
    env: {
      ...broker.env, APPLICATION_AUTHENTICATION_ENABLED: 'true', APPLICATION_AUTHENTICATION_PUBLIC_KEY_FILE: keyFile,
      APPLICATION_IDENTITY_PROVIDER_ENABLED: 'true',
    },
  };
  return withFreshTarget(target, options, cleanup, async (server, mqttPort) => {
    await createEntity(server.port, token);
    await sleep(2_000);
    const idle = await readRssBytes(server.pid);
    const sampler = new RssSampler(server.pid, 50);
    sampler.start();
    const results: PhaseResult[] = [];
    try {
      for (const phase of PHASES) results.push(await runPhase(phase, server, mqttPort, sampler, token));
    } finally {
      await sampler.stop();
    }
    const { notes, missed } = notesOf(results, idle);
    notes.unshift(
      `broker-abuse: authentication on (a local key file for the steady client's token), built-in identity provider on, lockout and connection limits at their defaults; RSS idle ${mib(idle) ?? '?'} MiB`,
      `steady client: GET /ngsi-ld/v1/entities/{id} with a Bearer token, ${STEADY_PER_SECOND}/s on a schedule (open loop), from a worker thread of its own; ceiling column: the baseline phase for p50/p99, the RSS before the phase for RSS`,
      'attackers bind 127.x.y.z source addresses (all loopback on Linux), never the steady client\'s 127.0.0.1; the broker sees each as a client address (no forwarding header is read)',
    );
    const hasErrors = missed || results.some((r) => r.steady.errors > 0);
    return { rows: rowsOf(results), notes, hasErrors };
  });
}
