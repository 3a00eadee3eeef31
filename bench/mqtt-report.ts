// The rows and notes of the MQTT ingestion benchmark: rate, PUBACK latency, CPU time and disk bytes
// per stored measurement, and RSS of the broker beside the bare ceiling's, the targets, and the check that every
// acknowledged message was stored.

import type { MqttLoadResult } from './mqtt-load.js';
import type { Row } from './report.js';

const GROUP = 'mqtt';
const MIB = 1024 * 1024;
/** Targets: messages per second against the ceiling, disk bytes per stored measurement (SD-card wear). */
export const MQTT_INGEST_RATIO_TARGET = 0.5;
export const MQTT_BYTES_TARGET = 2_048;

/** What one target measured under the MQTT load. */
export interface MqttMeasurement {
  readonly load: MqttLoadResult;
  /** Largest RSS seen during the load; undefined when unreadable. */
  readonly rss: number | undefined;
  /** Messages the target holds after the run (history instances, or ceiling rows); undefined when not counted. */
  readonly stored: number | undefined;
}

function round(value: number | undefined, digits: number): number | null {
  if (value === undefined || !Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function row(key: string, unit: string, value: number | null, ceiling: number | null): Row {
  const ratio = value !== null && ceiling !== null && ceiling !== 0 ? round(value / ceiling, 2) : null;
  return { key, group: GROUP, unit, value, ceiling, ratio };
}

/** Messages acknowledged per second over the measured window. */
export function ratePerSecond(load: MqttLoadResult): number {
  return load.durationMs > 0 ? load.measured / (load.durationMs / 1000) : Number.NaN;
}

/** Disk bytes written per message acknowledged in the window. */
export function bytesPerMessage(load: MqttLoadResult): number | undefined {
  return load.writeBytes === undefined || load.measured === 0 ? undefined : load.writeBytes / load.measured;
}

/** CPU microseconds the target spent per message acknowledged in the window. */
export function cpuPerMessage(load: MqttLoadResult): number | undefined {
  return load.cpuMs === undefined || load.measured === 0 ? undefined : (load.cpuMs * 1000) / load.measured;
}

/**
 * The rows of the broker beside the ceiling; a target not measured leaves its column null. `prefix`:
 * `mqtt` for the MQTT 3.1.1 load, `mqtt5` for the same load with MQTT 5 clients.
 */
export function mqttRows(broker: MqttMeasurement | undefined, ceiling: MqttMeasurement | undefined, prefix = 'mqtt'): Row[] {
  const pick = (m: MqttMeasurement | undefined, f: (m: MqttMeasurement) => number | undefined, digits: number) =>
    m === undefined ? null : round(f(m), digits);
  const rows = [
    row('mqtt.ingest', 'msg/s', pick(broker, (m) => ratePerSecond(m.load), 0), pick(ceiling, (m) => ratePerSecond(m.load), 0)),
    row('mqtt.ingest.p50', 'ms', pick(broker, (m) => m.load.p50Ms, 2), pick(ceiling, (m) => m.load.p50Ms, 2)),
    row('mqtt.ingest.p99', 'ms', pick(broker, (m) => m.load.p99Ms, 2), pick(ceiling, (m) => m.load.p99Ms, 2)),
    row('mqtt.ingest.cpu', 'µs/msg', pick(broker, (m) => cpuPerMessage(m.load), 0), pick(ceiling, (m) => cpuPerMessage(m.load), 0)),
    row('mqtt.ingest.disk-write', 'bytes/msg', pick(broker, (m) => bytesPerMessage(m.load), 0), pick(ceiling, (m) => bytesPerMessage(m.load), 0)),
    // NOTE: as for the other memory rows, the ceiling's RSS says little about the broker's: no ratio.
    row('mqtt.ingest.rss', 'MiB', pick(broker, (m) => (m.rss === undefined ? undefined : m.rss / MIB), 1), null),
  ];
  return prefix === 'mqtt' ? rows : rows.map((r) => ({ ...r, key: `${prefix}${r.key.slice('mqtt'.length)}` }));
}

/** Whether the targets were met, as note lines; `prefix` as for mqttRows. */
export function describeMqttTargets(rows: readonly Row[], prefix = 'mqtt'): string[] {
  const ratio = rows.find((r) => r.key === `${prefix}.ingest`)?.ratio ?? null;
  const bytes = rows.find((r) => r.key === `${prefix}.ingest.disk-write`)?.value ?? null;
  const verdict = (v: number | null, ok: (x: number) => boolean): string => (v === null ? 'not measured' : `${v}, ${ok(v) ? 'met' : 'MISSED'}`);
  return [
    `target ${prefix}.ingest ratio >= ${MQTT_INGEST_RATIO_TARGET}: ${verdict(ratio, (x) => x >= MQTT_INGEST_RATIO_TARGET)}`,
    `target ${prefix}.ingest.disk-write <= ${MQTT_BYTES_TARGET} bytes/msg: ${verdict(bytes, (x) => x <= MQTT_BYTES_TARGET)}`,
  ];
}

/**
 * What went wrong with one target's run, as note lines: failed publishes, and a stored count that
 * differs from the PUBACKs received (a message acknowledged but not stored, or dropped). Empty when
 * all is well.
 */
export function mqttErrors(name: string, m: MqttMeasurement): string[] {
  const errors: string[] = [];
  const acked = m.load.ackedPerDevice.reduce((a, b) => a + b, 0);
  if (m.load.failed > 0) errors.push(`${name} mqtt.ingest: ${m.load.failed} publishes failed: ${m.load.firstError ?? ''}`);
  if (m.stored === undefined) errors.push(`${name} mqtt.ingest: the stored messages could not be counted`);
  else if (m.stored !== acked) errors.push(`${name} mqtt.ingest: ${m.stored} messages stored but ${acked} PUBACKs received`);
  return errors;
}
