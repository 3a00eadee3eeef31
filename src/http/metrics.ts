// The broker's Prometheus metrics (prom-client, one registry per broker): HTTP requests by route
// pattern, notifications, MQTT ingestion, storage, Node's process metrics, and gauges added later.

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from '../lib/index.js';

/** Totals since start, and the queue now (the notifier's stats). */
export interface NotificationStats {
  queued: number;
  sent: number;
  /** Failed delivery attempts; a notification retried three times counts three. */
  failed: number;
  /** Given up after the last attempt. */
  dropped: number;
  /** Dropped because the queue was full. */
  overflowed: number;
  pending: number;
}

/** Measurements published on the embedded broker (totals since start) and its clients now. */
export interface MqttStats {
  received: number;
  stored: number;
  dropped: Readonly<Record<string, number>>;
  connectedClients: number;
}

export interface StorageStats {
  liveEntities: number;
  /** An upper-bound estimate (see Store.estimateHistoryRows). */
  historyRows: number;
  dbBytes: number;
  walBytes: number;
}

export interface MetricSample {
  labels?: Readonly<Record<string, string>>;
  value: number;
}

/**
 * A metric another module adds (a queue depth, say), read at each scrape. Its name follows the
 * Prometheus conventions: `edgeld_` prefix, base units, `_total` for a counter.
 */
export interface MetricsSource {
  name: string;
  help: string;
  /** `gauge` (default), or `counter` for a total that only grows. */
  type?: 'gauge' | 'counter';
  labelNames?: readonly string[];
  /** The value now: one number, or one sample per label set. Must be cheap and never block. */
  collect(): number | readonly MetricSample[];
}

export interface MetricsDeps {
  notifications(): NotificationStats;
  mqtt(): MqttStats;
  storage(): StorageStats;
  sources?: readonly MetricsSource[];
  log: Logger;
}

export interface Metrics {
  /** One answered request: `route` is the route pattern, never the raw path. */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** The exposition in the Prometheus text format. */
  render(): Promise<string>;
  readonly contentType: string;
}

/** Request latencies from a fast read (a millisecond) to a slow temporal query on a Pi (seconds). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function createMetrics(deps: MetricsDeps): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const counter = (name: string, help: string, labelNames: readonly string[] = []): Counter =>
    new Counter({ name, help, labelNames, registers });
  const gauge = (name: string, help: string): Gauge => new Gauge({ name, help, registers });

  const requests = counter('edgeld_http_requests_total', 'HTTP requests answered, by method, route pattern and status', ['method', 'route', 'status']);
  const latency = new Histogram({
    name: 'edgeld_http_request_duration_seconds', help: 'Time to answer an HTTP request, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'], buckets: LATENCY_BUCKETS, registers,
  });
  const queued = counter('edgeld_notifications_queued_total', 'Notifications queued for delivery');
  const sent = counter('edgeld_notifications_sent_total', 'Notifications delivered');
  const failed = counter('edgeld_notifications_failed_total', 'Notification delivery attempts that failed (each retry counts)');
  const dropped = counter('edgeld_notifications_dropped_total', 'Notifications given up: after the last attempt, or because the queue was full', ['reason']);
  const pending = gauge('edgeld_notifications_pending', 'Notifications waiting for delivery');
  const received = counter('edgeld_mqtt_measurements_received_total', 'Measurement messages published on the embedded MQTT broker');
  const stored = counter('edgeld_mqtt_measurements_stored_total', 'Measurement messages stored');
  const discarded = counter('edgeld_mqtt_measurements_dropped_total', 'Measurement messages dropped, by reason', ['reason']);
  const clients = gauge('edgeld_mqtt_connected_clients', 'Clients connected to the embedded MQTT broker');
  const entities = gauge('edgeld_entities', 'Live (not deleted) entities, over all tenants');
  const historyRows = gauge('edgeld_history_rows', 'Attribute history rows (an upper-bound estimate from row ids; exact until rows are deleted inside a bucket)');
  const dbBytes = gauge('edgeld_database_size_bytes', 'Size of the SQLite database (pages in use)');
  const walBytes = gauge('edgeld_database_wal_size_bytes', 'Size of the SQLite write-ahead log file');
  for (const source of deps.sources ?? []) addSource(registry, source, deps.log);

  const setTotal = (c: Counter, value: number, labels?: Record<string, string>): void => {
    if (labels) c.inc(labels, value);
    else c.inc(value);
  };
  const snapshot = (): void => {
    const n = deps.notifications();
    for (const c of [queued, sent, failed, dropped, received, stored, discarded]) c.reset();
    setTotal(queued, n.queued);
    setTotal(sent, n.sent);
    setTotal(failed, n.failed);
    setTotal(dropped, n.dropped, { reason: 'max_attempts' });
    setTotal(dropped, n.overflowed, { reason: 'queue_full' });
    pending.set(n.pending);
    const m = deps.mqtt();
    setTotal(received, m.received);
    setTotal(stored, m.stored);
    for (const [reason, count] of Object.entries(m.dropped)) setTotal(discarded, count, { reason });
    clients.set(m.connectedClients);
    const s = deps.storage();
    entities.set(s.liveEntities);
    historyRows.set(s.historyRows);
    dbBytes.set(s.dbBytes);
    walBytes.set(s.walBytes);
  };

  let hasDefaults = false;
  return {
    observeRequest(method, route, status, seconds) {
      const labels = { method: METHODS.has(method) ? method : 'other', route, status: String(status) };
      requests.inc(labels);
      latency.observe(labels, seconds);
    },
    async render() {
      // NOTE: the process metrics start at the first scrape: prom-client cannot stop the event-loop
      // monitor and GC observer it starts, so a broker never scraped (most tests) starts none.
      // Nothing is lost: CPU and memory are read when scraped, and lag figures cover the time since
      // the previous scrape.
      if (!hasDefaults) {
        collectDefaultMetrics({ register: registry });
        hasDefaults = true;
      }
      snapshot();
      return registry.metrics();
    },
    contentType: registry.contentType,
  };
}

/** Registers a source's metric; a source that throws is logged and shows no sample. */
function addSource(registry: Registry, source: MetricsSource, log: Logger): void {
  const labelNames = source.labelNames ?? [];
  /** The samples now; undefined when the source failed (then the metric shows no sample, not a 0). */
  const read = (): readonly MetricSample[] | undefined => {
    try {
      const value = source.collect();
      return typeof value === 'number' ? [{ value }] : value;
    } catch (err) {
      log.warn('a metrics source failed', { metric: source.name, err });
      return undefined;
    }
  };
  /** Replaces a metric's samples with the source's; a failed read leaves none. */
  const refill = (metric: Counter | Gauge, put: (s: MetricSample) => void): void => {
    metric.reset();
    const samples = read();
    // NOTE: reset() leaves a 0 sample on a metric without labels; a failed read must show none.
    if (samples === undefined) metric.remove({});
    for (const s of samples ?? []) put(s);
  };
  const options = { name: source.name, help: source.help, labelNames, registers: [registry] };
  if (source.type === 'counter') {
    new Counter({
      ...options,
      collect() {
        refill(this, (s) => (s.labels ? this.inc(s.labels, s.value) : this.inc(s.value)));
      },
    });
    return;
  }
  new Gauge({
    ...options,
    collect() {
      refill(this, (s) => (s.labels ? this.set(s.labels, s.value) : this.set(s.value)));
    },
  });
}
