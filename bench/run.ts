// Benchmark entry point (`npm run bench`): runs every scenario against the broker and against the
// bare Hono + SQLite ceiling, then prints a table and, as the last line, a JSON summary.

import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchAbuse } from './abuse.js';
import { benchAuth } from './auth.js';
import { Cleanup } from './cleanup.js';
import { benchCommands } from './commands.js';
import { benchFederation } from './federation.js';
import { benchHistory } from './history.js';
import { benchDistributed } from './distributed.js';
import { benchTargets, withFreshTarget, type MeasureOptions, type Target } from './measure.js';
import { benchMqtt } from './mqtt.js';
import { benchNotifications } from './notifications.js';
import { benchColdStart } from './cold-start.js';
import { fileSystemOf } from './proc.js';
import { buildRows, describeSizes, describeTargets, formatJson, formatTable, isSequential, type Row, type TargetResult } from './report.js';
import { SCENARIOS } from './scenarios.js';
import { benchTls } from './tls.js';

interface RunOptions extends MeasureOptions {
  readonly ceilingOnly: boolean;
  /** Only the notification scenarios (no ceiling), MQTT ingestion (with its own ceiling), or federation (brokers of their own). */
  readonly only: 'notifications' | 'auth' | 'tls' | 'mqtt' | 'federation' | 'distributed' | 'coldstart' | 'abuse' | 'commands' | 'history' | undefined;
  /** The broker's entry script; undefined means dist/main.js. */
  readonly broker: string | undefined;
}

const USAGE = `usage: node dist-bench/run.js [--ceiling-only | --only notifications|auth|tls|mqtt|federation|distributed|coldstart|abuse|commands|history] [--concurrency N] [--duration S] [--warmup S] [--tmp DIR] [--broker FILE]
  --ceiling-only   benchmark only the bare Hono + SQLite ceiling
  --only notifications
                   run only the notification scenarios (on a broker of their own; no ceiling)
  --only auth      run only the authentication scenarios (on brokers of their own)
  --only tls       run only the HTTPS scenario (a broker with a certificate made at the start, and a
                   plain one for its baseline)
  --only mqtt      run only the MQTT ingestion scenario (on a broker of its own and its own ceiling)
  --only federation
                   run only the federation scenarios (an edge, a cloud and a baseline broker)
  --only commands  run only the command round trip (100 devices on a broker of its own)
  --only history   run only the history rollup scenarios: an hourly aggregation over 30 days from
                   the hour tier against the raw rows, the database size of each level (a plant
                   built in-process), and MQTT ingestion with rollups on against off
  --only distributed
                   run only the distributed query scenarios (a broker, its registered source, a baseline broker)
  --only coldstart run only the cold start (a database of 100,000 entities and 10 million history
                   rows built in-process, then the broker started on it three times)
  --only abuse     run only the abuse scenarios (a 200 MB announced packet, 10,000 failed logins
                   from one and from 1,000 addresses over HTTP and MQTT, while a steady client
                   reads); not part of the full run
  --concurrency N  requests in flight in throughput scenarios (default 16)
  --duration S     measured seconds per throughput scenario (default 3); the one-shot ingest and the
                   latency scenarios send a fixed number of requests, one at a time
  --warmup S       least warm-up seconds of a throughput scenario, after its counted warm-up
                   requests (default 1)
  --tmp DIR        parent of the temporary data directories (default: the temp dir, unless it is tmpfs)
  --broker FILE    entry script to benchmark as the broker (default: dist/main.js)`;

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

function defaultTmp(): string {
  // Disk writes per update mean nothing on tmpfs (RAM), so prefer a disk-backed directory.
  const tmp = tmpdir();
  return fileSystemOf(tmp) === 'tmpfs' && existsSync('/var/tmp') ? '/var/tmp' : tmp;
}

function parseOptions(argv: readonly string[]): RunOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      'ceiling-only': { type: 'boolean', default: false },
      only: { type: 'string' },
      concurrency: { type: 'string', default: '16' },
      duration: { type: 'string', default: '3' },
      warmup: { type: 'string', default: '1' },
      tmp: { type: 'string' },
      broker: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const only = values.only;
  if (only !== undefined && only !== 'notifications' && only !== 'auth' && only !== 'tls' && only !== 'mqtt' && only !== 'federation' && only !== 'distributed' && only !== 'coldstart' && only !== 'abuse' && only !== 'commands' && only !== 'history') {
    throw new Error(`--only: expected notifications, auth, tls, mqtt, federation, distributed, coldstart, abuse, commands or history\n${USAGE}`);
  }
  if (only !== undefined && values['ceiling-only']) throw new Error(`--only and --ceiling-only exclude each other\n${USAGE}`);
  const concurrency = Number(values.concurrency);
  const seconds = Number(values.duration);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new Error(`--concurrency: expected a positive integer\n${USAGE}`);
  }
  if (!(seconds > 0 && seconds <= 60)) throw new Error(`--duration: expected seconds between 0 and 60\n${USAGE}`);
  const warmup = Number(values.warmup);
  if (!(warmup >= 0 && warmup <= 60)) throw new Error(`--warmup: expected seconds between 0 and 60\n${USAGE}`);
  return {
    ceilingOnly: values['ceiling-only'],
    only,
    concurrency,
    durationMs: seconds * 1000,
    warmupMs: warmup * 1000,
    tmp: values.tmp ?? defaultTmp(),
    broker: values.broker,
  };
}

// NOTE: paths from dist-bench/run.js, the bundle scripts/build-bench.mjs writes with the other scripts beside it.
const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));

/** The node flags `npm start` uses (package.json `config.nodeFlags`): both targets run with them. */
function readNodeFlags(): string[] {
  const pkg: unknown = JSON.parse(readFileSync(here('../package.json'), 'utf8'));
  const flags = (pkg as { config?: { nodeFlags?: unknown } }).config?.nodeFlags; // NOTE: our own package.json, read as is
  return typeof flags === 'string' ? flags.split(/\s+/).filter(Boolean) : [];
}

function describeRun(options: RunOptions, ceiling: TargetResult): string[] {
  const fs = fileSystemOf(options.tmp) ?? 'an unknown file system';
  const notes = [
    `${options.durationMs / 1000} s per throughput scenario at concurrency ${options.concurrency}, after a warm-up of at least ${options.warmupMs / 1000} s; Node ${process.version}, data on ${fs}`,
    `both servers run with the node flags of npm start: ${readNodeFlags().join(' ') || 'none'}`,
    'ratio = value / ceiling (req/s: below 1 is slower; ms and bytes/op: above 1 is costlier)',
  ];
  if (ceiling.rssIdle !== undefined && ceiling.rssLoaded !== undefined) {
    const mib = (bytes: number) => (bytes / 1_048_576).toFixed(1);
    notes.push(`ceiling RSS for reference: idle ${mib(ceiling.rssIdle)} MiB, loaded ${mib(ceiling.rssLoaded)} MiB`);
    notes.push('rss.idle is read after the first few hundred requests and 40 s at rest (V8 gives back its young generation after about ten idle seconds, the checkpoint thread ends 30 s after its last cycle); rss.idle.1s one second after those requests; rss.loaded is the largest RSS seen while scenarios ran, the temporal ingest included');
  }
  return notes;
}

function hasErrors(result: TargetResult | undefined): boolean {
  return result?.scenarios.some((s) => (s.load?.errors ?? 0) > 0 || s.missing?.isError === true) ?? false;
}

/** The notification targets: p99 < 25 ms at 1,000/s over HTTP, < 10 ms in-process MQTT, no loss, ≥ 0.7 with 10 subscriptions. */
function describeNotificationTargets(rows: readonly Row[]): string[] {
  const value = (key: string): number | null => rows.find((r) => r.key === key)?.value ?? null;
  const ratio = rows.find((r) => r.key === 'update.subs-10')?.ratio ?? null;
  const check = (name: string, v: number | null, ok: (x: number) => boolean, bound: string): string =>
    `target ${name} ${bound}: ${v === null ? 'not measured' : `${v}, ${ok(v) ? 'met' : 'MISSED'}`}`;
  return [
    check('notify.http-1000.p99', value('notify.http-1000.p99'), (x) => x < 25, '< 25 ms'),
    check('notify.mqtt-1000.p99', value('notify.mqtt-1000.p99'), (x) => x < 10, '< 10 ms'),
    check('notifications lost', ['notify.http-100.lost', 'notify.http-1000.lost', 'notify.mqtt-1000.lost']
      .reduce<number | null>((sum, k) => (sum === null || value(k) === null ? null : sum + (value(k) ?? 0)), 0), (x) => x === 0, '= 0'),
    check('update.subs-10 ratio', ratio, (x) => x >= 0.7, '>= 0.7'),
  ];
}

/** What each scenario sends and the data sets behind them. */
function describeScenarios(): string[] {
  const datasets = new Map<string, string>();
  for (const { dataset } of SCENARIOS) if (dataset) datasets.set(dataset.name, dataset.note);
  const sequential = SCENARIOS.filter(isSequential).map((s) => s.name);
  return [
    ...SCENARIOS.map((s) => `${s.name}: ${s.description}`),
    ...datasets.values(),
    `one request at a time, counting request time only (not building the next body): ${sequential.join(', ')}`,
  ];
}

/** The notification scenarios, on a broker of their own: their rows, and notes with the targets. */
async function runNotifications(broker: Target, options: RunOptions, cleanup: Cleanup): Promise<{ rows: Row[]; notes: string[] }> {
  log('[broker] notifications, on a broker of their own');
  const n = await withFreshTarget(broker, options, cleanup, (server, mqttPort) => benchNotifications({
    httpPort: server.port, mqttPort, concurrency: options.concurrency, durationMs: options.durationMs,
  }));
  return { rows: n.rows, notes: [...n.notes, ...describeNotificationTargets(n.rows)] };
}

/** The distributed query scenarios: a broker, its registered source and a broker holding everything, of their own. */
async function runDistributed(broker: Target, options: MeasureOptions, cleanup: Cleanup): ReturnType<typeof benchDistributed> {
  log('[broker] distributed query, on brokers of their own (a broker, its context source, and one holding every entity)');
  return benchDistributed(broker, options, cleanup);
}

/** The federation scenarios: an edge, its cloud and a broker without federation, of their own. */
function runFederation(broker: Target, options: RunOptions, cleanup: Cleanup): ReturnType<typeof benchFederation> {
  log('[broker] federation, on brokers of their own (edge, cloud, and one without federation)');
  return benchFederation(broker, options, cleanup);
}

async function main(): Promise<void> {
  let options: RunOptions;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (err) {
    log(err instanceof Error ? err.message : String(err));
    process.exitCode = 2;
    return;
  }
  const cleanup = new Cleanup();
  process.on('exit', () => cleanup.runAllSync());
  const signals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
  for (const signal of signals) {
    process.on(signal, () => {
      log(`interrupted by ${signal}; cleaning up`);
      void cleanup.runAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }

  try {
    const nodeFlags = readNodeFlags();
    const script = options.broker === undefined ? here('../dist/main.js') : resolve(options.broker);
    if (!options.ceilingOnly && !existsSync(script)) throw new Error(`${script} not found: build the broker first, or pass --ceiling-only`);
    const brokerTarget: Target = { name: 'broker', script, nodeFlags };
    const mqttCeiling: Target = { name: 'ceiling-mqtt', script: here('./ceiling-mqtt.js'), nodeFlags };
    if (options.only === 'notifications' || options.only === 'mqtt') {
      const n = options.only === 'notifications'
        ? { ...(await runNotifications(brokerTarget, options, cleanup)), hasErrors: false }
        : await benchMqtt(brokerTarget, mqttCeiling, options, cleanup);
      const noteLines = n.notes.map((note) => `note: ${note}`).join('\n');
      process.stdout.write(`${formatTable(n.rows)}\n\n${noteLines}\n${formatJson(n.rows)}\n`);
      if (n.hasErrors) process.exitCode = 1;
      return;
    }
    if (options.only === 'auth' || options.only === 'tls') {
      const a = options.only === 'auth' ? await benchAuth(brokerTarget, options, cleanup) : await benchTls(brokerTarget, options, cleanup);
      const noteLines = [...a.notes, ...describeTargets(a.rows, a.scenarios)].map((note) => `note: ${note}`).join('\n');
      process.stdout.write(`${formatTable(a.rows)}\n\n${noteLines}\n${formatJson(a.rows)}\n`);
      if (a.hasErrors) process.exitCode = 1;
      return;
    }
    if (options.only === 'abuse') {
      const a = await benchAbuse(brokerTarget, options, cleanup);
      const noteLines = a.notes.map((note) => `note: ${note}`).join('\n');
      process.stdout.write(`${formatTable(a.rows)}\n\n${noteLines}\n${formatJson(a.rows)}\n`);
      if (a.hasErrors) process.exitCode = 1;
      return;
    }
    if (options.only === 'coldstart') {
      const c = await benchColdStart({ script, nodeFlags, tmp: options.tmp, log }, cleanup);
      const noteLines = c.notes.map((note) => `note: ${note}`).join('\n');
      process.stdout.write(`${formatTable(c.rows)}\n\n${noteLines}\n${formatJson(c.rows)}\n`);
      return;
    }
    if (options.only === 'distributed') {
      const d = await runDistributed(brokerTarget, options, cleanup);
      const noteLines = d.notes.map((note) => `note: ${note}`).join('\n');
      process.stdout.write(`${formatTable(d.rows)}\n\n${noteLines}\n${formatJson(d.rows)}\n`);
      if (d.hasErrors) process.exitCode = 1;
      return;
    }
    if (options.only === 'commands') {
      log('[broker] command round trip, on a broker of its own');
      const c = await benchCommands(brokerTarget, options, cleanup);
      const noteLines = c.notes.map((note) => `note: ${note}`).join('\n');
      process.stdout.write(`${formatTable(c.rows)}\n\n${noteLines}\n${formatJson(c.rows)}\n`);
      if (c.hasErrors) process.exitCode = 1;
      return;
    }
    if (options.only === 'history') {
      const h = await benchHistory(brokerTarget, options, cleanup, log);
      const noteLines = h.notes.map((note) => `note: ${note}`).join('\n');
      process.stdout.write(`${formatTable(h.rows)}\n\n${noteLines}\n${formatJson(h.rows)}\n`);
      if (h.hasErrors) process.exitCode = 1;
      return;
    }
    if (options.only === 'federation') {
      const f = await runFederation(brokerTarget, options, cleanup);
      const noteLines = f.notes.map((note) => `note: ${note}`).join('\n');
      process.stdout.write(`${formatTable(f.rows)}\n\n${noteLines}\n${formatJson(f.rows)}\n`);
      if (f.hasErrors) process.exitCode = 1;
      return;
    }
    const targets: Target[] = options.ceilingOnly ? [] : [brokerTarget];
    targets.push({ name: 'ceiling', script: here('./ceiling.js'), nodeFlags });
    const results = await benchTargets(targets, options, cleanup);
    const broker = results.find((r) => r.name === 'broker');
    const ceiling = results.find((r) => r.name === 'ceiling');
    if (!ceiling) throw new Error('the ceiling was not measured');

    const rows = buildRows(broker, ceiling);
    const extraNotes: string[] = [];
    let hasOwnBrokerErrors = false;
    if (broker) {
      const n = await runNotifications(brokerTarget, options, cleanup);
      rows.push(...n.rows);
      extraNotes.push(...n.notes);
      log('[broker] authentication, on brokers of their own');
      const a = await benchAuth(brokerTarget, options, cleanup);
      rows.push(...a.rows);
      extraNotes.push(...a.notes, ...describeTargets(a.rows, a.scenarios));
      hasOwnBrokerErrors = a.hasErrors;
      log('[broker] HTTPS, on brokers of their own');
      const t = await benchTls(brokerTarget, options, cleanup);
      rows.push(...t.rows);
      extraNotes.push(...t.notes, ...describeTargets(t.rows, t.scenarios));
      hasOwnBrokerErrors ||= t.hasErrors;
      const m = await benchMqtt(brokerTarget, mqttCeiling, options, cleanup);
      rows.push(...m.rows);
      extraNotes.push(...m.notes);
      hasOwnBrokerErrors ||= m.hasErrors;
      const f = await runFederation(brokerTarget, options, cleanup);
      rows.push(...f.rows);
      extraNotes.push(...f.notes);
      hasOwnBrokerErrors ||= f.hasErrors;
      const d = await runDistributed(brokerTarget, options, cleanup);
      rows.push(...d.rows);
      extraNotes.push(...d.notes);
      hasOwnBrokerErrors ||= d.hasErrors;
      log('[broker] command round trip, on a broker of its own');
      const cmd = await benchCommands(brokerTarget, options, cleanup);
      rows.push(...cmd.rows);
      extraNotes.push(...cmd.notes);
      hasOwnBrokerErrors ||= cmd.hasErrors;
      const h = await benchHistory(brokerTarget, options, cleanup, log);
      rows.push(...h.rows);
      extraNotes.push(...h.notes);
      hasOwnBrokerErrors ||= h.hasErrors;
      const c = await benchColdStart({ script, nodeFlags, tmp: options.tmp, log }, cleanup);
      rows.push(...c.rows);
      extraNotes.push(...c.notes);
    }
    const notes = [
      ...describeRun(options, ceiling), ...describeScenarios(), ...describeSizes(broker, ceiling),
      ...(broker ? describeTargets(rows, SCENARIOS) : []), ...extraNotes, ...(broker?.notes ?? []), ...ceiling.notes,
    ];
    const noteLines = notes.map((n) => `note: ${n}`).join('\n');
    process.stdout.write(`${formatTable(rows)}\n\n${noteLines}\n${formatJson(rows)}\n`);
    if (hasErrors(broker) || hasErrors(ceiling) || hasOwnBrokerErrors) process.exitCode = 1;
  } catch (err) {
    log(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  } finally {
    await cleanup.runAll();
  }
}

await main();
