// Notification benchmarks, on a broker of their own: update throughput with 10 active subscriptions
// against none, the latency from an update to its notification at a paced rate (HTTP receiver and a
// client of the embedded MQTT broker, both on loopback, every notification counted), and the cost
// of matching one change against 1,000 subscriptions (in-process).

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { connect, type MqttClient } from 'mqtt';
import { parseEntity, type TermMapper } from '../src/ngsi/index.js';
import { changeTriggers, createSubscriptionRegistry, matchSubscription, parseSubscription } from '../src/subscriptions/index.js';
import type { ChangeEvent } from '../src/events.js';
import { percentile, runLoad } from './load.js';
import type { Row } from './report.js';

const ENTITIES = '/ngsi-ld/v1/entities';
const SUBSCRIPTIONS = '/ngsi-ld/v1/subscriptions';
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
const VOCAB = 'https://uri.etsi.org/ngsi-ld/default-context/';
const PROBES = 1_000;

export interface NotificationBenchOptions {
  readonly httpPort: number;
  readonly mqttPort: number;
  readonly concurrency: number;
  readonly durationMs: number;
}

interface Reply {
  status: number;
  body: string;
}

function send(agent: Agent, port: number, method: string, path: string, body?: unknown, type = 'application/json'): Promise<Reply> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const headers = text === undefined ? {} : { 'content-type': type, 'content-length': Buffer.byteLength(text) };
    const out = request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    out.on('error', reject);
    out.end(text);
  });
}

async function expectStatus(p: Promise<Reply>, status: number, what: string): Promise<void> {
  const r = await p;
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.body.slice(0, 300)}`);
}

/** A receiver that records when each notified value arrived. */
async function startReceiver(onValue: (value: number, at: number) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      res.writeHead(204).end();
      // The notification was built by the broker: { data: [{ value: { value: n } }] }.
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: Array<{ value?: { value?: number } }> };
      for (const e of body.data) if (typeof e.value?.value === 'number') onValue(e.value.value, at);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo; // NOTE: a listening TCP server's address is an object
  return {
    url: `http://127.0.0.1:${port}/notify`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * A receiver that costs next to nothing: it answers each HTTP request on its connection with 204
 * without parsing more than its head and Content-Length, so that in update.subs-10 the receiver's
 * own work does not load the cores the broker and the load generator share.
 */
async function startCheapReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const { createServer: createTcpServer } = await import('node:net');
  const sockets = new Set<import('node:net').Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = /content-length:\s*(\d+)/i.exec(pending.subarray(0, end).toString('latin1'));
        const total = end + 4 + Number(length?.[1] ?? 0);
        if (pending.length < total) return;
        pending = pending.subarray(total);
        socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo; // NOTE: a listening TCP server's address is an object
  return {
    url: `http://127.0.0.1:${port}/notify`,
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

const subscriptionBody = (type: string, endpoint: string, q?: string): Record<string, unknown> => ({
  type: 'Subscription', entities: [{ type }], ...(q === undefined ? {} : { q }),
  notification: { format: 'normalized', endpoint: { uri: endpoint, accept: 'application/json' } }, '@context': CORE,
});

interface Latency {
  p50: number;
  p99: number;
  lost: number;
}

/**
 * Sends `rate` updates a second for `durationMs` to one entity, each with a new value, and measures
 * from the moment each update is sent to the moment its notification arrives. Waits up to 10 s for
 * stragglers; what never arrives is lost.
 */
async function pacedLatency(agent: Agent, port: number, entity: string, rate: number, durationMs: number,
  arrivals: Map<number, number>): Promise<Latency> {
  const total = Math.round((rate * durationMs) / 1000);
  const sentAt = new Map<number, number>();
  // Each update at its own instant (n / rate): a steady rate, not bursts.
  const tickMs = 1;
  const perTick = Math.max(1, Math.round((rate * tickMs) / 1000));
  const start = performance.now();
  const pending: Array<Promise<unknown>> = [];
  for (let n = 0; n < total;) {
    const due = start + (n / rate) * 1000;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    for (let k = 0; k < perTick && n < total; k++, n++) {
      const value = n;
      sentAt.set(value, performance.now());
      pending.push(send(agent, port, 'PATCH', `${ENTITIES}/${entity}/attrs/value`, { value }));
    }
  }
  await Promise.all(pending);
  const deadline = performance.now() + 10_000;
  while (arrivals.size < total && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const latencies = [...sentAt].flatMap(([v, at]) => {
    const got = arrivals.get(v);
    return got === undefined ? [] : [got - at];
  });
  const sorted = Float64Array.from(latencies).sort();
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), lost: total - latencies.length };
}

/** Latency runs are measured after a second at the same rate, not counted (as throughput scenarios after their warm-up). */
const WARMUP_MS = 1_000;

async function warmUp(agent: Agent, port: number, entity: string, rate: number, arrivals: Map<number, number>): Promise<void> {
  arrivals.clear();
  const l = await pacedLatency(agent, port, entity, rate, WARMUP_MS, arrivals);
  if (l.lost > 0) throw new Error(`${entity}: ${l.lost} notifications lost while warming up`);
}

/** Microseconds to find and match the candidates of one change among 1,000 subscriptions of its type. */
function matchingCost(): number {
  const mapper: TermMapper = { expandTerm: (t) => (t.includes(':') ? t : VOCAB + t), compactIri: (i) => i.replace(VOCAB, '') };
  const now = Date.now();
  const registry = createSubscriptionRegistry([]);
  for (let i = 0; i < 1_000; i++) {
    const sub = parseSubscription({
      type: 'Subscription', id: `urn:ngsi-ld:Subscription:m${i}`, entities: [{ type: 'Probe' }], q: `temperature>${i};humidity<90`,
      notification: { endpoint: { uri: 'http://127.0.0.1:9/n' } },
    }, { mapper, now, newId: () => String(i) });
    registry.put('', sub);
  }
  const before = parseEntity({ id: 'urn:ngsi-ld:Probe:1', type: 'Probe', temperature: { type: 'Property', value: 1 }, humidity: { type: 'Property', value: 50 } }, mapper, { now });
  const after = parseEntity({ id: 'urn:ngsi-ld:Probe:1', type: 'Probe', temperature: { type: 'Property', value: 500 }, humidity: { type: 'Property', value: 50 } }, mapper, { now });
  const change: ChangeEvent = {
    seq: 1, tenant: '', kind: 'entityUpdated', id: after.id, at: now, written: [VOCAB + 'temperature'], deleted: [], instances: [],
    previous: { ...before, attrs: { [VOCAB + 'temperature']: before.attrs[VOCAB + 'temperature'] ?? [] } }, entity: after,
  };
  let matched = 0;
  const run = (n: number): number => {
    const t = performance.now();
    for (let k = 0; k < n; k++) {
      const fired = changeTriggers(change);
      for (const sub of registry.candidates(change)) if (matchSubscription(sub, change, { now, fired })) matched++;
    }
    return ((performance.now() - t) * 1000) / n;
  };
  run(200);
  const us = run(2_000);
  if (matched === 0) throw new Error('the matching benchmark matched nothing');
  return us;
}

async function updateRate(port: number, options: NotificationBenchOptions): Promise<number> {
  const next = (): { method: 'PATCH'; path: string; body: string } => ({
    method: 'PATCH', path: `${ENTITIES}/urn:ngsi-ld:Probe:${Math.floor(Math.random() * PROBES)}/attrs/temperature`,
    body: JSON.stringify({ value: Math.round(Math.random() * 4000) / 100 }),
  });
  const load = { port, concurrency: options.concurrency, expectStatus: 204, next };
  await runLoad({ ...load, maxRequests: Number.MAX_SAFE_INTEGER, durationMs: 1_500 });
  const r = await runLoad({ ...load, maxRequests: Number.MAX_SAFE_INTEGER, durationMs: options.durationMs });
  if (r.errors > 0) throw new Error(`updates failed: ${r.firstError ?? ''}`);
  return r.requestsPerSecond;
}

/** Runs every notification scenario against a started broker; rows for the report, and notes. */
export async function benchNotifications(options: NotificationBenchOptions): Promise<{ rows: Row[]; notes: string[] }> {
  const port = options.httpPort;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const arrivals = new Map<number, number>();
  const receiver = await startReceiver((v, at) => arrivals.set(v, at));
  let mqtt: MqttClient | undefined;
  const rows: Row[] = [];
  const row = (key: string, unit: string, value: number, ceiling: number | null = null): void => {
    const rounded = Math.round(value * 100) / 100;
    rows.push({ key, group: 'notifications', unit, value: rounded, ceiling: ceiling === null ? null : Math.round(ceiling * 100) / 100, ratio: ceiling ? Math.round((value / ceiling) * 100) / 100 : null });
  };
  try {
    for (let i = 0; i < PROBES; i += 500) {
      const batch = Array.from({ length: 500 }, (_, k) => ({
        id: `urn:ngsi-ld:Probe:${i + k}`, type: 'Probe', temperature: { type: 'Property', value: 20 }, humidity: { type: 'Property', value: 50 },
      }));
      await expectStatus(send(agent, port, 'POST', '/ngsi-ld/v1/entityOperations/create', batch), 201, 'probes');
    }
    const without = await updateRate(port, options);
    // Ten active subscriptions on the updated type: nine alarms whose q the updates never meet, one
    // dashboard notified of every update.
    const cheap = await startCheapReceiver();
    for (let i = 0; i < 9; i++) {
      await expectStatus(send(agent, port, 'POST', SUBSCRIPTIONS, subscriptionBody('Probe', cheap.url, `temperature>${100 + i}`), 'application/ld+json'), 201, 'alarm');
    }
    await expectStatus(send(agent, port, 'POST', SUBSCRIPTIONS, subscriptionBody('Probe', cheap.url), 'application/ld+json'), 201, 'dashboard');
    const withSubs = await updateRate(port, options);
    await cheap.close();
    row('update.subs-10', 'req/s', withSubs, without);

    await expectStatus(send(agent, port, 'POST', ENTITIES, { id: 'urn:ngsi-ld:Beacon:1', type: 'Beacon', value: { type: 'Property', value: -1 } }), 201, 'beacon');
    await expectStatus(send(agent, port, 'POST', SUBSCRIPTIONS, subscriptionBody('Beacon', receiver.url), 'application/ld+json'), 201, 'beacon subscription');
    const notes: string[] = [];
    for (const rate of [100, 1_000]) {
      await warmUp(agent, port, 'urn:ngsi-ld:Beacon:1', rate, arrivals);
      arrivals.clear();
      const l = await pacedLatency(agent, port, 'urn:ngsi-ld:Beacon:1', rate, options.durationMs, arrivals);
      row(`notify.http-${rate}.p50`, 'ms', l.p50);
      row(`notify.http-${rate}.p99`, 'ms', l.p99);
      row(`notify.http-${rate}.lost`, 'notifications', l.lost);
    }

    mqtt = connect(`mqtt://127.0.0.1:${options.mqttPort}`, { reconnectPeriod: 0 });
    const client = mqtt;
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      client.once('error', reject);
    });
    client.on('message', (_topic, payload) => {
      const at = performance.now();
      // The message is the broker's { metadata, body: Notification }.
      const msg = JSON.parse(payload.toString('utf8')) as { body: { data: Array<{ value?: { value?: number } }> } };
      for (const e of msg.body.data) if (typeof e.value?.value === 'number') arrivals.set(e.value.value, at);
    });
    await client.subscribeAsync('bench/lamp', { qos: 0 });
    await expectStatus(send(agent, port, 'POST', ENTITIES, { id: 'urn:ngsi-ld:Lamp:1', type: 'Lamp', value: { type: 'Property', value: -1 } }), 201, 'lamp');
    await expectStatus(send(agent, port, 'POST', SUBSCRIPTIONS,
      subscriptionBody('Lamp', `mqtt://127.0.0.1:${options.mqttPort}/bench/lamp`), 'application/ld+json'), 201, 'lamp subscription');
    await warmUp(agent, port, 'urn:ngsi-ld:Lamp:1', 1_000, arrivals);
    arrivals.clear();
    const m = await pacedLatency(agent, port, 'urn:ngsi-ld:Lamp:1', 1_000, options.durationMs, arrivals);
    row('notify.mqtt-1000.p50', 'ms', m.p50);
    row('notify.mqtt-1000.p99', 'ms', m.p99);
    row('notify.mqtt-1000.lost', 'notifications', m.lost);

    row('notify.match-1000', 'µs/change', matchingCost());
    notes.push(
      'update.subs-10: PATCH of a random Probe attribute (1,000 Probes) with 10 subscriptions on Probe (9 with a q the updates never meet, 1 notified of every update to a receiver on loopback that answers 204 at the TCP level, so its own work does not load the shared cores), against the same without subscriptions (ceiling column)',
      'notify.*: one update at a time paced at the rate named, each to a new value of one entity, after a second at that rate not counted; latency from sending the update to the notification\'s arrival (HTTP receiver, or a client of the embedded MQTT broker); lost: updates whose notification never arrived',
      'notify.match-1000: in-process, candidates and matcher for one change of a Probe against 1,000 subscriptions on Probe with q',
    );
    return { rows, notes };
  } finally {
    if (mqtt) await mqtt.endAsync();
    agent.destroy();
    await receiver.close();
  }
}
