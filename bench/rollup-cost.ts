// What computing the rollups costs the MQTT ingestion: the load of the MQTT benchmark (mqtt-load.ts)
// against a broker whose rollup job runs every 2 s, and against one with rollups off, both started
// fresh and alive together, in rounds of each in turn (the order swapped every round). After each
// round the broker is left until its CPU rests for a whole rollup period, so that the summaries of
// the round are computed before the next round starts and are counted with it: CPU time and disk
// bytes are those of the whole round (warm-up, measure, drain and that rest) per message
// acknowledged in it.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { ServerProcess } from './child.js';
import type { Cleanup } from './cleanup.js';
import { formatCount } from './format-count.js';
import { withFreshTarget, type MeasureOptions, type Target } from './measure.js';
import { countBrokerStored, MQTT_CLIENTS, MQTT_WINDOW } from './mqtt.js';
import { runMqttLoad, type MqttLoadResult } from './mqtt-load.js';
import { MQTT_BYTES_TARGET } from './mqtt-report.js';
import { readCpuMs, readWriteBytes } from './proc.js';
import type { Row } from './report.js';

const ROUNDS = 3;
const WARMUP_MS = 2_000;
/** The rollup job of the broker with rollups on: every 2 s, so that it runs during every measured window. */
const ROLLUP_SCHEDULE = '*/2 * * * * *';
/** A rest: the CPU used over a whole rollup period stays below this share of it. */
const REST_WINDOW_MS = 2_500;
const REST_SHARE = 0.05;
const REST_TIMEOUT_MS = 60_000;
/** Messages of a device per round, at most: each round starts its observedAt past the last one's. */
const ROUND_MESSAGES = 100_000;
/** A device's measurements are 5 s apart (observedAt), as the plant's: 12 a minute summary, 720 an hour's. */
const STEP_MS = 5_000;
export const ROLLUP_INGEST_TARGET = 0.9;

export interface RollupCostResult {
  readonly rows: Row[];
  readonly notes: string[];
  readonly hasErrors: boolean;
}

interface Round {
  readonly load: MqttLoadResult;
  /** Acknowledged in the round, and the CPU time and bytes written from its start to the rest after it. */
  readonly acked: number;
  readonly cpuMs: number | undefined;
  readonly writeBytes: number | undefined;
}

/** Waits until the process used less than REST_SHARE of a core over REST_WINDOW_MS; false on timeout. */
async function rest(pid: number): Promise<boolean> {
  const deadline = Date.now() + REST_TIMEOUT_MS;
  let before = await readCpuMs(pid);
  while (Date.now() < deadline) {
    await sleep(REST_WINDOW_MS);
    const now = await readCpuMs(pid);
    if (before === undefined || now === undefined) return true;
    if (now - before < REST_WINDOW_MS * REST_SHARE) return true;
    before = now;
  }
  return false;
}

async function runRound(server: ServerProcess, mqttPort: number, options: MeasureOptions, round: number, problems: string[]): Promise<Round> {
  const cpuBefore = await readCpuMs(server.pid);
  const bytesBefore = await readWriteBytes(server.pid);
  const load = await runMqttLoad({
    mqttPort, pid: server.pid, clients: MQTT_CLIENTS, window: MQTT_WINDOW, warmupMs: Math.max(WARMUP_MS, options.warmupMs),
    durationMs: options.durationMs, firstMessage: round * ROUND_MESSAGES, stepMs: STEP_MS,
  });
  if (!(await rest(server.pid))) problems.push(`${server.name}: still busy ${REST_TIMEOUT_MS / 1000} s after round ${round + 1}`);
  const cpuAfter = await readCpuMs(server.pid);
  const bytesAfter = await readWriteBytes(server.pid);
  if (load.failed > 0) problems.push(`${server.name} round ${round + 1}: ${load.failed} publishes failed: ${load.firstError ?? ''}`);
  return {
    load, acked: load.ackedPerDevice.reduce((a, b) => a + b, 0),
    cpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
    writeBytes: bytesBefore === undefined || bytesAfter === undefined ? undefined : bytesAfter - bytesBefore,
  };
}

const rateOf = (rounds: readonly Round[]): number =>
  (rounds.reduce((a, r) => a + r.load.measured, 0) / rounds.reduce((a, r) => a + r.load.durationMs, 0)) * 1000;
const perMessage = (rounds: readonly Round[], f: (r: Round) => number | undefined): number | undefined => {
  let sum = 0;
  for (const r of rounds) {
    const v = f(r);
    if (v === undefined) return undefined;
    sum += v;
  }
  const acked = rounds.reduce((a, r) => a + r.acked, 0);
  return acked === 0 ? undefined : sum / acked;
};

/**
 * The summaries the broker holds, read from its database file beside it (its STORAGE_DIR, from
 * /proc/<pid>/environ): proof that the job ran; undefined when unreadable.
 */
function summariesOf(pid: number): { minutes: number; hours: number; pending: number } | undefined {
  try {
    const environ = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
    const dir = environ.find((v) => v.startsWith('STORAGE_DIR='))?.slice('STORAGE_DIR='.length);
    if (dir === undefined) return undefined;
    const db = new Database(join(dir, 'edgeld.db'), { readonly: true, fileMustExist: true });
    try {
      const tables = db.prepare<[], string>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rollup\\_%' ESCAPE '\\'`).pluck().all();
      const count = (prefix: string) => tables.filter((t) => t.startsWith(prefix))
        .reduce((n, t) => n + (db.prepare<[], number>(`SELECT count(*) FROM "${t}"`).pluck().get() ?? 0), 0);
      return { minutes: count('rollup_minute_'), hours: count('rollup_hour_'), pending: count('rollup_dirty') };
    } finally {
      db.close();
    }
  } catch {
    return undefined;
  }
}

interface Figures {
  on: Round[];
  off: Round[];
  stored: { on: number; off: number };
  summaries: ReturnType<typeof summariesOf>;
}

async function alternate(on: ServerProcess, onMqtt: number, off: ServerProcess, offMqtt: number, options: MeasureOptions, problems: string[]): Promise<Figures> {
  const f: Figures = { on: [], off: [], stored: { on: 0, off: 0 }, summaries: undefined };
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
    for (const which of order) {
      if (which === 'on') f.on.push(await runRound(on, onMqtt, options, r, problems));
      else f.off.push(await runRound(off, offMqtt, options, r, problems));
    }
  }
  f.stored = { on: await countBrokerStored(on), off: await countBrokerStored(off) };
  f.summaries = summariesOf(on.pid);
  return f;
}

const round = (v: number | undefined, digits = 0): number | null => (v === undefined || !Number.isFinite(v) ? null : Math.round(v * 10 ** digits) / 10 ** digits);

function row(key: string, unit: string, value: number | undefined, ceiling: number | undefined, digits = 0): Row {
  const ratio = value === undefined || ceiling === undefined || ceiling === 0 ? null : round(value / ceiling, 2);
  return { key, group: 'history', unit, value: round(value, digits), ceiling: round(ceiling, digits), ratio };
}

/** The MQTT ingestion with the rollup job running every 2 s against the same with rollups off. */
export async function benchRollupCost(broker: Target, options: MeasureOptions, cleanup: Cleanup): Promise<RollupCostResult> {
  const problems: string[] = [];
  const on: Target = { ...broker, name: 'broker-rollups', env: { ...broker.env, HISTORY_ROLLUPS: 'true', HISTORY_ROLLUP_SCHEDULE: ROLLUP_SCHEDULE } };
  const off: Target = { ...broker, name: 'broker', env: { ...broker.env, HISTORY_ROLLUPS: 'false' } };
  const f = await withFreshTarget(off, options, cleanup, (offServer, offMqtt) =>
    withFreshTarget(on, options, cleanup, (onServer, onMqtt) => alternate(onServer, onMqtt, offServer, offMqtt, options, problems)));
  const acked = (rounds: readonly Round[]) => rounds.reduce((a, r) => a + r.acked, 0);
  if (f.stored.on !== acked(f.on)) problems.push(`rollups on: ${f.stored.on} instances stored for ${acked(f.on)} PUBACKs`);
  if (f.summaries !== undefined && (f.summaries.minutes === 0 || f.summaries.pending > 0)) {
    problems.push(`the broker with rollups on holds ${f.summaries.minutes} minute summaries and ${f.summaries.pending} periods left to compute`);
  }
  if (f.stored.off !== acked(f.off)) problems.push(`rollups off: ${f.stored.off} instances stored for ${acked(f.off)} PUBACKs`);
  const rateOn = rateOf(f.on);
  const rateOff = rateOf(f.off);
  const bytesOn = perMessage(f.on, (r) => r.writeBytes);
  const rows: Row[] = [
    row('mqtt.ingest.rollups', 'msg/s', rateOn, rateOff),
    row('mqtt.ingest.rollups.cpu', 'µs/msg', perMessage(f.on, (r) => (r.cpuMs === undefined ? undefined : r.cpuMs * 1000)), perMessage(f.off, (r) => (r.cpuMs === undefined ? undefined : r.cpuMs * 1000))),
    row('mqtt.ingest.rollups.disk-write', 'bytes/msg', bytesOn, perMessage(f.off, (r) => r.writeBytes)),
  ];
  const ratio = rateOn / rateOff;
  const notes = [
    `mqtt.ingest.rollups: the load of mqtt.ingest (${MQTT_CLIENTS} devices, QoS 1, ${MQTT_WINDOW} publishes each awaiting their PUBACK; warmed up for ${Math.max(WARMUP_MS, options.warmupMs) / 1000} s, then measured for ${options.durationMs / 1000} s) against a broker with history.rollups on and history.rollup-schedule '${ROLLUP_SCHEDULE}' (value) and one with history.rollups off (ceiling column), both alive together, ${ROUNDS} rounds of each in turn (order swapped every round); msg/s over the measured windows; ${formatSummaries(f.summaries)}`,
    'mqtt.ingest.rollups.cpu and .disk-write: the broker\'s CPU time and write_bytes from the start of each round to the end of the rest after it (less than 5% of a core over 2.5 s, so the summaries of the round are computed and counted), per message acknowledged in the round; the messages of a device are stamped 5 s apart (observedAt), from months back, so every minute they touch has closed and is summarized as soon as the job reads it',
    `target mqtt.ingest.rollups ratio >= ${ROLLUP_INGEST_TARGET}: ${round(ratio, 2)}, ${ratio >= ROLLUP_INGEST_TARGET ? 'met' : 'MISSED'}`,
    `target mqtt.ingest.rollups.disk-write <= ${MQTT_BYTES_TARGET} bytes/msg: ${round(bytesOn) ?? 'not measured'}, ${bytesOn === undefined ? '' : bytesOn <= MQTT_BYTES_TARGET ? 'met' : 'MISSED'}`,
    ...problems.map((p) => `ERROR: mqtt.ingest.rollups: ${p}`),
  ];
  return { rows, notes, hasErrors: problems.length > 0 };
}

function formatSummaries(s: ReturnType<typeof summariesOf>): string {
  return s === undefined ? 'the summaries of the broker with rollups on could not be read'
    : `at the end the broker with rollups on holds ${formatCount(s.minutes)} minute and ${formatCount(s.hours)} hour summaries, ${s.pending} periods left to compute`;
}
