// The command round trip (edge.md §6), on a broker of its own: 100 devices (mqtt clients on the
// embedded broker, each answering every command it gets on cmdexe at once), commands issued by HTTP
// PATCH at 100 a second; a round trip is from the PATCH sent to the PUBACK of the device's answer
// (sent after the commit of `<name>_status` OK). Then the throughput of ordinary updates while commands
// flow, against the same updates on the same broker with none flowing, in rounds of each in turn.

import type { Cleanup } from './cleanup.js';
import { startCommandDevices } from './command-devices.js';
import { formatCount } from './format-count.js';
import { percentile, runLoad, type LoadResult } from './load.js';
import { withFreshTarget, type MeasureOptions, type Target } from './measure.js';
import type { Row } from './report.js';

const DEVICES = 100;
const RATE = 100;
const SENSORS = 100;
/** Rounds of the updates without and with commands, in turn. */
const ROUNDS = 3;
const WARMUP_MS = 1_500;
const SETTLE_TIMEOUT_MS = 10_000;
export const COMMAND_P99_TARGET_MS = 50;
export const COMMAND_WRITE_TARGET = 0.8;

export interface CommandBenchResult {
  readonly rows: Row[];
  readonly notes: string[];
  readonly hasErrors: boolean;
}

const valveId = (n: number): string => `urn:ngsi-ld:Valve:cmd${n}`;
const sensorId = (n: number): string => `urn:ngsi-ld:Sensor:cmd${n}`;

async function call(port: number, method: string, path: string, body?: unknown): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method, signal: AbortSignal.timeout(30_000),
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** The devices, their entities (each with its command attribute) and the Sensors the updates write. */
async function setUp(port: number): Promise<void> {
  for (let n = 0; n < DEVICES; n++) {
    const reg = await call(port, 'POST', '/edgeld/v1/devices', { deviceId: `cmd${n}`, entityId: valveId(n), entityType: 'Valve', commands: [{ name: 'open' }] });
    if (reg !== 201) throw new Error(`device cmd${n}: ${reg}`);
    const made = await call(port, 'POST', '/ngsi-ld/v1/entities', { id: valveId(n), type: 'Valve', open: { type: 'Property', value: -1 } });
    if (made !== 201) throw new Error(`valve ${n}: ${made}`);
  }
  for (let n = 0; n < SENSORS; n++) {
    const made = await call(port, 'POST', '/ngsi-ld/v1/entities', { id: sensorId(n), type: 'Sensor', temperature: { type: 'Property', value: 0 } });
    if (made !== 201) throw new Error(`sensor ${n}: ${made}`);
  }
}

function updates(port: number, options: MeasureOptions, durationMs: number, counter: { next: number }): Promise<LoadResult> {
  return runLoad({
    port, concurrency: options.concurrency, maxRequests: Number.MAX_SAFE_INTEGER, durationMs, expectStatus: 204,
    next: () => {
      const k = counter.next++;
      return { method: 'PATCH', path: `/ngsi-ld/v1/entities/${encodeURIComponent(sensorId(k % SENSORS))}/attrs`, body: JSON.stringify({ temperature: { type: 'Property', value: k } }) };
    },
  });
}

interface Figures {
  roundTrips: number[];
  /** The round trips of the commands issued while the updates ran. */
  underLoad: number[];
  issued: number;
  failed: number;
  lost: number;
  duplicates: number;
  without: LoadResult[];
  during: LoadResult[];
  /** The broker's own command counters (/metrics) at the end. */
  counters: string;
}

/** The edgeld_command* lines of /metrics, one string. */
async function commandCounters(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return text.split('\n').filter((l) => l.startsWith('edgeld_command') && !l.endsWith(' 0')).join(', ');
}

/** The round trips alone, then ROUNDS rounds of updates without and with commands flowing. */
async function measure(port: number, mqttPort: number, options: MeasureOptions): Promise<Figures> {
  await setUp(port);
  const devices = await startCommandDevices({ port, mqttPort, devices: DEVICES, rate: RATE });
  const writes = { next: 0 };
  try {
    // Warm-up: the commands of the entities' creation are answered, then a second and a half of commands.
    await devices.issue(WARMUP_MS);
    await devices.report(SETTLE_TIMEOUT_MS);
    const alone = await devices.issue(options.durationMs);
    const { roundTrips } = await devices.report(SETTLE_TIMEOUT_MS);
    const without: LoadResult[] = [];
    const during: LoadResult[] = [];
    let failed = alone.failed;
    await updates(port, options, WARMUP_MS, writes);
    for (let r = 0; r < ROUNDS; r++) {
      without.push(await updates(port, options, options.durationMs, writes));
      const [load, flow] = await Promise.all([updates(port, options, options.durationMs, writes), devices.issue(options.durationMs)]);
      during.push(load);
      failed += flow.failed;
    }
    const end = await devices.report(SETTLE_TIMEOUT_MS);
    return {
      roundTrips, underLoad: end.roundTrips, issued: end.issued, failed, lost: end.lost, duplicates: end.duplicates, without, during,
      counters: await commandCounters(port),
    };
  } finally {
    await devices.end();
  }
}

const round = (x: number, digits = 0): number => Math.round(x * 10 ** digits) / 10 ** digits;
const rate = (loads: readonly LoadResult[]): number => (loads.reduce((a, l) => a + l.completed, 0) / loads.reduce((a, l) => a + l.durationMs, 0)) * 1000;

/** Runs the command scenarios on a broker of their own; rows for the report, and notes. */
export async function benchCommands(broker: Target, options: MeasureOptions, cleanup: Cleanup): Promise<CommandBenchResult> {
  // NOTE: every device connects from 127.0.0.1: the per-address cap (64 by default) would refuse some.
  const target: Target = { ...broker, env: { ...broker.env, MQTT_MAX_CONNECTIONS_PER_ADDRESS: String(DEVICES * 2) } };
  const f = await withFreshTarget(target, options, cleanup, (server, mqttPort) => measure(server.port, mqttPort, options));
  const sorted = Float64Array.from(f.roundTrips).sort();
  const p50 = percentile(sorted, 50);
  const p99 = percentile(sorted, 99);
  const ratio = rate(f.during) / rate(f.without);
  const loaded = Float64Array.from(f.underLoad).sort();
  const rows: Row[] = [
    { key: 'command.roundtrip.p50', group: 'commands', unit: 'ms', value: round(p50, 2), ceiling: null, ratio: null },
    { key: 'command.roundtrip.p99', group: 'commands', unit: 'ms', value: round(p99, 2), ceiling: null, ratio: null },
    { key: 'command.roundtrip.p50.under-load', group: 'commands', unit: 'ms', value: round(percentile(loaded, 50), 2), ceiling: null, ratio: null },
    { key: 'command.roundtrip.p99.under-load', group: 'commands', unit: 'ms', value: round(percentile(loaded, 99), 2), ceiling: null, ratio: null },
    { key: 'command.lost', group: 'commands', unit: 'commands', value: f.lost, ceiling: null, ratio: null },
    { key: 'command.write-during-commands', group: 'commands', unit: 'req/s', value: round(rate(f.during)), ceiling: round(rate(f.without)), ratio: round(ratio, 2) },
  ];
  const errors = [...f.without, ...f.during].filter((l) => l.errors > 0);
  const problems = [
    ...(f.lost > 0 ? [`command.lost: ${f.lost} of ${formatCount(f.issued)} commands never answered`] : []),
    ...(f.failed > 0 ? [`command.roundtrip: ${f.failed} PATCHes failed`] : []),
    ...(f.duplicates > 0 ? [`command.roundtrip: ${f.duplicates} commands received again after their answer`] : []),
    ...errors.map((l) => `command.write-during-commands: updates failed: ${l.firstError ?? ''}`),
  ];
  const notes = [
    `command.roundtrip: ${DEVICES} devices (mqtt clients on the embedded broker, each answering OK on cmdexe QoS 1 as soon as a command arrives), commands by HTTP PATCH …/attrs/open at ${RATE}/s (open loop; the devices and the PATCHes on a worker thread of their own, so that they do not delay the load generator) to the devices in turn for ${options.durationMs / 1000} s after a ${WARMUP_MS / 1000} s warm-up; from the PATCH sent to the PUBACK of the answer, which the broker sends after committing <name>_status OK; ${formatCount(f.roundTrips.length)} round trips`,
    `command.write-during-commands: PATCH …/attrs of ${SENSORS} Sensors' temperatures (concurrency ${options.concurrency}) while commands flow at ${RATE}/s, against the same updates on the same broker with none flowing (ceiling column), ${ROUNDS} rounds of each in turn, ${options.durationMs / 1000} s each; ${formatCount(f.issued)} commands issued in all, ${f.lost} lost`,
    `command counters of the broker at the end: ${f.counters}`,
    `target command.roundtrip.p99 < ${COMMAND_P99_TARGET_MS} ms: ${round(p99, 2)}, ${p99 < COMMAND_P99_TARGET_MS ? 'met' : 'MISSED'}`,
    `target command.write-during-commands ratio >= ${COMMAND_WRITE_TARGET}: ${round(ratio, 2)}, ${ratio >= COMMAND_WRITE_TARGET ? 'met' : 'MISSED'}`,
    ...problems,
  ];
  return { rows, notes, hasErrors: problems.length > 0 };
}
