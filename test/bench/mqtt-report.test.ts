// The MQTT ingestion report: rates and bytes per message from the measured window, targets, and the
// check of stored messages against PUBACKs.

import { describe, expect, it } from 'vitest';
import type { MqttLoadResult } from '../../bench/mqtt-load.js';
import { payloadOf } from '../../bench/mqtt-load.js';
import { describeMqttTargets, mqttErrors, mqttRows, type MqttMeasurement } from '../../bench/mqtt-report.js';

function load(patch: Partial<MqttLoadResult>): MqttLoadResult {
  return {
    ackedPerDevice: [600, 400], failed: 0, firstError: undefined, measured: 600, durationMs: 2000,
    p50Ms: 4, p99Ms: 12, writeBytes: 600 * 1024, cpuMs: 60, ...patch,
  };
}

const broker: MqttMeasurement = { load: load({}), rss: 100 * 1024 * 1024, stored: 1000 };
const ceiling: MqttMeasurement = { load: load({ measured: 2400, writeBytes: 2400 * 512 }), rss: 50 * 1024 * 1024, stored: 3000 };

describe('mqttRows', () => {
  it('reports messages per second of the window, latency, CPU and bytes per message and RSS beside the ceiling', () => {
    const rows = mqttRows(broker, ceiling);
    const by = (key: string) => rows.find((r) => r.key === key);
    expect(by('mqtt.ingest')).toMatchObject({ unit: 'msg/s', value: 300, ceiling: 1200, ratio: 0.25 });
    expect(by('mqtt.ingest.p99')).toMatchObject({ value: 12, ceiling: 12, ratio: 1 });
    expect(by('mqtt.ingest.cpu')).toMatchObject({ unit: 'µs/msg', value: 100, ceiling: 25, ratio: 4 });
    expect(by('mqtt.ingest.disk-write')).toMatchObject({ unit: 'bytes/msg', value: 1024, ceiling: 512, ratio: 2 });
    expect(by('mqtt.ingest.rss')).toMatchObject({ value: 100, ceiling: null, ratio: null });
  });

  it('leaves a column null when a figure is missing', () => {
    const rows = mqttRows({ ...broker, load: load({ writeBytes: undefined }) }, undefined);
    expect(rows.find((r) => r.key === 'mqtt.ingest.disk-write')).toMatchObject({ value: null, ceiling: null, ratio: null });
    expect(describeMqttTargets(rows)).toEqual([
      'target mqtt.ingest ratio >= 0.5: not measured',
      'target mqtt.ingest.disk-write <= 2048 bytes/msg: not measured',
    ]);
  });
});

describe('describeMqttTargets', () => {
  it('says whether the rate ratio and the bytes per message meet their targets', () => {
    expect(describeMqttTargets(mqttRows(broker, ceiling))).toEqual([
      'target mqtt.ingest ratio >= 0.5: 0.25, MISSED',
      'target mqtt.ingest.disk-write <= 2048 bytes/msg: 1024, met',
    ]);
  });

  it('names the rows and targets of the MQTT 5 load mqtt5.*', () => {
    const rows = mqttRows(broker, ceiling, 'mqtt5');
    expect(rows.map((r) => r.key)).toEqual(mqttRows(broker, ceiling).map((r) => r.key.replace(/^mqtt\./, 'mqtt5.')));
    expect(rows.find((r) => r.key === 'mqtt5.ingest')).toMatchObject({ ratio: 0.25 });
    expect(describeMqttTargets(rows, 'mqtt5')[0]).toBe('target mqtt5.ingest ratio >= 0.5: 0.25, MISSED');
  });
});

describe('mqttErrors', () => {
  it('is empty when every acknowledged message was stored', () => {
    expect(mqttErrors('broker', broker)).toEqual([]);
  });

  it('flags a stored count that differs from the PUBACKs, failed publishes and an uncounted target', () => {
    expect(mqttErrors('broker', { ...broker, stored: 999 })).toEqual(['broker mqtt.ingest: 999 messages stored but 1000 PUBACKs received']);
    expect(mqttErrors('broker', { ...broker, load: load({ failed: 2, firstError: 'timeout' }), stored: undefined })).toEqual([
      'broker mqtt.ingest: 2 publishes failed: timeout',
      'broker mqtt.ingest: the stored messages could not be counted',
    ]);
  });
});

describe('payloadOf', () => {
  it('gives each message of a device a later observedAt', () => {
    const at = (n: number) => Date.parse((JSON.parse(payloadOf(n)) as { observedAt: string }).observedAt);
    expect(at(1) - at(0)).toBe(1);
    expect(at(5_000)).toBeGreaterThan(at(4_999));
  });

  it('spaces the observedAt of a device\'s messages by the step asked for', () => {
    const at = (n: number) => Date.parse((JSON.parse(payloadOf(n, 5_000)) as { observedAt: string }).observedAt);
    expect(at(3) - at(0)).toBe(15_000);
  });
});
