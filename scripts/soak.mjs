#!/usr/bin/env node
// Soak test of the built broker (dist/): measurements over MQTT at a steady rate into the real process,
// with subscriptions notifying a local HTTP receiver and federation forwarding every change to a second
// edgeld process (the cloud, on loopback). Reports over time the broker's RSS, the notification queue,
// the federation outbox, the WAL size, the messages in flight and the p99 latencies of the interval,
// then the RSS slope, the slopes of both queues, p99 latencies, and how many of the acknowledged
// measurements the cloud's temporal API holds.
//
// Usage: npm run build && node scripts/soak.mjs [--long] [--duration <s>] [--rate <msg/s>] [--subscriptions <n>] [--json]
//   default: 20 s at 500 measurements/s with 10 subscriptions; --long: 1 hour.
// `--profile plant-room` runs scripts/plant-room.mjs instead (a whole plant room on one core behind a
// bad uplink; its options are there); `--profile default` is this one. `npm run soak -- …` builds first.
// Exit status 1 when the broker or the cloud dies, a measurement is not acknowledged, a notification is
// missing at the end, the outbox is not empty 60 s after the load, the cloud misses an acknowledged
// measurement, or either process does not stop cleanly on SIGTERM.

import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from 'mqtt';
import { alive, federationStatus, p99, readHistory, rssBytes, slope, startBroker, stop } from './soak-lib.mjs';
const DEVICES_PER_SUBSCRIPTION = 5;
const CLIENTS = 5;
const ATTRIBUTE = 'energy';
/** How long the outbox may take to empty once the load has stopped. */
const OUTBOX_DRAIN_MS = 60_000;

function parseArgs(argv) {
  const opts = { duration: 20, rate: 500, subscriptions: 10, json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v <= 0) throw new Error(`${a} needs a positive number`);
      return v;
    };
    if (a === '--long') opts.duration = 3600;
    else if (a === '--duration') opts.duration = num();
    else if (a === '--rate') opts.rate = num();
    else if (a === '--subscriptions') opts.subscriptions = Math.round(num());
    else if (a === '--json') opts.json = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return opts;
}

/** The notification receiver; `values` marks each measurement (its value k) a notification showed. */
function startReceiver(capacity) {
  const latencies = [];
  const values = new Uint8Array(capacity);
  let received = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const e of body.data ?? []) {
          received++;
          const value = e[ATTRIBUTE]?.value;
          if (Number.isInteger(value) && value >= 0 && value < capacity) values[value] = 1;
          const at = Date.parse(e[ATTRIBUTE]?.observedAt ?? '');
          if (Number.isFinite(at)) latencies.push(now - at);
        }
      } catch {
        // counted as missing at the end
      }
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    port: server.address().port, latencies, values, received: () => received, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  })));
}

function connectClient(port) {
  return new Promise((resolve, reject) => {
    const client = connect(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 0, connectTimeout: 5_000 });
    client.once('connect', () => resolve(client));
    client.once('error', reject);
  });
}

function queueSize(dbPath) {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true, timeout: 1_000 });
  try {
    return db.prepare('SELECT count(*) AS n FROM notification_queue').get().n;
  } finally {
    db.close();
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeld-soak-'));
  const cloudDir = mkdtempSync(join(tmpdir(), 'edgeld-soak-cloud-'));
  const dbPath = join(dataDir, 'edgeld.db');
  const total = Math.ceil(opts.rate * opts.duration);
  const receiver = await startReceiver(total);
  const failures = [];
  let clients = [];
  let cloud;
  let broker;
  try {
    // The federation target first: a second edgeld with its own data, then the soaked broker forwarding to it.
    cloud = startBroker('cloud', cloudDir);
    const cloudBase = `http://127.0.0.1:${(await cloud.started).http}`;
    broker = startBroker('broker', dataDir, {
      NOTIFICATIONS_RETRY_BASE: '100',
      // A failed batch is sent again within seconds, well inside the wait for the outbox at the end.
      FEDERATION_UPSTREAM_URL: cloudBase, FEDERATION_RETRY_BASE: '100', FEDERATION_RETRY_MAX: '5000',
    });
    const ports = await broker.started;
    const base = `http://127.0.0.1:${ports.http}`;
    for (let s = 0; s < opts.subscriptions; s++) {
      const res = await fetch(`${base}/ngsi-ld/v1/subscriptions`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          id: `urn:ngsi-ld:Subscription:soak-${s}`, type: 'Subscription', entities: [{ type: 'Device', idPattern: `^urn:ngsi-ld:Device:soak-${s}-` }],
          watchedAttributes: [ATTRIBUTE], notification: { attributes: [ATTRIBUTE], endpoint: { uri: `http://127.0.0.1:${receiver.port}/s${s}`, accept: 'application/json' } },
        }),
      });
      if (res.status !== 201) throw new Error(`subscription ${s}: ${res.status} ${await res.text()}`);
    }
    const devices = Array.from({ length: opts.subscriptions * DEVICES_PER_SUBSCRIPTION }, (_, i) => `soak-${Math.floor(i / DEVICES_PER_SUBSCRIPTION)}-${i}`);
    clients = await Promise.all(Array.from({ length: CLIENTS }, () => connectClient(ports.mqtt)));

    let sent = 0;
    let acked = 0;
    let failed = 0;
    const ackLatencies = [];
    // Per measurement (its value k): 1 once acknowledged, 2 once also found in the cloud.
    const ackedValues = new Uint8Array(total);
    // Per measurement: 1 when the next measurement of its device was published before its PUBACK. Only
    // such a measurement can share a write with the next (measurements of one entity that arrive before
    // their write runs join it), and that write's one notification shows the newer value.
    const joinable = new Uint8Array(total);
    // Each device's observedAt strictly increases: two measurements of one device at the same instant
    // would be stored as one history instance (taken for a QoS 1 redelivery).
    const lastObserved = new Float64Array(devices.length);
    const started = Date.now();
    const end = started + opts.duration * 1000;
    const samples = [];
    const sampleEvery = opts.duration >= 600 ? 60_000 : Math.max(1_000, (opts.duration * 1000) / 10);
    let nextSample = started + sampleEvery;
    const report = (s) => {
      if (!opts.json) {
        process.stdout.write(`${String(Math.round(s.t)).padStart(6)} s  rss ${(s.rss / 2 ** 20).toFixed(1).padStart(6)} MiB  queue ${String(s.queue).padStart(6)}  `
          + `outbox ${String(s.outbox).padStart(6)}  in flight ${String(s.inFlight).padStart(5)}  wal ${(s.wal / 2 ** 20).toFixed(1).padStart(5)} MiB  `
          + `p99 puback ${s.pubackP99Ms.toFixed(1).padStart(6)} ms  notification ${String(s.notificationP99Ms).padStart(5)} ms  acked ${s.acked}  notified ${s.notified}\n`);
      }
    };
    // Latencies since the previous sample, for the p99 of each interval.
    let ackMark = 0;
    let notifiedMark = 0;
    let statusFailed = false;
    let sampling = Promise.resolve();
    /** Takes the figures now; the outbox depth is asked for and the sample recorded in order. */
    const sample = () => {
      let wal = 0;
      try {
        wal = statSync(`${dbPath}-wal`).size;
      } catch {
        // no WAL file right after a checkpoint
      }
      const s = {
        t: (Date.now() - started) / 1000, rss: rssBytes(broker.child.pid), queue: queueSize(dbPath), outbox: null, inFlight: sent - acked - failed, wal,
        pubackP99Ms: Number(p99(ackLatencies.slice(ackMark)).toFixed(1)), notificationP99Ms: p99(receiver.latencies.slice(notifiedMark)),
        acked, notified: receiver.received(),
      };
      ackMark = ackLatencies.length;
      notifiedMark = receiver.latencies.length;
      const outbox = federationStatus(base).then((status) => status.outboxDepth, (err) => {
        if (!statusFailed) failures.push(err instanceof Error ? err.message : String(err));
        statusFailed = true;
        return null;
      });
      sampling = sampling.then(async () => {
        s.outbox = await outbox;
        samples.push(s);
        report(s);
      });
      return sampling;
    };
    if (!opts.json) process.stdout.write(`soak: ${opts.duration} s at ${opts.rate} measurements/s, ${opts.subscriptions} subscriptions, ${devices.length} devices, federation to ${cloudBase}\n`);
    await sample();

    // Paced in 10 ms ticks: each tick sends what the rate allows by then, so a slow tick catches up.
    await new Promise((resolve) => {
      const tick = () => {
        const now = Date.now();
        for (const [name, proc] of [['broker', broker], ['cloud', cloud]]) {
          if (!alive(proc.child)) failures.push(`the ${name} died during the run`);
        }
        if (!alive(broker.child) || !alive(cloud.child)) {
          resolve();
          return;
        }
        const due = Math.min(opts.rate * ((Math.min(now, end) - started) / 1000), opts.rate * opts.duration);
        while (sent < due) {
          const k = sent++;
          const d = k % devices.length;
          if (k >= devices.length && ackedValues[k - devices.length] === 0) joinable[k - devices.length] = 1;
          const t0 = performance.now();
          lastObserved[d] = Math.max(Date.now(), lastObserved[d] + 1);
          const payload = JSON.stringify({ observedAt: new Date(lastObserved[d]).toISOString(), [ATTRIBUTE]: k });
          clients[k % CLIENTS].publishAsync(`ngsi/default/${devices[d]}/attrs`, payload, { qos: 1 }).then(
            () => {
              acked++;
              ackedValues[k] = 1;
              ackLatencies.push(performance.now() - t0);
            },
            () => failed++,
          );
        }
        if (now >= nextSample) {
          nextSample += sampleEvery;
          sample();
        }
        if (now >= end) resolve();
        else setTimeout(tick, 10);
      };
      tick();
    });

    const loadEnded = Date.now();
    await sampling;
    const underLoad = samples.length;

    // Drain, both at once: every PUBACK, then the notification of each device's last measurement
    // (delivery is in order per subscription, so every earlier one has come by then); and the outbox,
    // until every change reached the cloud.
    const lastOfDevices = devices.map((_, d) => sent - 1 - ((sent - 1 - d) % devices.length)).filter((k) => k >= 0 && k < sent);
    const notificationsDrained = async () => {
      const until = Date.now() + 30_000;
      while ((acked + failed < sent || lastOfDevices.some((k) => ackedValues[k] !== 0 && receiver.values[k] === 0)) && Date.now() < until) await sleep(50);
    };
    const outboxDrained = async () => {
      const until = Date.now() + OUTBOX_DRAIN_MS;
      let status = await federationStatus(base);
      while (status.outboxDepth > 0 && Date.now() < until) {
        await sleep(200);
        status = await federationStatus(base);
      }
      return { status, at: Date.now() };
    };
    const [, drained] = await Promise.all([notificationsDrained(), outboxDrained()]);
    const fed = drained.status;
    const outboxEmptyAfterS = fed.outboxDepth === 0 ? Number(((drained.at - loadEnded) / 1000).toFixed(1)) : null;
    if (fed.outboxDepth > 0) failures.push(`the outbox still holds ${fed.outboxDepth} changes ${OUTBOX_DRAIN_MS / 1000} s after the load`);
    await sample();

    // Every acknowledged measurement notified: with its own value, or (joined into the write of a
    // later measurement of its device) by the notification of that write.
    let notifiedJoined = 0;
    let notificationsMissing = 0;
    for (let k = 0; k < sent; k++) {
      if (ackedValues[k] === 0 || receiver.values[k] === 1) continue;
      if (joinable[k] === 1) notifiedJoined++;
      else notificationsMissing++;
    }

    // Every acknowledged measurement must be a history instance in the cloud.
    let cloudInstances = 0;
    const markFound = (v) => {
      if (Number.isInteger(v) && ackedValues[v] === 1) ackedValues[v] = 2;
    };
    for (const device of devices) cloudInstances += await readHistory(cloudBase, `urn:ngsi-ld:Device:${device}`, ATTRIBUTE, markFound);
    let cloudMissing = 0;
    for (const v of ackedValues) if (v === 1) cloudMissing++;

    // Trends after warm-up, under load only (the samples after the drain would pull the slopes down).
    const warmFrom = Math.min(opts.duration * 0.2, 300);
    const fromWarm = samples.filter((s) => s.t >= warmFrom);
    const loadedWarm = samples.slice(0, underLoad).filter((s) => s.t >= warmFrom);
    const perHour = (key) => Number(slope(loadedWarm.filter((s) => s[key] !== null).map((s) => ({ x: s.t / 3600, y: s[key] }))).toFixed(1));
    const summary = {
      durationS: opts.duration, rate: opts.rate, subscriptions: opts.subscriptions, sent, acked, failed, notified: receiver.received(), notifiedJoined,
      achievedRate: Math.round(sent / ((loadEnded - started) / 1000)),
      rssSlopeMiBPerHour: Number((slope(fromWarm.map((s) => ({ x: s.t / 3600, y: s.rss / 2 ** 20 })))).toFixed(2)),
      rssMaxMiB: Number((Math.max(...samples.map((s) => s.rss)) / 2 ** 20).toFixed(1)),
      pubackP99Ms: Number(p99(ackLatencies).toFixed(1)),
      notificationP99Ms: p99(receiver.latencies),
      queueMax: Math.max(...samples.map((s) => s.queue)),
      queueSlopePerHour: perHour('queue'),
      outboxMax: Math.max(...samples.map((s) => s.outbox ?? 0)),
      outboxSlopePerHour: perHour('outbox'),
      outboxEmptyAfterS,
      federation: { sentInstances: fed.sent?.instances ?? null, parked: fed.parked, dropped: fed.dropped, lastError: fed.lastError },
      cloudInstances, cloudMissing,
      samples,
    };
    if (failed > 0 || acked < sent) failures.push(`${sent - acked} of ${sent} measurements not acknowledged`);
    if (notificationsMissing > 0) failures.push(`${notificationsMissing} notifications missing`);
    if (cloudMissing > 0 || cloudInstances < acked) {
      failures.push(`the cloud holds ${cloudInstances} instances for ${acked} acknowledged measurements, ${cloudMissing} of them missing`);
    }
    for (const c of clients) c.end(true);
    clients = [];
    const code = await stop(broker);
    if (code !== 0) failures.push(`the broker stopped with ${code} on SIGTERM`);
    const cloudCode = await stop(cloud);
    if (cloudCode !== 0) failures.push(`the cloud stopped with ${cloudCode} on SIGTERM`);
    summary.failures = failures;
    if (opts.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
    else {
      const { samples: _omit, ...rest } = summary;
      process.stdout.write(`soak: ${JSON.stringify(rest)}\n`);
    }
  } catch (err) {
    failures.push(err instanceof Error ? err.message : String(err));
    process.stderr.write(`soak: ${failures.at(-1)}\n`);
  } finally {
    for (const c of clients) c.end(true);
    for (const proc of [broker, cloud]) {
      if (proc === undefined) continue;
      if (alive(proc.child)) proc.child.kill('SIGKILL');
      await proc.exited;
    }
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(cloudDir, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    process.stderr.write(`soak: FAILED: ${failures.join('; ')}\n`);
    process.exitCode = 1;
  }
}

const argv = process.argv.slice(2);
const at = argv.indexOf('--profile');
const profile = at >= 0 ? argv[at + 1] : 'default';
if (at >= 0) argv.splice(at, 2);
if (profile === 'plant-room') {
  const { runPlantRoom } = await import('./plant-room.mjs');
  process.exitCode = await runPlantRoom(argv);
} else if (profile === 'default') {
  process.argv.splice(2, process.argv.length - 2, ...argv);
  await main();
} else {
  process.stderr.write(`soak: unknown profile ${profile} (default or plant-room)\n`);
  process.exitCode = 2;
}
