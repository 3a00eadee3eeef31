// contrib/prometheus and contrib/grafana against the real thing: a Prometheus (Debian package
// prometheus) scrapes a running edgeld process every second with alerts.yml loaded; the test reads
// `up` and edgeld's metrics back through Prometheus's HTTP API, every alert evaluates without error,
// every metric the alerts and the dashboard name is in edgeld's /metrics, Prometheus answers every
// dashboard query, and the dashboard's Infinity panels' URLs answer from edgeld in the shape their
// jq selectors and columns expect.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/broker.js';
import { startFakeCloud, waitUntil, type FakeCloud } from '../helpers/fake-cloud.js';
import { parseExposition } from '../helpers/metrics.js';
import { startBrokerProcess, within, type BrokerProcess } from '../helpers/process.js';
import { startPrometheus, type PrometheusProcess } from '../helpers/prometheus.js';
import { metricNames } from '../helpers/promql.js';

const ALERTS = fileURLToPath(new URL('../../contrib/prometheus/alerts.yml', import.meta.url));
const DASHBOARD = fileURLToPath(new URL('../../contrib/grafana/edgeld.json', import.meta.url));
/** Series Prometheus makes itself for each target, not in any /metrics. */
const SYNTHETIC = new Set(['up']);
const KITCHEN = 'urn:ngsi-ld:Room:kitchen';

/* eslint-disable @typescript-eslint/no-explicit-any -- test convenience: the dashboard is walked as the JSON it is */
const dashboard: any = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
const panels: any[] = dashboard.panels;
const promTargets = (): Array<{ panel: string; expr: string }> =>
  panels.flatMap((p) => (p.targets ?? []).filter((t: any) => typeof t.expr === 'string').map((t: any) => ({ panel: p.title, expr: t.expr })));
const infinityTargets = (): Array<{ panel: string; target: any }> =>
  panels.flatMap((p) => (p.targets ?? []).filter((t: any) => t.datasource?.type === 'yesoreyeram-infinity-datasource').map((t: any) => ({ panel: p.title, target: t })));
/* eslint-enable @typescript-eslint/no-explicit-any */

/** A dashboard query as Grafana sends it: every gateway, the rate interval of a 1 s scrape. */
const asSent = (expr: string): string => expr.replaceAll('$instance', '.*').replaceAll('$__rate_interval', '1m');

const dir = tempDir('edgeld-prometheus-');
let cloud: FakeCloud;
let edge: BrokerProcess;
let prometheus: PrometheusProcess;
const now = Date.now();

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(edge.base + path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });
}

beforeAll(async () => {
  cloud = await startFakeCloud();
  // Federation on (to a fake cloud), so that the federation metrics exist as on a gateway forwarding upstream.
  edge = await startBrokerProcess({ STORAGE_DIR: `${dir.path}/edge`, FEDERATION_UPSTREAM_URL: cloud.url });
  const at = (hoursAgo: number): string => new Date(now - hoursAgo * 3_600_000).toISOString();
  expect((await call('POST', '/ngsi-ld/v1/entities', { id: KITCHEN, type: 'Room', temperature: { type: 'Property', value: 19.5, observedAt: at(3) } })).status).toBe(201);
  for (const [value, hoursAgo] of [[20, 2], [21.5, 1.5], [23, 1]] as const) {
    expect((await call('PATCH', `/ngsi-ld/v1/entities/${KITCHEN}/attrs`, { temperature: { type: 'Property', value, observedAt: at(hoursAgo) } })).status).toBe(204);
  }
  prometheus = await startPrometheus(`${dir.path}/prometheus`, [
    'global:', '  scrape_interval: 1s', '  evaluation_interval: 1s',
    'rule_files:', `  - ${JSON.stringify(ALERTS)}`,
    'scrape_configs:', '  - job_name: edgeld', '    static_configs:', `      - targets: ['127.0.0.1:${edge.port}']`, '',
  ].join('\n'));
}, 60_000);

afterAll(async () => {
  await prometheus?.stop();
  if (edge) {
    edge.child.kill('SIGKILL');
    await within(edge.exited, 5_000, 'edgeld exit');
  }
  await cloud?.close();
  dir.remove();
});

describe('a real Prometheus scraping a running edgeld', () => {
  it('reads up = 1 and the entity count back through its HTTP API', async () => {
    let up: number | undefined;
    await waitUntil(async () => {
      up = (await prometheus.query('up{job="edgeld"}'))[0]?.value;
      return up === 1;
    }, 20_000, `up{job="edgeld"} = 1 (last ${up}); prometheus log:\n${prometheus.stderr()}`);
    const entities = await prometheus.query('edgeld_entities{job="edgeld"}');
    expect(entities).toHaveLength(1);
    expect(entities[0]!.metric['instance']).toBe(`127.0.0.1:${edge.port}`);
    expect(entities[0]!.value).toBe(1);
    expect((await prometheus.query('process_resident_memory_bytes{job="edgeld"}'))[0]?.value).toBeGreaterThan(10 * 1024 * 1024);
    expect((await prometheus.query('edgeld_federation_outbox_depth{job="edgeld"}'))).toHaveLength(1);
  }, 30_000);

  it('evaluates every alert of alerts.yml without error, none firing on a healthy gateway', async () => {
    const expected = [...readFileSync(ALERTS, 'utf8').matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1]);
    type Rule = { name: string; type: string; health: string; state: string; lastEvaluation: string; lastError?: string };
    let rules: Rule[] = [];
    await waitUntil(async () => {
      const data = (await prometheus.api('/api/v1/rules')) as { groups: Array<{ rules: Rule[] }> }; // NOTE: the API's rules shape
      rules = data.groups.flatMap((g) => g.rules);
      return rules.length > 0 && rules.every((r) => r.health !== 'unknown' && !r.lastEvaluation.startsWith('0001'));
    }, 20_000, 'every rule evaluated once');
    expect(rules.map((r) => r.name).sort()).toEqual(expected.sort());
    for (const r of rules) {
      expect({ name: r.name, type: r.type, health: r.health, error: r.lastError ?? '' }).toEqual({ name: r.name, type: 'alerting', health: 'ok', error: '' });
      expect(r.state, r.name).not.toBe('firing');
    }
    expect(rules.find((r) => r.name === 'EdgeldDown')!.state).toBe('inactive');
  }, 30_000);

  it('finds in edgeld\'s /metrics every metric the alerts and the dashboard name', async () => {
    const data = (await prometheus.api('/api/v1/rules')) as { groups: Array<{ rules: Array<{ query: string }> }> }; // NOTE: the API's rules shape
    const alertExprs = data.groups.flatMap((g) => g.rules.map((r) => r.query));
    const variableExprs = dashboard.templating.list // eslint-disable-line @typescript-eslint/no-unsafe-assignment -- test convenience
      .filter((v: { type: string }) => v.type === 'query')
      .map((v: { definition: string }) => /^label_values\((.*),\s*\w+\)$/.exec(v.definition)![1]!);
    const named = new Map<string, string>();
    for (const expr of [...alertExprs, ...promTargets().map((t) => t.expr), ...variableExprs]) {
      for (const name of metricNames(expr)) named.set(name, expr);
    }
    const res = await fetch(`${edge.base}/metrics`);
    expect(res.status).toBe(200);
    const families = parseExposition(await res.text()).types;
    /** A family's samples: a histogram's `_bucket`, `_sum` and `_count` too. */
    const exposed = (name: string): boolean => families.has(name)
      || ['_bucket', '_sum', '_count'].some((s) => name.endsWith(s) && families.get(name.slice(0, -s.length)) === 'histogram');
    const missing = [...named].filter(([name]) => !SYNTHETIC.has(name) && !exposed(name));
    expect(missing).toEqual([]);
    // The parse found what the expressions hold (a parser that finds nothing would pass the check above).
    expect([...named.keys()]).toEqual(expect.arrayContaining([
      'up', 'edgeld_database_wal_size_bytes', 'edgeld_federation_outbox_depth', 'edgeld_notifications_failed_total',
      'edgeld_storage_used_bytes', 'edgeld_storage_max_bytes', 'process_resident_memory_bytes', 'process_start_time_seconds',
      'process_cpu_seconds_total', 'nodejs_heap_size_used_bytes', 'edgeld_http_request_duration_seconds_bucket',
    ]));
    expect(named.size).toBeGreaterThan(25);
  });

  it('answers every dashboard query, and the up panel shows the gateway', async () => {
    const targets = promTargets();
    expect(targets.length).toBeGreaterThan(20);
    for (const { panel, expr } of targets) {
      await expect(prometheus.query(asSent(expr)), `${panel}: ${expr}`).resolves.toBeDefined();
    }
    const up = targets.find((t) => t.panel === 'Up')!;
    expect((await prometheus.query(asSent(up.expr))).map((s) => s.value)).toEqual([1]);
  });
});

describe('the dashboard\'s temporal API panels (Infinity)', () => {
  const variables = new Map<string, string>(dashboard.templating.list // eslint-disable-line @typescript-eslint/no-unsafe-argument -- test convenience
    .filter((v: { type: string }) => v.type === 'textbox').map((v: { name: string; current: { value: string } }) => [v.name, v.current.value]));
  /** Grafana's interpolation of the variables these URLs use, over the dashboard's default range (24 h). */
  const interpolate = (text: string): string => text.replace(/\$\{([\w]+)(?::([\w:]+))?\}/g, (whole, name: string, format: string | undefined) => {
    if (name === '__from' && format === 'date:iso') return new Date(now - 24 * 3_600_000).toISOString();
    if (name === '__to' && format === 'date:iso') return new Date(now + 60_000).toISOString();
    const value = variables.get(name);
    if (value === undefined) throw new Error(`no value for ${whole}`);
    if (format === undefined) return value;
    if (format === 'percentencode') return encodeURIComponent(value);
    throw new Error(`format ${format} of ${whole}`);
  });

  it('uses the variables it declares, over three panels', () => {
    expect(dashboard.__inputs.map((i: { name: string; pluginId: string }) => `${i.name}:${i.pluginId}`)) // eslint-disable-line @typescript-eslint/no-unsafe-call -- test convenience
      .toEqual(['DS_PROMETHEUS:prometheus', 'DS_INFINITY:yesoreyeram-infinity-datasource']);
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(infinityTargets().map((t) => t.target.url as string)).toEqual([
      expect.stringContaining('options=temporalValues'), expect.stringContaining('options=aggregatedValues'), expect.stringContaining('/ngsi-ld/v1/entities?'),
    ]);
  });

  it('is importable: every panel on an input data source, unique ids, a 24-column grid without overlaps', () => {
    const inputs = new Set((dashboard.__inputs as Array<{ name: string }>).map((i) => '${' + i.name + '}'));
    const cells = new Set<string>();
    const ids = new Set<number>();
    for (const p of panels) {
      expect(ids.has(p.id as number), `panel id ${p.id}`).toBe(false);
      ids.add(p.id as number);
      const { x, y, w, h } = p.gridPos as { x: number; y: number; w: number; h: number };
      expect(x + w, p.title as string).toBeLessThanOrEqual(24);
      for (let i = x; i < x + w; i++) {
        for (let j = y; j < y + h; j++) {
          expect(cells.has(`${i},${j}`), `${p.title} overlaps at ${i},${j}`).toBe(false);
          cells.add(`${i},${j}`);
        }
      }
      if (p.type === 'row') continue;
      expect(inputs.has(p.datasource.uid as string), p.title as string).toBe(true);
      for (const t of p.targets) expect(t.datasource, p.title as string).toEqual(p.datasource);
    }
    expect(dashboard.templating.list.find((v: { name: string }) => v.name === 'instance').datasource.uid).toBe('${DS_PROMETHEUS}');
  });

  it.each(infinityTargets())('$panel: its URL answers 200 from edgeld, in rows of its columns', async ({ target }) => {
    const headers = Object.fromEntries((target.url_options.headers as Array<{ key: string; value: string }>).map((h) => [h.key, h.value]));
    const res = await fetch(edge.base + interpolate(target.url as string), { method: target.url_options.method as string, headers });
    const body = await res.text();
    expect(res.status, body).toBe(200);
    let rows: Array<Record<string, unknown>>;
    if (target.parser === 'jq-backend') {
      const jq = spawnSync('jq', ['-c', interpolate(target.root_selector as string)], { input: body, encoding: 'utf8', timeout: 10_000 });
      if (jq.error) throw new Error(`jq could not run (apt-get install jq): ${jq.error.message}`);
      expect(jq.stderr).toBe('');
      rows = JSON.parse(jq.stdout) as Array<Record<string, unknown>>;
    } else {
      expect(target.root_selector).toBe('');
      rows = JSON.parse(body) as Array<Record<string, unknown>>;
    }
    expect(Array.isArray(rows)).toBe(true);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      for (const column of target.columns as Array<{ selector: string; type: string }>) {
        const value = row[column.selector];
        if (column.type === 'number') expect(typeof value, column.selector).toBe('number');
        if (column.type === 'timestamp') expect(Number.isFinite(Date.parse(String(value))), column.selector).toBe(true);
      }
    }
    if (target.url.includes('temporalValues')) expect(rows.map((r) => r['value'])).toEqual([19.5, 20, 21.5, 23]);
    if (target.url.includes('aggregatedValues')) {
      expect(Math.min(...rows.map((r) => r['min'] as number))).toBe(19.5);
      expect(Math.max(...rows.map((r) => r['max'] as number))).toBe(23);
    }
    if (target.format === 'table') expect(rows.map((r) => r['id'])).toEqual([KITCHEN]);
  });
});
