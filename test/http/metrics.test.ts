// createMetrics: the stats functions it is given become counters and gauges at each scrape, and
// MetricsSources add gauges and counters (with labels) without touching the metrics module.

import { describe, expect, it } from 'vitest';
import { createMetrics, type MetricsDeps } from '../../src/http/index.js';
import { createLogger } from '../../src/lib/index.js';
import { parseExposition } from '../helpers/metrics.js';

function deps(overrides: Partial<MetricsDeps> = {}): MetricsDeps {
  return {
    notifications: () => ({ queued: 5, sent: 3, failed: 4, dropped: 1, overflowed: 2, pending: 7 }),
    mqtt: () => ({ received: 10, stored: 8, dropped: { 'not-json': 2 }, connectedClients: 3 }),
    storage: () => ({ liveEntities: 42, historyRows: 1_000, dbBytes: 8_192, walBytes: 4_096 }),
    log: createLogger('silent'),
    ...overrides,
  };
}

describe('createMetrics', () => {
  it('exposes the stats of each scrape under Prometheus names', async () => {
    let sent = 3;
    const metrics = createMetrics(deps({ notifications: () => ({ queued: 5, sent, failed: 4, dropped: 1, overflowed: 2, pending: 7 }) }));
    let m = parseExposition(await metrics.render());
    expect(m.value('edgeld_notifications_sent_total')).toBe(3);
    expect(m.value('edgeld_notifications_dropped_total', { reason: 'max_attempts' })).toBe(1);
    expect(m.value('edgeld_notifications_dropped_total', { reason: 'queue_full' })).toBe(2);
    expect(m.value('edgeld_notifications_pending')).toBe(7);
    expect(m.value('edgeld_mqtt_measurements_dropped_total', { reason: 'not-json' })).toBe(2);
    expect(m.value('edgeld_mqtt_connected_clients')).toBe(3);
    expect(m.value('edgeld_entities')).toBe(42);
    expect(m.value('edgeld_history_rows')).toBe(1_000);
    expect(m.value('edgeld_database_size_bytes')).toBe(8_192);
    expect(m.value('edgeld_database_wal_size_bytes')).toBe(4_096);
    sent = 9;
    m = parseExposition(await metrics.render());
    expect(m.value('edgeld_notifications_sent_total')).toBe(9);
  });

  it('labels an unknown HTTP method as other', async () => {
    const metrics = createMetrics(deps());
    metrics.observeRequest('BREW', '/x', 418, 0.01);
    const m = parseExposition(await metrics.render());
    expect(m.value('edgeld_http_requests_total', { method: 'other', route: '/x', status: '418' })).toBe(1);
  });

  it('adds the gauges and counters of MetricsSources, read at each scrape', async () => {
    let depth = 4;
    const lines: string[] = [];
    const metrics = createMetrics(deps({
      log: createLogger('warn', 'metrics', (l) => lines.push(l)),
      sources: [
        { name: 'edgeld_test_outbox_depth', help: 'Rows waiting', collect: () => depth },
        {
          name: 'edgeld_test_syncs_total', help: 'Syncs by outcome', type: 'counter', labelNames: ['outcome'],
          collect: () => [{ labels: { outcome: 'ok' }, value: 6 }, { labels: { outcome: 'failed' }, value: 1 }],
        },
        { name: 'edgeld_test_broken', help: 'Throws', collect: () => { throw new Error('boom'); } },
      ],
    }));
    let m = parseExposition(await metrics.render());
    expect(m.types.get('edgeld_test_outbox_depth')).toBe('gauge');
    expect(m.value('edgeld_test_outbox_depth')).toBe(4);
    expect(m.types.get('edgeld_test_syncs_total')).toBe('counter');
    expect(m.value('edgeld_test_syncs_total', { outcome: 'ok' })).toBe(6);
    expect(m.value('edgeld_test_syncs_total', { outcome: 'failed' })).toBe(1);
    expect(m.samples('edgeld_test_broken')).toEqual([]);
    expect(lines.some((l) => l.includes('a metrics source failed') && l.includes('edgeld_test_broken'))).toBe(true);
    depth = 0;
    m = parseExposition(await metrics.render());
    expect(m.value('edgeld_test_outbox_depth')).toBe(0);
  });

  it('refuses a source whose name is not a metric name', () => {
    expect(() => createMetrics(deps({ sources: [{ name: 'edgeld-bad name', help: 'x', collect: () => 1 }] }))).toThrow();
  });
});
