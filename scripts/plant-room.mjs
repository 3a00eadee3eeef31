// The plant-room soak profile (`npm run soak -- --profile plant-room`): a whole plant room's work on
// one core of the gateway, with the uplink a real site has, and nothing lost.
//
// - The gateway: dist/main.js pinned to one core (`taskset`) with the V8 flags of the systemd unit.
// - Devices over MQTT (persistent sessions, QoS 1), each one measurement of 3 attributes every 5 s;
//   5% of them lose their connection every minute; a few clients publish garbage.
// - 20 subscriptions: HTTP ones to a receiver here, MQTT ones on the embedded broker, 3 of them
//   dashboards read over MQTT over WebSocket (`mqtt.ws-port`) that also read entities over HTTP;
//   some with `q`, two with `throttling`. A temporal query and an hourly aggregation every 10 s.
// - 10 commands a minute to 20 valves among the devices, answered by them over MQTT.
// - Federation to a second edgeld (the cloud) in a network namespace of its own, through a bad
//   uplink (scripts/plant-room-net.mjs: rate, loss, delay, and outages on a schedule), with the
//   downlink (MQTT, on the cloud's embedded broker) on the same link: the cloud writes `setpoint`
//   of some devices every 20 s.
// - One kill -9 of the gateway at a random moment, started again 2 s later (systemd's RestartSec).
//
// Then the drain, the counts (acknowledged = stored locally = in the cloud), and the report (JSON
// and a table) whose checks (scripts/plant-room-plan.mjs) give the exit status. `--find-capacity`
// raises the device count on a clean link until the p99 PUBACK or the core gives out.
//
// Every loop is bounded in time; the namespace, veths and nft table are named after this process's
// pid and removed on every way out (end, failure, SIGINT, SIGTERM).

import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createConnection, createServer as createNetServer } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MqttClient, connect } from 'mqtt';
import { cannotMakeUplink, createNetwork, removeStale, startRelay } from './plant-room-net.mjs';
import {
  MEASUREMENT_EVERY_S, PUBACK_P99_LIMIT_MS, checks, drainTimes, inWindows, killMoment, outageSchedule, parsePlantRoomArgs,
  memoryReport, percentilesOverTime, processFigures, quantile, rssSlope, seededRandom, summaryTable,
} from './plant-room-plan.mjs';
import { alive, readHistory, rssBytes, startBroker } from './soak-lib.mjs';

const SUBSCRIPTIONS = 20;
const HTTP_SUBS = [0, 1, 2, 3, 4, 5, 6, 7];
const DASHBOARD_SUBS = [17, 18, 19];
/** Subscription j → its q, mirrored here by `matches` to know which measurements are due. */
const Q = { 0: ['pressure>50', (k) => k % 100 > 50], 1: ['pressure>50', (k) => k % 100 > 50], 8: ['flow<20', (k) => (k * 7) % 50 < 20], 9: ['flow<20', (k) => (k * 7) % 50 < 20] };
/** Subscription j → its throttling in seconds. */
const THROTTLING = { 3: 5, 10: 10 };
const VALVES = 20;
const SETPOINT_DEVICES = 20;
const GARBAGE_CLIENTS = 5;
const RESTART_AFTER_MS = 2_000;
const CLOUD_HTTP = 1026;
const CLOUD_MQTT = 1883;
const RELAY_HTTP = 1027;
const RELAY_MQTT = 1884;

const deviceId = (n) => `pr-${String(n).padStart(4, '0')}`;
const entityOf = (n) => `urn:ngsi-ld:Device:${deviceId(n)}`;
/** The idPattern of subscription j: the devices whose number is j modulo 20 (last two digits). */
const idPatternOf = (j) => `^urn:ngsi-ld:Device:pr-\\d\\d(${[0, 1, 2, 3, 4].map((i) => String(j + 20 * i).padStart(2, '0')).join('|')})$`;
const secondsSince = (t0) => (Date.now() - t0) / 1000;

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function request(base, method, path, body, timeoutMs = 10_000) {
  const t0 = performance.now();
  try {
    const res = await fetch(`${base}${path}`, {
      method, headers: body === undefined ? {} : { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    return { status: res.status, text, ms: performance.now() - t0 };
  } catch (err) {
    return { status: 0, text: err instanceof Error ? err.message : String(err), ms: performance.now() - t0 };
  }
}

/** /proc figures of a process: CPU seconds, bytes written to storage; undefined once it is gone. */
function procFigures(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuS = (Number(fields[11]) + Number(fields[12])) / 100;
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const written = Number(/write_bytes:\s+(\d+)/.exec(io)?.[1] ?? 0);
    return { cpuS, written, rss: rssBytes(pid) };
  } catch {
    return undefined;
  }
}

const fileSize = (path) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/** Seconds since the oldest change the outbox holds (0 when empty), null without a status. */
function lagOf(status) {
  if (status === undefined) return null;
  const oldest = typeof status.oldestPending === 'number' ? status.oldestPending : Date.parse(status.oldestPending ?? '');
  return Number.isFinite(oldest) ? Number(Math.max(0, (Date.now() - oldest) / 1000).toFixed(1)) : 0;
}

/** The notifications arriving, per subscription: the measurements they showed, times, latencies. */
function createNotificationLog(capacity, t0) {
  const seen = Array.from({ length: SUBSCRIPTIONS }, () => new Uint8Array(capacity));
  const times = Array.from({ length: SUBSCRIPTIONS }, () => []);
  const latencies = [];
  let received = 0;
  const take = (j, text) => {
    const now = Date.now();
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    const data = msg?.body?.data ?? msg?.data ?? [];
    if (!(j >= 0 && j < SUBSCRIPTIONS)) return;
    times[j].push((now - t0) / 1000);
    for (const e of data) {
      received++;
      const k = e.temperature?.value;
      if (Number.isInteger(k) && k >= 0 && k < capacity) seen[j][k] = 1;
      const at = Date.parse(e.temperature?.observedAt ?? '');
      if (Number.isFinite(at)) latencies.push({ t: (at - t0) / 1000, v: now - at });
    }
  };
  return { seen, times, latencies, take, received: () => received };
}

function startHttpReceiver(log) {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      log.take(Number(/\/s(\d+)$/.exec(req.url ?? '')?.[1] ?? -1), Buffer.concat(chunks).toString('utf8'));
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    port: server.address().port, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  })));
}

/** An MQTT client that connects again by itself (persistent session when `clean` is false). */
function mqttClient(url, options) {
  const client = connect(url, { reconnectPeriod: 1_000, connectTimeout: 10_000, keepalive: 30, ...options });
  // Connections reset by the kill or refused while the gateway restarts: mqtt.js connects again.
  client.on('error', () => {});
  return client;
}

/** Devices per source address (127.0.1.x): a plant's devices each have their own address, and the
 * broker takes at most mqtt.max-connections-per-address (64) from one. */
const DEVICES_PER_ADDRESS = 50;

/** A device: an MQTT client from its own loopback address, connecting again by itself. */
function deviceClient(port, n) {
  const localAddress = `127.0.${1 + Math.floor(n / DEVICES_PER_ADDRESS / 250)}.${1 + (Math.floor(n / DEVICES_PER_ADDRESS) % 250)}`;
  const client = new MqttClient(() => createConnection({ host: '127.0.0.1', port, localAddress, noDelay: true }), {
    protocol: 'mqtt', protocolVersion: 4, clientId: deviceId(n), clean: false, reconnectPeriod: 1_000, connectTimeout: 10_000, keepalive: 30,
  });
  client.on('error', () => {});
  return client;
}

const waitConnected = (client, ms) => new Promise((resolve) => {
  if (client.connected) return resolve(true);
  const timer = setTimeout(() => resolve(false), ms);
  client.once('connect', () => {
    clearTimeout(timer);
    resolve(true);
  });
});

async function setUpGateway(base, receiverPort, mqttPort) {
  for (let n = 0; n < VALVES; n++) {
    const res = await request(base, 'POST', '/edgeld/v1/devices', { deviceId: deviceId(n), commands: [{ name: 'open', expires: 'PT10M' }] });
    if (res.status !== 201) throw new Error(`registering valve ${deviceId(n)}: ${res.status} ${res.text.slice(0, 300)}`);
  }
  for (let j = 0; j < SUBSCRIPTIONS; j++) {
    const endpoint = HTTP_SUBS.includes(j)
      ? { uri: `http://127.0.0.1:${receiverPort}/s${j}`, accept: 'application/json' }
      // QoS 1: the readers' persistent sessions keep what comes while they reconnect.
      : { uri: `mqtt://127.0.0.1:${mqttPort}/${DASHBOARD_SUBS.includes(j) ? 'edgeld/dashboard/soak-' : 'soak/notify/'}${j}`, accept: 'application/json', notifierInfo: [{ key: 'MQTT-QoS', value: '1' }] };
    const body = {
      id: `urn:ngsi-ld:Subscription:plant-room-${j}`, type: 'Subscription', entities: [{ type: 'Device', idPattern: idPatternOf(j) }],
      watchedAttributes: ['temperature'], notification: { attributes: ['temperature', 'pressure', 'flow'], endpoint },
      ...(Q[j] ? { q: Q[j][0] } : {}), ...(THROTTLING[j] ? { throttling: THROTTLING[j] } : {}),
    };
    const res = await request(base, 'POST', '/ngsi-ld/v1/subscriptions', body);
    if (res.status !== 201) throw new Error(`subscription ${j}: ${res.status} ${res.text.slice(0, 300)}`);
  }
}

/** Runs `fn` every `ms` until `stop()`; a slow round delays the next (never two at once). */
function every(ms, fn) {
  let stopped = false;
  let timer;
  let running = Promise.resolve();
  const loop = () => {
    if (stopped) return;
    running = Promise.resolve().then(fn).catch(() => {}).finally(() => {
      if (!stopped) timer = setTimeout(loop, ms);
    });
  };
  timer = setTimeout(loop, ms);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}

const GARBAGE = [
  () => 'not json at all {',
  () => '[1,2,3]',
  () => JSON.stringify({ observedAt: 'yesterday', temperature: 'warm' }),
  () => JSON.stringify({ observedAt: new Date().toISOString(), 'bad name!': 1, nested: { deep: [null, { x: NaN }] } }),
  () => 'x'.repeat(20_000),
  () => Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80]),
  () => '{"temperature": 1e999}',
];

/**
 * One run of the profile. `plan`: {devices, durationS, outages, killAtS (or null), faults (the
 * uplink's rate, loss and delay, or null for a clean link)}. Returns the report.
 */
async function runOnce(opts, plan, cleanup) {
  const cores = availableParallelism();
  const core = opts.core >= 0 ? opts.core : cores - 1;
  const otherCores = cores > 1 ? Array.from({ length: cores }, (_, i) => i).filter((i) => i !== core).join(',') : String(core);
  // The soak, the cloud and the relay stay off the gateway's core.
  try {
    execFileSync('taskset', ['-a', '-p', '-c', otherCores, String(process.pid)], { stdio: 'ignore' });
  } catch {
    // not fatal: the figures are then noisier
  }
  const loadStart = loadavg().map((v) => Number(v.toFixed(2)));
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeld-plant-room-'));
  const cloudDir = mkdtempSync(join(tmpdir(), 'edgeld-plant-room-cloud-'));
  cleanup.dirs.push(dataDir, cloudDir);
  const net = createNetwork({ rateKbit: plan.faults?.rateKbit ?? null, lossPercent: plan.faults?.lossPercent ?? 0 });
  cleanup.net = net;
  const say = (line) => {
    if (!opts.json) process.stdout.write(`${line}\n`);
  };

  const cloud = startBroker('cloud', cloudDir, { SERVER_HOST: '0.0.0.0', SERVER_PORT: String(CLOUD_HTTP), MQTT_HOST: '0.0.0.0', MQTT_PORT: String(CLOUD_MQTT), LOG_LEVEL: 'info' },
    [...net.exec, 'taskset', '-c', otherCores]);
  cleanup.procs.push(cloud);
  await cloud.started;
  const relay = await startRelay(net, plan.faults?.delayMs ?? 0, [[RELAY_HTTP, CLOUD_HTTP], [RELAY_MQTT, CLOUD_MQTT]]);
  cleanup.procs.push({ child: relay, exited: new Promise((r) => relay.once('exit', r)) });
  const cloudBase = `http://${net.mgmtCloud}:${CLOUD_HTTP}`;

  const [httpPort, mqttPort, wsPort] = [await freePort(), await freePort(), await freePort()];
  const base = `http://127.0.0.1:${httpPort}`;
  const gatewayEnv = {
    SERVER_PORT: String(httpPort), MQTT_PORT: String(mqttPort), MQTT_WS_PORT: String(wsPort), LOG_LEVEL: 'info',
    // Only a capacity search goes past the default 1,024 connections (devices, readers, garbage).
    ...(plan.devices > 1000 ? { MQTT_MAX_CONNECTIONS: String(plan.devices + 100) } : {}),
    FEDERATION_UPSTREAM_URL: `http://${net.cloud}:${RELAY_HTTP}`,
    // A site whose uplink goes down for minutes: the drain's backoff stops at 30 s instead of 5 minutes,
    // so the link is used again within 30 s of coming back (docs/operations.md says so for such sites).
    FEDERATION_RETRY_MAX: '30000',
    // A slow uplink with a long round trip: batches of up to 500 entities (100 a round trip carry
    // at most about 300 measurements a second at 300 ms), compressed (a 500-entity upsert of 150 KB
    // is about 10 KB of gzip): docs/federation.md advises both for such a link.
    FEDERATION_BATCH_SIZE: '500', FEDERATION_COMPRESSION: 'gzip',
    FEDERATION_DOWNLINK_TYPES: 'Device', FEDERATION_DOWNLINK_ATTRIBUTES: 'setpoint', FEDERATION_DOWNLINK_ID_PATTERN: '^urn:ngsi-ld:Device:pr-',
    FEDERATION_DOWNLINK_MQTT_URL: `mqtt://${net.cloud}:${RELAY_MQTT}`,
    ...opts.gatewayEnv,
  };
  const gatewayPrefix = ['taskset', '-c', String(core)];
  // The gateway's log (both processes, the kill's restart included) beside the report, when there is one.
  const gatewayLog = !opts.report ? undefined : opts.findCapacity ? `${opts.report}.${plan.devices}.gateway.log` : `${opts.report}.gateway.log`;
  let gateway = startBroker('gateway', dataDir, gatewayEnv, gatewayPrefix, gatewayLog, opts.gatewayFlags);
  cleanup.procs.push(gateway);
  await gateway.started;
  let incarnation = 0;

  const perDeviceTotal = Math.ceil(plan.durationS / MEASUREMENT_EVERY_S) + 2;
  const capacity = plan.devices * perDeviceTotal;
  const t0 = Date.now();
  const log = createNotificationLog(capacity, t0);
  const receiver = await startHttpReceiver(log);
  cleanup.closers.push(receiver.close);
  await setUpGateway(base, receiver.port, mqttPort);

  // Notification readers: one MQTT client for the MQTT subscriptions, three dashboards over WebSocket.
  const clients = [];
  cleanup.clients = clients;
  const onNotify = (client, re) => client.on('message', (topic, payload) => log.take(Number(re.exec(topic)?.[1] ?? -1), payload.toString('utf8')));
  const notifyReader = mqttClient(`mqtt://127.0.0.1:${mqttPort}`, { clientId: 'plant-room-notify', clean: false });
  notifyReader.on('connect', () => notifyReader.subscribe('soak/notify/#', { qos: 1 }));
  onNotify(notifyReader, /soak\/notify\/(\d+)$/);
  clients.push(notifyReader);
  const dashboards = DASHBOARD_SUBS.map((j) => {
    const c = mqttClient(`ws://127.0.0.1:${wsPort}`, { clientId: `plant-room-dashboard-${j}`, clean: false });
    c.on('connect', () => c.subscribe(`edgeld/dashboard/soak-${j}`, { qos: 1 }));
    onNotify(c, /soak-(\d+)$/);
    clients.push(c);
    return c;
  });

  // The devices.
  const devices = [];
  const commands = { issued: new Map(), answered: new Map(), failedToIssue: 0 };
  for (let n = 0; n < plan.devices; n++) {
    const c = deviceClient(mqttPort, n);
    if (n < VALVES) {
      c.on('connect', () => c.subscribe(`ngsi/default/${deviceId(n)}/cmd`, { qos: 1 }));
      c.on('message', (_topic, payload) => {
        let cmd;
        try {
          cmd = JSON.parse(payload.toString());
        } catch {
          return;
        }
        c.publish(`ngsi/default/${deviceId(n)}/cmdexe`, JSON.stringify({ id: cmd.id, status: 'OK', info: { value: cmd.value } }), { qos: 1 }, (err) => {
          if (!err && !commands.answered.has(cmd.value)) commands.answered.set(cmd.value, Date.now());
        });
      });
    }
    devices.push(c);
    clients.push(c);
    if (n % 50 === 49) await Promise.all(devices.slice(n - 49, n + 1).map((d) => waitConnected(d, 20_000)));
  }
  const connected = await Promise.all([...devices, notifyReader, ...dashboards].map((d) => waitConnected(d, 20_000)));
  if (connected.includes(false)) throw new Error(`${connected.filter((c) => !c).length} MQTT clients did not connect in 20 s`);
  const garbage = Array.from({ length: GARBAGE_CLIENTS }, (_, g) => {
    const c = mqttClient(`mqtt://127.0.0.1:${mqttPort}`, { clientId: `pr-garbage-${g}`, clean: true });
    clients.push(c);
    return c;
  });

  // State of the measurements, by their number k (the temperature they carry).
  const acked = new Uint8Array(capacity);
  const joinable = new Uint8Array(capacity);
  const publishedAt = new Float64Array(capacity);
  const lastObserved = new Float64Array(plan.devices);
  const pubacks = [];
  let sent = 0;
  let ackedCount = 0;
  let garbageSent = 0;
  const windows = { kill: [], outages: plan.outages };
  const gap = (MEASUREMENT_EVERY_S * 1000) / plan.devices;
  const start = Date.now();
  const loadEnd = start + plan.durationS * 1000;
  const rel = (t) => (t - start) / 1000;
  say(`plant room: ${plan.devices} devices for ${plan.durationS} s, gateway on core ${core} (pid ${gateway.child.pid}), cloud in ${net.ns}; outages ${plan.outages.map((o) => `${o.start}-${o.end} s`).join(', ') || 'none'}; kill -9 at ${plan.killAtS ?? '-'} s`);

  const publishDue = () => {
    const now = Date.now();
    const due = Math.min(Math.floor((Math.min(now, loadEnd) - start) / gap), capacity);
    while (sent < due) {
      const k = sent++;
      const n = k % plan.devices;
      if (k >= plan.devices && acked[k - plan.devices] === 0) joinable[k - plan.devices] = 1;
      lastObserved[n] = Math.max(Date.now(), lastObserved[n] + 1);
      const payload = JSON.stringify({ observedAt: new Date(lastObserved[n]).toISOString(), temperature: k, pressure: k % 100, flow: (k * 7) % 50 });
      const at = performance.now();
      publishedAt[k] = Date.now();
      devices[n].publish(`ngsi/default/${deviceId(n)}/attrs`, payload, { qos: 1 }, (err) => {
        if (err || acked[k] === 1) return;
        acked[k] = 1;
        ackedCount++;
        pubacks.push({ t: rel(publishedAt[k]), v: performance.now() - at, end: rel(Date.now()) });
      });
    }
  };

  // Samples of the gateway: RSS, CPU, bytes written, database and WAL, outbox and its lag.
  const samples = [];
  const dbPath = join(dataDir, 'edgeld.db');
  let written = 0;
  let cpuS = 0;
  let lastProc;
  let walMax = 0;
  let downlinkStatus;
  const sample = async () => {
    const proc = procFigures(gateway.child.pid);
    if (proc !== undefined) {
      if (lastProc !== undefined && lastProc.incarnation === incarnation) {
        written += proc.written - lastProc.written;
        cpuS += proc.cpuS - lastProc.cpuS;
      } else {
        written += proc.written;
        cpuS += proc.cpuS;
      }
      lastProc = { ...proc, incarnation };
    }
    const wal = fileSize(`${dbPath}-wal`);
    walMax = Math.max(walMax, wal);
    // The outbox from the federation's status; the heap and event-loop lag from the gateway's own
    // metrics. Both at once: a sample waits at most one timeout for a gateway that does not answer.
    const [res, metrics] = await Promise.all([
      request(base, 'GET', '/ngsi-ld/v1/federation/status', undefined, 5_000), request(base, 'GET', '/metrics', undefined, 5_000),
    ]);
    let status;
    try {
      status = res.status === 200 ? JSON.parse(res.text) : undefined;
    } catch {
      status = undefined;
    }
    if (status?.downlink) downlinkStatus = status.downlink;
    const t = secondsSince(start);
    samples.push({
      t: Number(t.toFixed(1)), incarnation, rss: proc?.rss ?? 0, cpuS: Number(cpuS.toFixed(2)), writtenBytes: written, dbBytes: fileSize(dbPath), walBytes: wal,
      outbox: status?.outboxDepth ?? null, lagS: lagOf(status),
      acked: ackedCount, notified: log.received(), uplinkDown: inWindows(t, plan.outages),
      process: metrics.status === 200 ? processFigures(metrics.text) : null,
    });
    const s = samples.at(-1);
    say(`${String(Math.round(s.t)).padStart(6)} s  rss ${(s.rss / 2 ** 20).toFixed(1).padStart(6)} MiB  cpu ${s.cpuS.toFixed(1).padStart(7)} s  wal ${(s.walBytes / 2 ** 20).toFixed(1).padStart(5)} MiB  `
      + `outbox ${String(s.outbox).padStart(6)} (lag ${s.lagS} s)  acked ${s.acked}/${sent}  notified ${s.notified}${s.uplinkDown ? '  [uplink down]' : ''}`);
  };
  const sampleEvery = plan.durationS >= 1200 ? 30_000 : 5_000;

  // Reads: a temporal query and an hourly aggregation every 10 s, dashboards' entity reads every 5 s.
  const queries = { temporal: [], aggregation: [], dashboard: [] };
  const record = (list, res) => list.push({ t: secondsSince(start), ms: res.ms, ok: res.status === 200 || res.status === 206 });
  const temporalLoop = every(10_000, async () => {
    const id = encodeURIComponent(entityOf(randomInt(plan.devices)));
    const from = new Date(Date.now() - 10 * 60_000).toISOString();
    record(queries.temporal, await request(base, 'GET', `/ngsi-ld/v1/temporal/entities/${id}?attrs=temperature&timerel=after&timeAt=${from}`));
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 6 * 3_600_000).toISOString();
    record(queries.aggregation, await request(base, 'GET', `/ngsi-ld/v1/temporal/entities/${id}?attrs=temperature,pressure&options=aggregatedValues&aggrMethods=avg,min,max,totalCount&aggrPeriodDuration=PT1H&timerel=after&timeAt=${hour}`));
  });
  const dashboardLoops = DASHBOARD_SUBS.map((j) => every(5_000, async () => {
    record(queries.dashboard, await request(base, 'GET', `/ngsi-ld/v1/entities?type=Device&idPattern=${encodeURIComponent(idPatternOf(j))}&limit=50&count=true`));
  }));

  // Commands: 10 a minute, round robin over the valves; the value is the command's number.
  let nextCommand = 0;
  const commandLoop = every(6_000, async () => {
    const c = nextCommand++;
    const res = await request(base, 'POST', `/ngsi-ld/v1/entities/${encodeURIComponent(entityOf(c % VALVES))}/attrs`, { open: { type: 'Property', value: c } });
    if (res.status === 204) commands.issued.set(c, Date.now());
    else commands.failedToIssue++;
  });
  // The downlink: the cloud writes a setpoint of one of 20 devices every 20 s (values increase).
  const setpoints = new Map();
  const downlinkWrites = [];
  let nextSetpoint = 1;
  const downlinkLoop = every(20_000, async () => {
    const n = VALVES + (nextSetpoint % SETPOINT_DEVICES);
    const v = nextSetpoint++;
    const res = await request(cloudBase, 'POST', `/ngsi-ld/v1/entities/${encodeURIComponent(entityOf(n))}/attrs`, { setpoint: { type: 'Property', value: v } });
    if (res.status === 204) {
      setpoints.set(n, v);
      downlinkWrites.push([n, v]);
    }
  });
  // Garbage, every 2 s from each garbage client.
  const garbageLoop = every(2_000, () => {
    for (const [g, c] of garbage.entries()) {
      if (!c.connected) continue;
      c.publish(`ngsi/default/pr-garbage-${g}/attrs`, GARBAGE[randomInt(GARBAGE.length)](), { qos: 1 });
      garbageSent++;
    }
  });
  // 5% of the devices lose their connection every minute (mqtt.js connects again after 1 s).
  const reconnectLoop = every(60_000, () => {
    for (let i = 0; i < Math.ceil(plan.devices / 20); i++) devices[randomInt(plan.devices)].stream?.destroy();
  });

  // The kill -9 and the restart, and the outages, on their schedule.
  const kill = { atS: plan.killAtS, restarted: plan.killAtS === null, downS: null };
  let killing = false;
  const killGateway = async () => {
    const at = Date.now();
    killing = true;
    gateway.child.kill('SIGKILL');
    await gateway.exited;
    await sleep(RESTART_AFTER_MS);
    incarnation++;
    gateway = startBroker('gateway', dataDir, gatewayEnv, gatewayPrefix, gatewayLog, opts.gatewayFlags);
    cleanup.procs.push(gateway);
    await gateway.started;
    kill.restarted = true;
    killing = false;
    kill.downS = Number(((Date.now() - at) / 1000).toFixed(1));
    // The window ends once every device is connected again (bounded), and 5 s more.
    const until = Date.now() + 60_000;
    while (devices.some((d) => !d.connected) && Date.now() < until) await sleep(100);
    windows.kill.push({ start: rel(at), end: secondsSince(start) + 5 });
    say(`${Math.round(rel(at))} s: gateway killed (kill -9), serving again after ${kill.downS} s`);
  };
  const events = [];
  for (const o of plan.outages) {
    events.push({ at: o.start, run: () => { net.down(); say(`${o.start} s: uplink down`); } });
    events.push({ at: o.end, run: () => { net.up(); say(`${o.end} s: uplink up`); } });
  }
  if (plan.killAtS !== null) events.push({ at: plan.killAtS, run: killGateway });
  events.sort((a, b) => a.at - b.at);
  const running = [];

  await sample();
  // CPU and bytes written from here on: the start-up and the set-up are not the plant's.
  const before = { cpuS, written };
  let nextSample = Date.now() + sampleEvery;
  const failures = [];
  await new Promise((resolve) => {
    const tick = () => {
      const now = Date.now();
      if (!alive(cloud.child)) failures.push('the cloud died during the run');
      if (!killing && !alive(gateway.child)) failures.push('the gateway died during the run (not the kill)');
      if (failures.length > 0) return resolve();
      publishDue();
      while (events.length > 0 && events[0].at <= rel(now)) {
        const e = events.shift();
        const p = { pending: true };
        p.done = Promise.resolve().then(e.run).catch((err) => failures.push(`${err.message}`)).finally(() => (p.pending = false));
        running.push(p);
      }
      if (now >= nextSample) {
        nextSample += sampleEvery;
        sample();
      }
      if (now >= loadEnd) resolve();
      else setTimeout(tick, 20);
    };
    tick();
  });
  await Promise.all(running.map((p) => p.done));
  for (const stop of [temporalLoop, commandLoop, downlinkLoop, garbageLoop, reconnectLoop, ...dashboardLoops]) await stop();
  net.up();
  const loadEndedS = secondsSince(start);
  say(`${Math.round(loadEndedS)} s: load ended, draining`);

  // The drain, every part bounded: PUBACKs, the outbox, the last notifications, answers, setpoints.
  const drainUntil = Date.now() + 240_000;
  const lastOf = (n) => sent - 1 - ((sent - 1 - n) % plan.devices);
  const notificationsPending = () => {
    for (let j = 0; j < SUBSCRIPTIONS; j++) {
      if (THROTTLING[j]) continue;
      for (let n = j; n < plan.devices; n += SUBSCRIPTIONS) {
        const k = lastOf(n);
        if (k >= 0 && acked[k] === 1 && (!Q[j] || Q[j][1](k)) && log.seen[j][k] === 0) return true;
      }
    }
    return false;
  };
  let sampler = every(sampleEvery, sample);
  let gatewaySetpoints = new Map();
  const setpointsApplied = async () => {
    const got = new Map();
    for (const [n] of setpoints) {
      const res = await request(base, 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent(entityOf(n))}?attrs=setpoint`);
      try {
        got.set(n, JSON.parse(res.text).setpoint?.value ?? 0);
      } catch {
        got.set(n, 0);
      }
    }
    gatewaySetpoints = got;
    return [...setpoints].every(([n, v]) => got.get(n) >= v);
  };
  let waitingFor = [];
  for (;;) {
    const applied = await setpointsApplied();
    waitingFor = [
      ...(ackedCount < sent ? [`${sent - ackedCount} PUBACKs`] : []),
      ...(samples.at(-1)?.outbox !== 0 ? ['the outbox'] : []),
      ...(notificationsPending() ? ['notifications'] : []),
      ...([...commands.issued.keys()].some((c) => !commands.answered.has(c)) ? ['command answers'] : []),
      ...(applied ? [] : ['setpoints at the gateway']),
    ];
    if (waitingFor.length === 0 || Date.now() > drainUntil) break;
    await sleep(1_000);
  }
  if (waitingFor.length > 0) say(`drain: still waiting for ${waitingFor.join(', ')} after 240 s`);
  await sampler();
  await sample();
  sampler = undefined;

  // The counts: every acknowledged measurement stored locally and in the cloud.
  const local = new Uint8Array(capacity);
  const inCloud = new Uint8Array(capacity);
  const mark = (arr) => (v) => {
    if (Number.isInteger(v) && v >= 0 && v < capacity) arr[v] = 1;
  };
  for (let n = 0; n < plan.devices; n++) {
    await readHistory(base, entityOf(n), 'temperature', mark(local));
    await readHistory(cloudBase, entityOf(n), 'temperature', mark(inCloud));
  }
  let storedLocally = 0;
  let cloudCount = 0;
  let missingLocally = 0;
  let missingInCloud = 0;
  for (let k = 0; k < sent; k++) {
    storedLocally += local[k];
    cloudCount += inCloud[k];
    if (acked[k] === 1 && local[k] === 0) missingLocally++;
    if ((acked[k] === 1 || local[k] === 1) && inCloud[k] === 0) missingInCloud++;
  }

  // Notifications due and delivered (a measurement joined into a later write of its device is
  // notified by that write), and the throttled subscriptions' periods.
  let due = 0;
  let delivered = 0;
  let joined = 0;
  let missing = 0;
  const perSubscription = [];
  let throttledOk = true;
  for (let j = 0; j < SUBSCRIPTIONS; j++) {
    const kind = HTTP_SUBS.includes(j) ? 'http' : DASHBOARD_SUBS.includes(j) ? 'mqtt-ws dashboard' : 'mqtt';
    if (THROTTLING[j]) {
      const times = log.times[j];
      const gaps = times.slice(1).map((t, i) => ({ t, gap: t - times[i] })).filter((g) => !inWindows(g.t, windows.kill));
      const minGap = gaps.length === 0 ? null : Math.min(...gaps.map((g) => g.gap));
      // Arrival times carry the delivery's jitter, and a kill -9 forgets when the last one went: the
      // bound is on the count (one per period, the first, and what the restart notifies again).
      const ok = times.length > 0 && times.length <= Math.ceil(loadEndedS / THROTTLING[j]) + 3;
      throttledOk &&= ok;
      perSubscription.push({
        j, kind, throttlingS: THROTTLING[j], notifications: times.length, atMost: Math.ceil(loadEndedS / THROTTLING[j]) + 3, minGapS: minGap === null ? null : Number(minGap.toFixed(2)),
      });
      continue;
    }
    let d = 0;
    let got = 0;
    for (let n = j; n < plan.devices; n += SUBSCRIPTIONS) {
      for (let k = n; k < sent; k += plan.devices) {
        if (acked[k] !== 1 || (Q[j] && !Q[j][1](k))) continue;
        d++;
        if (log.seen[j][k] === 1) got++;
        else if (joinable[k] === 1) joined++;
        else missing++;
      }
    }
    due += d;
    delivered += got;
    perSubscription.push({ j, kind, q: Q[j]?.[0] ?? null, due: d, delivered: got });
  }

  // Figures over time and the whole report; the CPU share is over the time of the samples.
  const lastSampleS = samples.at(-1)?.t ?? secondsSince(start);
  const outsideKill = pubacks.filter((p) => !inWindows(p.t, windows.kill) && !inWindows(p.end, windows.kill));
  const stepS = plan.durationS >= 1200 ? 60 : 10;
  const allPubacks = pubacks.map((p) => p.v);
  const q = (list, p) => (list.length === 0 ? null : Number(quantile(list, p).toFixed(1)));
  const notifLat = log.latencies.map((l) => l.v);
  const roundTrips = [...commands.issued].filter(([c]) => commands.answered.has(c)).map(([c, at]) => commands.answered.get(c) - at);
  const qstat = (list) => ({ n: list.length, failed: list.filter((x) => !x.ok && !inWindows(x.t, windows.kill)).length, p99Ms: q(list.map((x) => x.ms), 0.99) });
  const warmUpS = Math.min(300, plan.durationS * 0.2);
  // The samples of the load (the drain after it is not judged for memory).
  const loaded = samples.filter((s) => s.t <= loadEndedS);
  const report = {
    profile: 'plant-room', startedAt: new Date(start).toISOString(), durationS: plan.durationS, devices: plan.devices,
    host: { cores, core, loadStart, loadEnd: loadavg().map((v) => Number(v.toFixed(2))) },
    uplink: plan.faults === null ? null : { ...plan.faults, outages: plan.outages },
    measurements: { sent, acknowledged: ackedCount, storedLocally, inCloud: cloudCount, missingLocally, missingInCloud, garbageSent },
    notifications: { due, delivered, joined, missing, throttledOk, received: log.received(), p50Ms: q(notifLat, 0.5), p99Ms: q(notifLat, 0.99), perSubscription },
    commands: {
      issued: commands.issued.size, answered: [...commands.issued.keys()].filter((c) => commands.answered.has(c)).length, notIssued: commands.failedToIssue, p99Ms: q(roundTrips, 0.99),
      // Each one issued and never answered: its value, its valve, when it was issued (s into the load).
      unanswered: [...commands.issued].filter(([c]) => !commands.answered.has(c)).map(([c, at]) => ({ value: c, valve: deviceId(c % VALVES), issuedAtS: Number(rel(at).toFixed(1)) })),
    },
    downlink: {
      // A write counts as applied when the gateway holds it or a later one of the same entity.
      written: downlinkWrites.length, applied: downlinkWrites.filter(([n, v]) => gatewaySetpoints.get(n) >= v).length,
      status: downlinkStatus === undefined ? null : { applied: downlinkStatus.applied, refused: downlinkStatus.refused, connectionFailures: downlinkStatus.connectionFailures },
    },
    puback: { p50Ms: q(allPubacks, 0.5), p99Ms: q(allPubacks, 0.99), p99OutsideKillMs: q(outsideKill.map((p) => p.v), 0.99), limitMs: PUBACK_P99_LIMIT_MS, overTime: percentilesOverTime(pubacks, stepS) },
    notificationLatency: percentilesOverTime(log.latencies, stepS),
    queries: { temporal: qstat(queries.temporal), aggregation: qstat(queries.aggregation), dashboard: qstat(queries.dashboard) },
    cpu: {
      cpuS: Number((cpuS - before.cpuS).toFixed(1)), sharePercent: Number(((100 * (cpuS - before.cpuS)) / Math.max(1, lastSampleS)).toFixed(1)),
      msPerMeasurement: ackedCount === 0 ? null : Number(((1000 * (cpuS - before.cpuS)) / ackedCount).toFixed(3)),
    },
    rss: { maxBytes: Math.max(...samples.map((s) => s.rss)), slope: rssSlope(loaded, warmUpS) },
    memory: memoryReport(loaded, warmUpS),
    storage: {
      dbBytes: fileSize(dbPath), walMaxBytes: walMax, writtenBytes: written - before.written,
      bytesWrittenPerMeasurement: ackedCount === 0 ? null : Math.round((written - before.written) / ackedCount),
    },
    outbox: { max: Math.max(...samples.map((s) => s.outbox ?? 0)), drains: drainTimes(samples, plan.outages) },
    kill: { ...kill, window: windows.kill },
    processesAlive: alive(cloud.child) && alive(gateway.child),
    drainTimedOutOn: waitingFor,
    timeline: samples,
  };
  report.checks = checks(report);
  for (const f of failures) report.checks.push({ name: 'run', ok: false, detail: f });
  return report;
}

/** The devices of each capacity step, each run on a clean link, without the kill. */
async function findCapacity(opts, cleanup) {
  const steps = [];
  for (let devices = opts.step; devices <= 20_000; devices += opts.step) {
    const r = await runOnce({ ...opts, json: true }, { devices, durationS: opts.duration, outages: [], killAtS: null, faults: null }, cleanup);
    await cleanup.run();
    const step = { devices, p99PubackMs: r.puback.p99Ms, cpuSharePercent: r.cpu.sharePercent, msPerMeasurement: r.cpu.msPerMeasurement, lost: r.measurements.missingLocally, loadAverage: r.host.loadEnd };
    // The report keeps each step's PUBACK latency by interval: a step that failed says when.
    steps.push({ ...step, pubackOverTime: r.puback.overTime, drainTimedOutOn: r.drainTimedOutOn });
    if (!opts.json) process.stdout.write(`capacity: ${JSON.stringify(step)}\n`);
    if (r.puback.p99Ms === null || r.puback.p99Ms > PUBACK_P99_LIMIT_MS || r.cpu.sharePercent >= 95 || step.lost > 0) break;
  }
  const held = steps.filter((s) => s.p99PubackMs !== null && s.p99PubackMs <= PUBACK_P99_LIMIT_MS && s.cpuSharePercent < 95 && s.lost === 0);
  return { profile: 'plant-room', findCapacity: true, stepS: opts.duration, steps, largestHeld: held.at(-1)?.devices ?? 0 };
}

/** Everything to remove, whatever the way out. */
function createCleanup() {
  const c = {
    procs: [], dirs: [], closers: [], clients: [], net: undefined,
    async run() {
      for (const cl of c.clients) cl.end(true);
      c.clients = [];
      // Stopped as systemd stops them (SIGTERM, then SIGKILL after 10 s): a gateway run with --cpu-prof writes its profile.
      for (const p of c.procs) {
        if (alive(p.child)) p.child.kill('SIGTERM');
        await Promise.race([p.exited, sleep(10_000)]);
        if (alive(p.child)) p.child.kill('SIGKILL');
        await Promise.race([p.exited, sleep(5_000)]);
      }
      c.procs = [];
      for (const close of c.closers) await close().catch(() => {});
      c.closers = [];
      c.net?.remove();
      c.net = undefined;
      for (const d of c.dirs) rmSync(d, { recursive: true, force: true });
      c.dirs = [];
    },
  };
  return c;
}

/** Runs the profile from its command-line arguments; resolves with the exit status. */
export async function runPlantRoom(argv) {
  let opts;
  try {
    opts = parsePlantRoomArgs(argv);
  } catch (err) {
    process.stderr.write(`soak: ${err.message}\n`);
    return 2;
  }
  const why = cannotMakeUplink();
  if (why !== undefined) {
    process.stderr.write(`soak: plant-room cannot run here: ${why}\n`);
    return 3;
  }
  removeStale();
  const cleanup = createCleanup();
  const onSignal = (sig) => {
    process.stderr.write(`soak: ${sig}, cleaning up\n`);
    cleanup.run().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const onCrash = (err) => {
    process.stderr.write(`soak: ${err instanceof Error ? err.stack : String(err)}\n`);
    cleanup.run().finally(() => process.exit(1));
  };
  process.once('uncaughtException', onCrash);
  const seed = opts.seed === 0 ? randomInt(1, 2 ** 31) : opts.seed;
  try {
    if (opts.findCapacity) {
      const result = await findCapacity({ ...opts, duration: argv.includes('--duration') ? opts.duration : 120 }, cleanup);
      if (opts.report) writeFileSync(opts.report, `${JSON.stringify(result, null, 1)}\n`);
      process.stdout.write(opts.json ? `${JSON.stringify(result)}\n` : `capacity: largest plant held ${result.largestHeld} devices (1 measurement / ${MEASUREMENT_EVERY_S} s each)\n`);
      return result.largestHeld > 0 ? 0 : 1;
    }
    const rand = seededRandom(seed);
    const plan = {
      devices: opts.devices, durationS: opts.duration, outages: outageSchedule(opts.duration), killAtS: killMoment(opts.duration, rand),
      faults: { rateKbit: opts.rateKbit, lossPercent: opts.lossPercent, delayMs: opts.delayMs },
    };
    const report = await runOnce(opts, plan, cleanup);
    report.seed = seed;
    if (opts.report) writeFileSync(opts.report, `${JSON.stringify(report, null, 1)}\n`);
    if (opts.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else process.stdout.write(summaryTable(report));
    return report.checks.every((c) => c.ok) ? 0 : 1;
  } catch (err) {
    process.stderr.write(`soak: plant-room failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    return 1;
  } finally {
    await cleanup.run();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('uncaughtException', onCrash);
  }
}
