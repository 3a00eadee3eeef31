// Property-based fuzzing of MQTT ingestion through a real client on loopback: whatever the topic and
// payload, every QoS 1 publish gets its PUBACK, the connection stays up, nothing fails unexpectedly
// (no measurement counted as `failed`), every message is either stored or dropped with a reason, and
// the broker stays healthy. FUZZ_MQTT_RUNS, else FUZZ_RUNS, sets the number of messages (default 1,000).

import fc from 'fast-check';
import { fuzzRuns } from '../helpers/fuzz-runs.js';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { connectClient, publishAcked } from '../helpers/mqtt.js';

const RUNS = fuzzRuns(1_000, { specific: 'FUZZ_MQTT_RUNS' });

let b: TestBroker;
let client: MqttClient;
let closed = false;
beforeAll(async () => {
  b = await startTestBroker({ config: { server: { port: 0, host: '127.0.0.1' }, contexts: { allowRemote: false, allowedHosts: '' }, mqtt: { port: 0, host: '127.0.0.1', maxPayload: 4_096 } } });
  await b.broker.listen();
  client = await connectClient(`mqtt://127.0.0.1:${b.broker.mqttPort}`);
  client.on('close', () => (closed = true));
});
afterAll(async () => {
  await client.endAsync();
  await b.close();
});

const text = fc.string({ unit: 'grapheme', maxLength: 20 });
/** A topic level: valid names, near misses and junk, never the wildcards + and # (a protocol error). */
const level = fc.oneof(
  fc.constantFrom('default', 't1', 'meter1', 'dev-2', 'x'.repeat(300), '', ' ', '..', '%20', 'urn:ngsi-ld:x', 'Ⅻ', '\u0000'),
  text,
).map((s) => s.replace(/[+#]/g, '_'));
const mostly = (valid: fc.Arbitrary<string>): fc.Arbitrary<string> => fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: level, weight: 1 });
const tenant = mostly(fc.constantFrom('default', 't1', 'site_2'));
const device = mostly(fc.constantFrom('meter1', 'dev-2', 'd3', 'urn-x'));
const attrName = mostly(fc.constantFrom('temperature', 'energy', 'observedAt', 'location'));
const topic = fc.oneof(
  { arbitrary: fc.tuple(tenant, device).map(([t, d]) => `ngsi/${t}/${d}/attrs`), weight: 4 },
  { arbitrary: fc.tuple(tenant, device, attrName).map(([t, d, a]) => `ngsi/${t}/${d}/attrs/${a}`), weight: 3 },
  { arbitrary: fc.tuple(tenant, device).map(([t, d]) => `ngsi/${t}/${d}/status`), weight: 1 },
  { arbitrary: fc.array(level, { minLength: 1, maxLength: 6 }).map((levels) => ['ngsi', ...levels].join('/')), weight: 1 },
  { arbitrary: fc.array(level, { minLength: 1, maxLength: 4 }).map((levels) => levels.join('/')), weight: 1 },
).filter((t) => t.length > 0 && Buffer.byteLength(t) < 65_535);

const measurementValue = fc.oneof(
  fc.double(), fc.integer(), fc.boolean(), fc.constant(null), text, fc.jsonValue({ maxDepth: 3 }),
  fc.record({ type: fc.constantFrom('Point', 'Polygon', 'x'), coordinates: fc.array(fc.double(), { maxLength: 3 }) }),
  fc.record({ type: fc.constantFrom('Property', 'Relationship', 'GeoProperty'), value: fc.jsonValue({ maxDepth: 2 }), object: text }, { requiredKeys: [] }),
);
const observedAt = fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.constantFrom('2026-13-01T00:00:00Z', 'now', '', '1e999'), fc.integer().map(String));
const payload = fc.oneof(
  fc.dictionary(fc.oneof(fc.constantFrom('temperature', 'energy', 'observedAt', 'id', 'type', '@context', 'location', 'a.b', ''), text), measurementValue, { maxKeys: 5 })
    .chain((m) => fc.option(observedAt, { nil: undefined }).map((at) => JSON.stringify(at === undefined ? m : { ...m, observedAt: at }))),
  fc.array(fc.dictionary(fc.constantFrom('temperature', 'observedAt', 'x'), measurementValue, { maxKeys: 3 }), { maxLength: 4 }).map((a) => JSON.stringify(a)),
  fc.jsonValue({ maxDepth: 8 }).map((v) => JSON.stringify(v)),
  fc.constantFrom('online', 'offline', '', '{', '[]', 'null', '1e999', '"\\ud800"', '{"a":1}{"b":2}', 'x'.repeat(5_000)),
  fc.uint8Array({ maxLength: 256 }).map((a) => Buffer.from(a)),
);

describe('fuzzed MQTT publishes', () => {
  it(`are each acknowledged and stored or dropped with a reason, never failing (${RUNS} messages)`, async () => {
    const before = b.broker.mqttIngest.stats();
    let measurements = 0;
    await fc.assert(fc.asyncProperty(topic, payload, async (t, p) => {
      // Every message under ngsi/ is a measurement: stored, or dropped with a reason (a malformed topic included).
      if (t.startsWith('ngsi/')) measurements++;
      await publishAcked(client, t, p, { qos: 1 });
      expect(closed, `the broker closed the connection after ${t}`).toBe(false);
    }), { numRuns: RUNS });
    const after = b.broker.mqttIngest.stats();
    const dropped = Object.values(after.dropped).reduce((n, k) => n + k, 0) - Object.values(before.dropped).reduce((n, k) => n + k, 0);
    expect(after.dropped.failed).toBe(0);
    // Not vacuous: some messages got through to the store, and many were dropped for a reason.
    expect(after.stored - before.stored).toBeGreaterThan(0);
    expect(dropped).toBeGreaterThan(RUNS / 10);
    expect(after.stored - before.stored + dropped).toBe(after.received - before.received);
    expect(after.received - before.received).toBe(measurements);
    expect((await b.request('GET', '/health')).status).toBe(200);
  }, 60_000 + RUNS * 20);
});
