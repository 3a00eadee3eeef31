// Authentication benchmarks, on brokers of their own: one with authentication on, trusting a key
// written to a temporary file whose private half mints the run's tokens, and, for the baseline of
// the creates, one without. Each pair is measured back to back, so its ratio compares figures taken
// seconds apart.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SignJWT, exportSPKI, generateKeyPair, type CryptoKey } from 'jose';
import type { ServerProcess } from './child.js';
import type { Cleanup } from './cleanup.js';
import { withFreshTarget, type MeasureOptions, type Target } from './measure.js';
import { seededRandom } from './random.js';
import { compareRows, type Row, type ScenarioResult } from './report.js';
import { authPairs, READER, type AuthPair, type AuthTokens } from './auth-scenarios.js';
import { runScenario, type ScenarioRun } from './run-scenario.js';
import type { Scenario } from './scenario-types.js';

const SEED = 42;
const ADMIN_ROLE = 'service-admin';
const TOKEN_LIFETIME_S = 3_600;

export interface AuthBenchResult {
  readonly rows: Row[];
  readonly notes: string[];
  /** The subject scenarios, for their targets. */
  readonly scenarios: Scenario[];
  readonly hasErrors: boolean;
}

export async function mint(key: CryptoKey, sub: string, roles?: string[]): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  return new SignJWT(roles ? { realm_access: { roles } } : {})
    .setProtectedHeader({ alg: 'ES256' }).setSubject(sub).setIssuedAt(iat).setExpirationTime(iat + TOKEN_LIFETIME_S).sign(key);
}

/** A ScenarioRun for a broker of a side bench (auth, tls): its own state, no memory sampling. */
export function scenarioRun(server: ServerProcess, options: MeasureOptions, notes: string[], opts: { measureCpu?: boolean } = {}): ScenarioRun {
  return {
    server, notes, results: [], datasets: new Map(),
    state: { created: 0, batched: 0, ingested: 0, random: seededRandom(SEED) },
    concurrency: options.concurrency, durationMs: options.durationMs, warmupMs: options.warmupMs,
    afterWarmup: async () => {},
    ...(opts.measureCpu === true ? { measureCpu: true } : {}),
  };
}

/** Writes the public key of a new ES256 pair to a temporary PEM file; the private key mints tokens. */
export async function createKeyFile(options: MeasureOptions, cleanup: Cleanup): Promise<{ keyFile: string; privateKey: CryptoKey }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const dir = mkdtempSync(join(options.tmp, 'edgeld-bench-key-'));
  cleanup.add(() => rm(dir, { recursive: true, force: true }), () => rmSync(dir, { recursive: true, force: true }));
  const keyFile = join(dir, 'public.pem');
  writeFileSync(keyFile, await exportSPKI(publicKey));
  return { keyFile, privateKey };
}

/** Runs each pair's baseline then its subject; a missing half leaves its figures null. */
async function measurePair(pair: AuthPair, subjectRun: ScenarioRun, baselineRun: ScenarioRun): Promise<[ScenarioResult, ScenarioResult]> {
  const baseline = await runScenario(baselineRun, pair.baseline);
  const subject = await runScenario(subjectRun, pair.subject);
  for (const [run, r] of [[baselineRun, baseline], [subjectRun, subject]] as const) {
    if (r.missing) run.notes.push(`${run.server.name} ${r.scenario.name}: not measured: ${r.missing.reason}`);
  }
  return [subject, baseline];
}

/** Runs every pair: rows for the report (the baseline in the ceiling column), and notes. */
export async function benchAuth(broker: Target, options: MeasureOptions, cleanup: Cleanup): Promise<AuthBenchResult> {
  const { keyFile, privateKey } = await createKeyFile(options, cleanup);
  const tokens: AuthTokens = {
    admin: await mint(privateKey, 'urn:ngsi-ld:User:admin', [ADMIN_ROLE]),
    reader: await mint(privateKey, READER),
    clients: await Promise.all(Array.from({ length: options.concurrency }, (_, i) => mint(privateKey, `urn:ngsi-ld:Device:${i}`))),
  };
  const pairs = authPairs(tokens);
  const authTarget: Target = {
    ...broker, name: 'broker-auth',
    env: { ...broker.env, APPLICATION_AUTHENTICATION_ENABLED: 'true', APPLICATION_AUTHENTICATION_PUBLIC_KEY_FILE: keyFile },
  };
  const notes: string[] = [];
  const results = await withFreshTarget(authTarget, options, cleanup, async (authServer) => {
    const authRun = scenarioRun(authServer, options, notes);
    const out: Array<[ScenarioResult, ScenarioResult]> = [];
    const unauthenticated = pairs.filter((p) => p.isBaselineUnauthenticated);
    await withFreshTarget(broker, options, cleanup, async (plainServer) => {
      const plainRun = scenarioRun(plainServer, options, notes);
      for (const pair of unauthenticated) out.push(await measurePair(pair, authRun, plainRun));
    });
    for (const pair of pairs.filter((p) => !p.isBaselineUnauthenticated)) out.push(await measurePair(pair, authRun, authRun));
    return out;
  });
  const rows = results.flatMap(([subject, baseline]) => compareRows(subject, baseline));
  const hasErrors = results.flat().some((r) => (r.load?.errors ?? 0) > 0 || r.missing?.isError === true);
  for (const [subject, baseline] of results) {
    if (subject.scenario.noteBytes) {
      notes.push(`${subject.scenario.name}: bytes per answer: ${subject.load?.responseBytes ?? '-'}, ${baseline.scenario.name}: ${baseline.load?.responseBytes ?? '-'}`);
    }
  }
  notes.push(
    ...pairs.map((p) => `${p.subject.name}: ${p.subject.description}`),
    ...new Set(pairs.flatMap((p) => (p.subject.dataset ? [p.subject.dataset.note] : []))),
    'auth.*: on a broker of its own with authentication on (ES256 tokens verified with a local public key file); the ceiling column holds the baseline, measured right before on the same load and client count',
  );
  return { rows, notes, scenarios: pairs.map((p) => p.subject), hasErrors };
}
