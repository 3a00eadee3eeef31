// The gateway's health at a glance: readiness (/ready), memory, database and WAL size, MQTT clients
// and measurements, notifications (parsed from /metrics), the federation outbox
// (/ngsi-ld/v1/federation/status, admin only) and the subscriptions with their delivery status.
// Refreshed every 10 s while shown: these are counters, not entity values.

import { ApiError } from './api.js';
import { h, show } from './dom.js';
import { formatAge, formatBytes, instantOf } from './format.js';
import { metricValue, parseMetrics, type Sample } from './metrics.js';
import { card, errorBox, type View, type ViewContext } from './view.js';

const REFRESH_MS = 10_000;

type Row = [string, string | Node];

const table = (rows: readonly Row[]): HTMLElement =>
  h('table', { class: 'kv' }, h('tbody', {}, ...rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v)))));

const count = (n: number | undefined): string => (n === undefined ? '–' : Math.round(n).toLocaleString('en'));

const ago = (iso: unknown): string => {
  const t = instantOf(iso);
  return t === undefined ? '–' : `${formatAge(Date.now() - t)} ago`;
};

function metricCards(m: readonly Sample[]): HTMLElement[] {
  const v = (name: string, labels: Record<string, string> = {}): number | undefined => metricValue(m, name, labels);
  return [
    card('Memory', table([['Resident (RSS)', formatBytes(v('process_resident_memory_bytes'))], ['JS heap used', formatBytes(v('nodejs_heap_size_used_bytes'))]])),
    card('Storage', table([
      ['Database', formatBytes(v('edgeld_database_size_bytes'))], ['WAL', formatBytes(v('edgeld_database_wal_size_bytes'))],
      ['Entities', count(v('edgeld_entities'))], ['History rows (≤)', count(v('edgeld_history_rows'))],
    ])),
    card('MQTT', table([
      ['Connected clients', count(v('edgeld_mqtt_connected_clients'))], ['Measurements received', count(v('edgeld_mqtt_measurements_received_total'))],
      ['Stored', count(v('edgeld_mqtt_measurements_stored_total'))], ['Dropped', count(v('edgeld_mqtt_measurements_dropped_total'))],
    ])),
    card('Notifications', table([
      ['Pending', count(v('edgeld_notifications_pending'))], ['Sent', count(v('edgeld_notifications_sent_total'))],
      ['Failed attempts', count(v('edgeld_notifications_failed_total'))], ['Given up', count(v('edgeld_notifications_dropped_total'))],
    ])),
  ];
}

/** The samples of /metrics, or the card that says why there are none. */
async function readMetrics(ctx: ViewContext): Promise<Sample[] | HTMLElement> {
  try {
    const res = await ctx.api.text('/metrics');
    if (res.status === 404) return card('Metrics', h('p', { class: 'muted' }, 'Metrics are off (metrics.enabled=false).'));
    if (res.status !== 200) return card('Metrics', errorBox(new ApiError(res.status, 'Metrics', res.text.slice(0, 200)), 'Metrics'));
    return parseMetrics(res.text);
  } catch (err) {
    return card('Metrics', errorBox(err, 'Metrics'));
  }
}

/** Uptime and event-loop lag, from Node's default metrics. */
function processRows(m: readonly Sample[] | undefined): Row[] {
  if (!m) return [];
  const started = metricValue(m, 'process_start_time_seconds');
  const lag = metricValue(m, 'nodejs_eventloop_lag_p99_seconds');
  return [
    ['Up for', started === undefined ? '–' : formatAge(Date.now() - started * 1000)],
    ['Event loop lag p99', lag === undefined ? '–' : `${(lag * 1000).toFixed(1)} ms`],
  ];
}

async function readyPart(ctx: ViewContext, m: readonly Sample[] | undefined): Promise<HTMLElement> {
  const res = await ctx.api.text('/ready');
  let waiting = '';
  try {
    const body = JSON.parse(res.text) as { notReady?: unknown }; // NOTE: the /ready body, read member by member
    if (Array.isArray(body.notReady)) waiting = body.notReady.join(', ');
  } catch {
    waiting = res.text.slice(0, 100);
  }
  const ok = res.status === 200;
  const ready = h('span', { class: ok ? 'ok' : 'bad' }, ok ? 'ready' : `not ready${waiting ? `: ${waiting}` : ''}`);
  return card('Broker', table([['Ready', ready], ...processRows(m)]));
}

/** The rows of the gateway's registration upstream (federation.register), none when it is off. */
function registrationRows(reg: Record<string, unknown> | null | undefined): Row[] {
  if (reg === null || reg === undefined) return [];
  const lastError = reg['lastError'] as { at?: unknown; message?: unknown } | null; // NOTE: null or { at, message }
  return [
    ['Registered upstream', reg['registered'] === true
      ? h('span', { class: 'ok' }, `yes, until ${String(reg['expiresAt'] ?? '')}`) : h('span', { class: 'bad' }, 'no')],
    ['Registration error', lastError ? h('span', { class: 'bad' }, `${ago(lastError.at)}: ${String(lastError.message ?? '')}`) : 'none'],
  ];
}

async function federationPart(ctx: ViewContext): Promise<HTMLElement> {
  try {
    const s = (await ctx.api.get('/federation/status')).body as Record<string, unknown>; // NOTE: the status object, read member by member
    const registration = registrationRows(s['registration'] as Record<string, unknown> | null | undefined); // NOTE: null or the registration object
    if (s['enabled'] !== true && registration.length === 0) return card('Federation', h('p', { class: 'muted' }, 'Off (no federation.upstream.url).'));
    if (s['enabled'] !== true) return card('Federation', table([['Upstream', String(s['url'] ?? '')], ['Changes', 'not forwarded (registration only)'], ...registration]));
    const lastError = s['lastError'] as { at?: unknown; message?: unknown } | null; // NOTE: null or { at, message }
    return card('Federation', table([
      ['Upstream', String(s['url'] ?? '')], ['Outbox depth', count(Number(s['outboxDepth']))],
      ['Oldest pending', ago(s['oldestPending'])], ['Last success', ago(s['lastSuccess'])],
      ['Last error', lastError ? h('span', { class: 'bad' }, `${ago(lastError.at)}: ${String(lastError.message ?? '')}`) : 'none'],
      ['Parked', count(Number(s['parked']))], ['Dropped', count(Number(s['dropped']))], ...registration,
    ]));
  } catch (err) {
    return card('Federation', errorBox(err, 'Federation status'));
  }
}

interface Sub { id: string; subscriptionName?: string; status?: string; entities?: unknown; notification?: Record<string, unknown> }

async function subscriptionsPart(ctx: ViewContext): Promise<HTMLElement> {
  try {
    const list = (await ctx.api.get('/subscriptions', { limit: '100' })).body;
    const subs = (Array.isArray(list) ? list : []) as Sub[]; // NOTE: the API answers an array of subscriptions
    if (subs.length === 0) return card('Subscriptions', h('p', { class: 'muted' }, 'None.'));
    const rows = subs.map((s) => {
      const n = s.notification ?? {};
      const endpoint = (n['endpoint'] ?? {}) as { uri?: unknown }; // NOTE: the endpoint object
      const failed = n['status'] === 'failed';
      return h('tr', { class: failed ? 'failed' : '' },
        h('td', {}, s.subscriptionName ?? '', h('div', { class: 'muted mono' }, s.id)),
        h('td', {}, h('span', { class: `pill ${s.status ?? ''}` }, s.status ?? '?')),
        h('td', { class: 'mono' }, String(endpoint.uri ?? '')),
        h('td', { class: failed ? 'bad' : '' }, String(n['status'] ?? '–')),
        h('td', { class: 'num' }, String(n['timesSent'] ?? 0)),
        h('td', {}, ago(n['lastNotification'])), h('td', { class: n['lastFailure'] ? 'bad' : '' }, ago(n['lastFailure'])));
    });
    return card('Subscriptions', h('div', { class: 'table-wrap' }, h('table', { class: 'grid subs' },
      h('thead', {}, h('tr', {}, ...['Subscription', 'Status', 'Endpoint', 'Delivery', 'Sent', 'Last notification', 'Last failure'].map((t) => h('th', {}, t)))),
      h('tbody', {}, ...rows))));
  } catch (err) {
    return card('Subscriptions', errorBox(err, 'Subscriptions'));
  }
}

export const healthView: View = (ctx, main) => {
  let alive = true;
  const cards = h('div', { class: 'cards' }, h('p', { class: 'muted loading' }, 'Loading…'));
  const subs = h('div', {});
  const stamp = h('span', { class: 'muted' });
  const refresh = async (): Promise<void> => {
    const metrics = await readMetrics(ctx);
    const samples = Array.isArray(metrics) ? metrics : undefined;
    const [ready, federation, subscriptions] = await Promise.all([
      readyPart(ctx, samples).catch((err: unknown) => card('Broker', errorBox(err, 'Readiness'))),
      federationPart(ctx), subscriptionsPart(ctx),
    ]);
    if (!alive) return;
    show(cards, ready, ...(Array.isArray(metrics) ? metricCards(metrics) : [metrics]), federation);
    show(subs, subscriptions);
    show(stamp, `updated ${new Date().toLocaleTimeString()}`);
  };
  show(main, h('div', { class: 'card-head' }, h('h1', {}, 'Health'), stamp), cards, subs);
  void refresh();
  const timer = setInterval(() => void refresh(), REFRESH_MS);
  return () => {
    alive = false;
    clearInterval(timer);
  };
};
