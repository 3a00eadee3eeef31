// The MQTT load generator: clients of an MQTT broker on 127.0.0.1, each publishing the measurements
// of its own device with QoS 1 and a fixed window of publishes awaiting their PUBACK, warmed up,
// then measured for a fixed duration (PUBACKs per second, publish → PUBACK latency, the target's
// disk writes and CPU time).

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectAsync, type MqttClient } from 'mqtt';
import { percentile } from './load.js';
import { readCpuMs, readWriteBytes } from './proc.js';

/** observedAt of a device's first message; each next one is a millisecond (or MqttLoadOptions.stepMs) later. */
const T0 = Date.UTC(2026, 4, 1);
const DRAIN_MAX_MS = 30_000;

export interface MqttLoadOptions {
  readonly mqttPort: number;
  /** Process whose disk writes are counted over the measured window. */
  readonly pid: number;
  readonly clients: number;
  /** Publishes each client keeps awaiting their PUBACK. */
  readonly window: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** The number of each device's first message (default 0): runs on one broker give distinct instants. */
  readonly firstMessage?: number;
  /** Milliseconds between the observedAt of a device's messages (default 1). */
  readonly stepMs?: number;
  /** MQTT protocol version of the clients: 4 (3.1.1, the default) or 5. */
  readonly protocolVersion?: 4 | 5;
}

export interface MqttLoadResult {
  /** PUBACKs received over the whole run (warm-up and drain included), per device. */
  readonly ackedPerDevice: readonly number[];
  /** Publishes that failed or were never acknowledged. */
  readonly failed: number;
  readonly firstError: string | undefined;
  /** PUBACKs received in the measured window, and its length. */
  readonly measured: number;
  readonly durationMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Bytes the process wrote to storage over the window; undefined when /proc/<pid>/io is unreadable. */
  readonly writeBytes: number | undefined;
  /** CPU time the process used over the window (10 ms resolution); undefined when unreadable. */
  readonly cpuMs: number | undefined;
}

/** The device id of client `i`: its topic is `ngsi/default/<id>/attrs`. */
export function deviceIdOf(i: number): string {
  return `bench-${i}`;
}

/** The payload of a device's n-th message: a distinct, increasing observedAt and one number. */
export function payloadOf(n: number, stepMs = 1): string {
  return JSON.stringify({ observedAt: new Date(T0 + n * stepMs).toISOString(), temperature: 20 + (n % 100) / 10 });
}

/** Runs the load and returns what it measured; every client is disconnected when it resolves. */
export async function runMqttLoad(options: MqttLoadOptions): Promise<MqttLoadResult> {
  const url = `mqtt://127.0.0.1:${options.mqttPort}`;
  const clients: MqttClient[] = [];
  try {
    for (let i = 0; i < options.clients; i++) {
      clients.push(await connectAsync(url, { clientId: deviceIdOf(i), clean: true, reconnectPeriod: 0, protocolVersion: options.protocolVersion ?? 4 }));
    }
    return await drive(clients, options);
  } finally {
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)));
  }
}

async function drive(clients: readonly MqttClient[], options: MqttLoadOptions): Promise<MqttLoadResult> {
  const acked = clients.map(() => 0);
  const inflight = clients.map(() => 0);
  const sent = clients.map(() => options.firstMessage ?? 0);
  const latencies: number[] = [];
  let phase: 'warmup' | 'measure' | 'drain' = 'warmup';
  let measured = 0;
  let failed = 0;
  let firstError: string | undefined;
  let drained: (() => void) | undefined;

  const pump = (i: number): void => {
    const client = clients[i];
    if (client === undefined) return;
    const topic = `ngsi/default/${deviceIdOf(i)}/attrs`;
    while (phase !== 'drain' && (inflight[i] ?? 0) < options.window) {
      const n = sent[i] ?? 0;
      sent[i] = n + 1;
      inflight[i] = (inflight[i] ?? 0) + 1;
      const sentAt = performance.now();
      client.publish(topic, payloadOf(n, options.stepMs), { qos: 1 }, (err) => {
        inflight[i] = (inflight[i] ?? 0) - 1;
        if (err) {
          failed += 1;
          firstError ??= err.message;
        } else {
          acked[i] = (acked[i] ?? 0) + 1;
          if (phase === 'measure') {
            measured += 1;
            latencies.push(performance.now() - sentAt);
          }
        }
        if (phase === 'drain') {
          if (inflight.every((k) => k === 0)) drained?.();
        } else {
          pump(i);
        }
      });
    }
  };

  clients.forEach((_, i) => pump(i));
  await sleep(options.warmupMs);
  const bytesBefore = await readWriteBytes(options.pid);
  const cpuBefore = await readCpuMs(options.pid);
  const start = performance.now();
  phase = 'measure';
  await sleep(options.durationMs);
  phase = 'drain';
  const durationMs = performance.now() - start;
  const bytesAfter = await readWriteBytes(options.pid);
  const cpuAfter = await readCpuMs(options.pid);
  const isDrained = await new Promise<boolean>((resolve) => {
    if (inflight.every((k) => k === 0)) {
      resolve(true);
      return;
    }
    const timer = setTimeout(() => resolve(false), DRAIN_MAX_MS);
    drained = () => {
      clearTimeout(timer);
      resolve(true);
    };
  });
  if (!isDrained) {
    const left = inflight.reduce((a, b) => a + b, 0);
    failed += left;
    firstError ??= `${left} publishes had no PUBACK ${DRAIN_MAX_MS} ms after the load stopped`;
  }
  const sorted = Float64Array.from(latencies).sort();
  return {
    ackedPerDevice: acked, failed, firstError, measured, durationMs,
    p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99),
    writeBytes: bytesBefore === undefined || bytesAfter === undefined ? undefined : bytesAfter - bytesBefore,
    cpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
  };
}
