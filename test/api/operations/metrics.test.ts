// GET /metrics through the real app: the Prometheus text format with HTTP requests by route pattern
// and status, notification and MQTT counters moved by real deliveries and publishes, storage gauges,
// Node's process metrics, no token needed with authentication on, and 404 when turned off.

import { afterEach, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { startTestBroker, tempDir, type TestBroker } from '../../helpers/broker.js';
import { startAuthBroker } from '../../helpers/auth.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';
import { connectClient, mqttVersion, publishAcked } from '../../helpers/mqtt.js';
import { parseExposition, type Exposition } from '../../helpers/metrics.js';

const E = '/ngsi-ld/v1/entities';
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
const room = (id: string, value = 20) => ({ id, type: 'Room', temperature: { type: 'Property', value } });

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function broker(opts: Parameters<typeof startTestBroker>[0] = {}): Promise<TestBroker> {
  const b = await startTestBroker(opts);
  cleanups.push(() => b.close());
  return b;
}

async function scrape(b: TestBroker): Promise<Exposition> {
  const res = await b.request('GET', '/metrics');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(res.text);
}

describe('GET /metrics: HTTP requests', () => {
  it('counts requests by method, route pattern and status, never by raw path', async () => {
    const b = await broker();
    expect((await b.request('POST', E, { body: room('urn:ngsi-ld:Room:m1') })).status).toBe(201);
    expect((await b.request('GET', `${E}/urn:ngsi-ld:Room:m1`)).status).toBe(200);
    expect((await b.request('GET', `${E}/urn:ngsi-ld:Room:m1`)).status).toBe(200);
    expect((await b.request('GET', `${E}/urn:ngsi-ld:Room:missing`)).status).toBe(404);
    expect((await b.request('GET', '/no/such/path/12345')).status).toBe(404);
    const m = await scrape(b);
    expect(m.types.get('edgeld_http_requests_total')).toBe('counter');
    expect(m.value('edgeld_http_requests_total', { method: 'POST', route: E, status: '201' })).toBe(1);
    expect(m.value('edgeld_http_requests_total', { method: 'GET', route: `${E}/:id`, status: '200' })).toBe(2);
    expect(m.value('edgeld_http_requests_total', { method: 'GET', route: `${E}/:id`, status: '404' })).toBe(1);
    expect(m.value('edgeld_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    const routes = m.samples('edgeld_http_requests_total').map((s) => s.labels['route']);
    expect(routes.filter((r) => r?.includes('urn:') || r?.includes('12345'))).toEqual([]);
  });

  it('keeps a latency histogram with buckets per route and status', async () => {
    const b = await broker();
    await b.request('GET', `${E}?type=Room`);
    const m = await scrape(b);
    const labels = { method: 'GET', route: E, status: '200' };
    expect(m.types.get('edgeld_http_request_duration_seconds')).toBe('histogram');
    const buckets = m.samples('edgeld_http_request_duration_seconds_bucket').filter((s) => s.labels['route'] === E);
    expect(buckets.length).toBeGreaterThan(5);
    expect(m.value('edgeld_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(1);
    expect(m.value('edgeld_http_request_duration_seconds_count', labels)).toBe(1);
    expect(m.value('edgeld_http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
  });
});

describe('GET /metrics: notifications', () => {
  let receiver: Receiver;
  const subscribe = async (b: TestBroker): Promise<void> => {
    const res = await b.request('POST', '/ngsi-ld/v1/subscriptions', {
      headers: { 'Content-Type': 'application/ld+json' },
      body: {
        id: 'urn:ngsi-ld:Subscription:metrics', type: 'Subscription', entities: [{ type: 'Room' }],
        notification: { endpoint: { uri: receiver.url(), accept: 'application/json' } }, '@context': CORE,
      },
    });
    expect(res.status, res.text).toBe(201);
  };

  it('counts notifications sent, failed attempts and those given up', async () => {
    receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const b = await broker({ config: { notifications: { retryBase: 1, retryMax: 2, maxAttempts: 2, timeout: 2_000 } } });
    await subscribe(b);
    await b.request('POST', E, { body: room('urn:ngsi-ld:Room:n1') });
    await receiver.waitFor(1);
    await b.broker.notifier.idle();
    let m = await scrape(b);
    expect(m.value('edgeld_notifications_sent_total')).toBe(1);
    expect(m.value('edgeld_notifications_queued_total')).toBe(1);
    expect(m.value('edgeld_notifications_failed_total')).toBe(0);
    expect(m.value('edgeld_notifications_pending')).toBe(0);

    receiver.respondWith(500);
    await b.request('POST', E, { body: room('urn:ngsi-ld:Room:n2') });
    await receiver.waitFor(3);
    await b.broker.notifier.idle();
    m = await scrape(b);
    expect(m.value('edgeld_notifications_sent_total')).toBe(1);
    expect(m.value('edgeld_notifications_failed_total')).toBe(2);
    expect(m.value('edgeld_notifications_dropped_total', { reason: 'max_attempts' })).toBe(1);
    expect(m.value('edgeld_notifications_dropped_total', { reason: 'queue_full' })).toBe(0);
  });
});

describe('GET /metrics: MQTT', () => {
  let client: MqttClient;

  it('counts measurements received, stored and dropped by reason, and connected clients', async () => {
    const b = await broker({ config: { server: { port: 0, host: '127.0.0.1' } } });
    await b.broker.listen();
    client = await connectClient(`mqtt://127.0.0.1:${b.broker.mqttPort}`);
    cleanups.push(() => client.endAsync());
    // QoS 1: PUBACK comes once the message is stored or dropped.
    await client.publishAsync('ngsi/default/m1/attrs', JSON.stringify({ temperature: 21 }), { qos: 1 });
    // Refused: acknowledged at MQTT 3.1.1 (no negative acknowledgement), PUBACK 0x99 at MQTT 5.
    expect(await publishAcked(client, 'ngsi/default/m1/attrs', 'not json', { qos: 1 })).toBe(mqttVersion() === 5 ? 0x99 : 0);
    const m = await scrape(b);
    expect(m.value('edgeld_mqtt_measurements_received_total')).toBe(2);
    expect(m.value('edgeld_mqtt_measurements_stored_total')).toBe(1);
    expect(m.value('edgeld_mqtt_measurements_dropped_total', { reason: 'not-json' })).toBe(1);
    expect(m.value('edgeld_mqtt_measurements_dropped_total', { reason: 'shape' })).toBe(0);
    expect(m.value('edgeld_mqtt_connected_clients')).toBe(1);
  });
});

describe('GET /metrics: storage and process', () => {
  it('reports live entities, history rows, and the database and WAL sizes of a file database', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const b = await broker({ dbPath: `${dir.path}/edgeld.db` });
    for (const n of [1, 2, 3]) expect((await b.request('POST', E, { body: room(`urn:ngsi-ld:Room:s${n}`) })).status).toBe(201);
    for (const value of [21, 22]) {
      expect((await b.request('PATCH', `${E}/urn:ngsi-ld:Room:s1/attrs`, { body: { temperature: { type: 'Property', value } } })).status).toBe(204);
    }
    expect((await b.request('DELETE', `${E}/urn:ngsi-ld:Room:s3`)).status).toBe(204);
    const m = await scrape(b);
    expect(m.value('edgeld_entities')).toBe(2);
    // One row per created attribute and per update; the deleted entity's rows are kept for temporal reads.
    const rows = ['s1', 's2', 's3'].reduce((sum, s) => sum + b.broker.store.history.listForEntity({ tenant: '' }, `urn:ngsi-ld:Room:${s}`,
      'https://uri.etsi.org/ngsi-ld/default-context/temperature').length, 0);
    expect(rows).toBeGreaterThanOrEqual(5);
    expect(m.value('edgeld_history_rows')).toBe(rows);
    const db = m.value('edgeld_database_size_bytes') ?? 0;
    expect(db % 4096).toBe(0);
    expect(db).toBeGreaterThan(4096);
    expect(db).toBeLessThan(64 * 1024 * 1024);
    expect(m.value('edgeld_database_wal_size_bytes')).toBeGreaterThan(0);
  });

  it('follows the live-entity count through creates, deletes and re-creates, and counts it again at start', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const dbPath = `${dir.path}/edgeld.db`;
    const first = await startTestBroker({ dbPath });
    const ids = [1, 2, 3, 4].map((n) => `urn:ngsi-ld:Room:c${n}`);
    expect((await first.request('POST', '/ngsi-ld/v1/entityOperations/create', { body: ids.map((id) => room(id)) })).status).toBe(201);
    expect((await first.request('POST', '/ngsi-ld/v1/entityOperations/delete', { body: ids.slice(0, 3) })).status).toBe(204);
    expect((await first.request('POST', E, { body: room(ids[0]!) })).status).toBe(201);
    expect((await first.request('DELETE', `${E}/urn:ngsi-ld:Room:none`)).status).toBe(404);
    expect((await scrape(first)).value('edgeld_entities')).toBe(2);
    await first.close();
    const second = await broker({ dbPath });
    expect((await scrape(second)).value('edgeld_entities')).toBe(2);
  });

  it('includes Node\'s process metrics: resident memory, CPU, start time, event-loop lag, heap', async () => {
    const b = await broker();
    const m = await scrape(b);
    expect(m.value('process_resident_memory_bytes')).toBeGreaterThan(0);
    // contrib/prometheus/alerts.yml and contrib/grafana/edgeld.json read these three.
    expect(m.types.get('process_cpu_seconds_total')).toBe('counter');
    expect(m.value('process_cpu_seconds_total')).toBeGreaterThan(0);
    const started = m.value('process_start_time_seconds') ?? 0;
    expect(Math.abs(started - (Date.now() / 1000 - process.uptime()))).toBeLessThan(5);
    expect(m.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
    expect(m.value('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    // A second scrape registers nothing twice.
    expect((await b.request('GET', '/metrics')).status).toBe(200);
  });
});

describe('GET /metrics: access and configuration', () => {
  it('needs no token with authentication on, while the API does', async () => {
    const b = await startAuthBroker();
    cleanups.push(() => b.close());
    expect((await b.request('GET', `${E}?type=Room`)).status).toBe(401);
    const res = await b.request('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(parseExposition(res.text).value('edgeld_http_requests_total', { method: 'GET', route: E, status: '401' })).toBe(1);
  });

  it('answers 404 when metrics.enabled is false', async () => {
    const b = await broker({ config: { metrics: { enabled: false } } });
    expect((await b.request('GET', '/metrics')).status).toBe(404);
    expect((await b.request('GET', '/health')).status).toBe(200);
  });
});
