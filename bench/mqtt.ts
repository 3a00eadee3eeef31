// MQTT ingestion benchmark, on a broker of its own and then on the bare MQTT ceiling (ceiling-mqtt.ts),
// each started fresh and measured back to back under the same load: QoS 1 measurements from one
// client per device, stored (entity and history) before their PUBACK. At the end, the messages
// each target holds are counted against the PUBACKs received.

import type { ServerProcess } from './child.js';
import type { Cleanup } from './cleanup.js';
import { withFreshTarget, type MeasureOptions, type Target } from './measure.js';
import { deviceIdOf, runMqttLoad, type MqttLoadOptions } from './mqtt-load.js';
import { describeMqttTargets, mqttErrors, mqttRows, type MqttMeasurement } from './mqtt-report.js';
import { RssSampler } from './proc.js';
import type { Row } from './report.js';

export const MQTT_CLIENTS = 10;
export const MQTT_WINDOW = 50;
/** The load needs a second or two before both targets reach their steady pace. */
const LEAST_WARMUP_MS = 2_000;
const ATTRIBUTE = 'temperature';

export interface MqttBenchResult {
  readonly rows: Row[];
  readonly notes: string[];
  readonly hasErrors: boolean;
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** The history instances of a device's attribute, from the broker's temporal API (totalCount per day). */
async function countInstances(server: ServerProcess, deviceId: string): Promise<number> {
  const id = encodeURIComponent(`urn:ngsi-ld:Device:${deviceId}`);
  const url = `http://127.0.0.1:${server.port}/ngsi-ld/v1/temporal/entities/${id}`
    + `?attrs=${ATTRIBUTE}&options=aggregatedValues&aggrMethods=totalCount&aggrPeriodDuration=P1D`;
  const res = await fetch(url);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`temporal count of ${deviceId}: ${res.status} ${text.slice(0, 300)}`);
  // NOTE: the broker's own temporal answer: { <attr>: { totalCount: [[count, start, end], ...] } }
  const body = JSON.parse(text) as Record<string, { totalCount?: Array<[number, string, string]> } | undefined>;
  return (body[ATTRIBUTE]?.totalCount ?? []).reduce((sum, [n]) => sum + n, 0);
}

/** The history instances the broker holds of every device of the load. */
export async function countBrokerStored(server: ServerProcess): Promise<number> {
  let sum = 0;
  for (let i = 0; i < MQTT_CLIENTS; i++) sum += await countInstances(server, deviceIdOf(i));
  return sum;
}

async function countCeilingStored(server: ServerProcess): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${server.port}/count`);
  // NOTE: the ceiling's own answer: { count }
  const body = (await res.json()) as { count: number };
  return body.count;
}

/** Runs the load against a started target while sampling its RSS, then counts what it stored. */
async function measure(server: ServerProcess, mqttPort: number, options: MeasureOptions,
  count: (server: ServerProcess) => Promise<number>, notes: string[], protocolVersion: 4 | 5): Promise<MqttMeasurement> {
  const loadOptions: MqttLoadOptions = {
    mqttPort, pid: server.pid, clients: MQTT_CLIENTS, window: MQTT_WINDOW,
    warmupMs: Math.max(LEAST_WARMUP_MS, options.warmupMs), durationMs: options.durationMs, protocolVersion,
  };
  const sampler = new RssSampler(server.pid);
  sampler.start();
  let rss: number | undefined;
  const load = await runMqttLoad(loadOptions).finally(async () => {
    rss = await sampler.stop();
  });
  const stored = await count(server).catch((err: unknown) => {
    notes.push(`${server.name} mqtt.ingest: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  });
  return { load, rss, stored };
}

/** Runs the MQTT ingestion load on a fresh broker, then on a fresh ceiling: rows, notes and whether anything failed. */
export async function benchMqtt(broker: Target, ceiling: Target, options: MeasureOptions, cleanup: Cleanup): Promise<MqttBenchResult> {
  const notes: string[] = [];
  const run = async (version: 4 | 5): Promise<{ b: MqttMeasurement; c: MqttMeasurement }> => {
    log(`[broker] mqtt ingestion, MQTT ${version === 5 ? '5' : '3.1.1'} clients, on a broker of its own`);
    const b = await withFreshTarget(broker, options, cleanup, (server, mqttPort) => measure(server, mqttPort, options, countBrokerStored, notes, version));
    log(`[ceiling-mqtt] mqtt ingestion, MQTT ${version === 5 ? '5' : '3.1.1'} clients`);
    const c = await withFreshTarget(ceiling, options, cleanup, (server, mqttPort) => measure(server, mqttPort, options, countCeilingStored, notes, version));
    return { b, c };
  };
  const { b, c } = await run(4);
  const v5 = await run(5);
  const rows = [...mqttRows(b, c), ...mqttRows(v5.b, v5.c, 'mqtt5')];
  const errors = [...mqttErrors('broker', b), ...mqttErrors('ceiling-mqtt', c), ...mqttErrors('broker (MQTT 5)', v5.b), ...mqttErrors('ceiling-mqtt (MQTT 5)', v5.c)];
  const acked = (m: MqttMeasurement) => m.load.ackedPerDevice.reduce((x, y) => x + y, 0);
  const mib = (bytes: number | undefined) => (bytes === undefined ? '-' : (bytes / 1_048_576).toFixed(1));
  notes.push(
    `mqtt.ingest: ${MQTT_CLIENTS} MQTT clients on loopback, each its own device publishing {observedAt, ${ATTRIBUTE}} with QoS 1 to ngsi/default/<device>/attrs, ${MQTT_WINDOW} publishes each awaiting their PUBACK; ${loadOptionsNote(options)}; the ceiling column is a bare Aedes broker whose publish hook inserts each payload into one SQLite table (WAL, synchronous=NORMAL, integer key), one transaction per event-loop turn, PUBACK after commit`,
    `mqtt.ingest.cpu and .disk-write: the target's CPU time (user + system) and write_bytes over the measured window per message acknowledged in it (CPU per message holds even when other work slows the run); rss: the largest RSS of the broker during the load (ceiling: ${mib(c.rss)} MiB)`,
    `mqtt.ingest: cores busy over the window (CPU time / wall time): broker ${coresOf(b)}, ceiling ${coresOf(c)}; the load generator needs most of a core of its own, so a ceiling well below one core was held back by the load, not by its own work`,
    `mqtt.ingest stored check: broker ${b.stored ?? '-'} history instances for ${acked(b)} PUBACKs, ceiling ${c.stored ?? '-'} rows for ${acked(c)} PUBACKs`,
    `mqtt5.ingest: the same load with MQTT 5 clients (protocolVersion 5) on a fresh broker and a fresh ceiling; cores busy: broker ${coresOf(v5.b)}, ceiling ${coresOf(v5.c)}; stored check: broker ${v5.b.stored ?? '-'} for ${acked(v5.b)} PUBACKs, ceiling ${v5.c.stored ?? '-'} for ${acked(v5.c)}`,
    ...errors.map((e) => `ERROR: ${e}`),
    ...describeMqttTargets(rows),
    ...describeMqttTargets(rows, 'mqtt5'),
  );
  return { rows, notes, hasErrors: errors.length > 0 };
}

function coresOf(m: MqttMeasurement): string {
  return m.load.cpuMs === undefined ? '-' : (m.load.cpuMs / m.load.durationMs).toFixed(2);
}

function loadOptionsNote(options: MeasureOptions): string {
  return `warmed up for ${Math.max(LEAST_WARMUP_MS, options.warmupMs) / 1000} s, then measured for ${options.durationMs / 1000} s`;
}
