#!/usr/bin/env node
// Soak test of the built broker (dist/): measurements over MQTT at a steady rate into the real process,
// with subscriptions notifying a local HTTP receiver. Reports over time the broker's RSS, the notification
// queue, the WAL size and the messages in flight, then the RSS slope and p99 latencies.
//
// Usage: npm run build && node scripts/soak.mjs [--long] [--duration <s>] [--rate <msg/s>] [--subscriptions <n>] [--json]
//   default: 20 s at 500 measurements/s with 10 subscriptions; --long: 1 hour.
// Exit status 1 when the broker dies, a measurement is not acknowledged, a notification is missing at
// the end, or the broker does not stop cleanly on SIGTERM.

import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from 'mqtt';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const DEVICES_PER_SUBSCRIPTION = 5;
const CLIENTS = 5;

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

const p99 = (values) => {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
};

/** Least-squares slope of y over x. */
function slope(points) {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

function rssBytes(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

function startBroker(dataDir) {
  const flags = pkg.config.nodeFlags.split(' ');
  const child = spawn(process.execPath, [...flags, join(ROOT, 'dist/main.js')], {
    env: {
      PATH: process.env.PATH ?? '', STORAGE_DIR: dataDir, SERVER_HOST: '127.0.0.1', SERVER_PORT: '0', MQTT_HOST: '127.0.0.1', MQTT_PORT: '0', LOG_LEVEL: 'info',
      NOTIFICATIONS_RETRY_BASE: '100',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const started = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the broker did not start in 15 s:\n${err}`)), 15_000);
    child.stderr.on('data', (chunk) => {
      // Only the start-up lines are kept; later lines are read for errors, then dropped.
      const text = chunk.toString();
      if (err.length < 100_000) err += text;
      const m = /"msg":"edgeld started","http":"[^"]*:(\d+)","mqtt":"[^"]*:(\d+)"/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ http: Number(m[1]), mqtt: Number(m[2]) });
      }
    });
    exited.then((code) => reject(new Error(`the broker exited (${code}) before it started:\n${err}`)));
  });
  return { child, exited, started, stderr: () => err };
}

function startReceiver() {
  const latencies = [];
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
          const at = Date.parse(e.energy?.observedAt ?? '');
          if (Number.isFinite(at)) latencies.push(now - at);
        }
      } catch {
        // counted as missing at the end
      }
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    port: server.address().port, latencies, received: () => received, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
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
  const dbPath = join(dataDir, 'edgeld.db');
  const broker = startBroker(dataDir);
  const receiver = await startReceiver();
  const failures = [];
  let clients = [];
  try {
    const ports = await broker.started;
    const base = `http://127.0.0.1:${ports.http}`;
    for (let s = 0; s < opts.subscriptions; s++) {
      const res = await fetch(`${base}/ngsi-ld/v1/subscriptions`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          id: `urn:ngsi-ld:Subscription:soak-${s}`, type: 'Subscription', entities: [{ type: 'Device', idPattern: `^urn:ngsi-ld:Device:soak-${s}-` }],
          watchedAttributes: ['energy'], notification: { attributes: ['energy'], endpoint: { uri: `http://127.0.0.1:${receiver.port}/s${s}`, accept: 'application/json' } },
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
    const started = Date.now();
    const end = started + opts.duration * 1000;
    const samples = [];
    const sampleEvery = opts.duration >= 600 ? 60_000 : Math.max(1_000, (opts.duration * 1000) / 10);
    let nextSample = started + sampleEvery;
    const report = (s) => {
      if (!opts.json) {
        process.stdout.write(`${String(Math.round(s.t)).padStart(6)} s  rss ${(s.rss / 2 ** 20).toFixed(1).padStart(6)} MiB  queue ${String(s.queue).padStart(6)}  `
          + `in flight ${String(s.inFlight).padStart(5)}  wal ${(s.wal / 2 ** 20).toFixed(1).padStart(5)} MiB  acked ${s.acked}  notified ${s.notified}\n`);
      }
    };
    const sample = () => {
      let wal = 0;
      try {
        wal = statSync(`${dbPath}-wal`).size;
      } catch {
        // no WAL file right after a checkpoint
      }
      const s = { t: (Date.now() - started) / 1000, rss: rssBytes(broker.child.pid), queue: queueSize(dbPath), inFlight: sent - acked - failed, wal, acked, notified: receiver.received() };
      samples.push(s);
      report(s);
    };
    if (!opts.json) process.stdout.write(`soak: ${opts.duration} s at ${opts.rate} measurements/s, ${opts.subscriptions} subscriptions, ${devices.length} devices\n`);
    sample();

    // Paced in 10 ms ticks: each tick sends what the rate allows by then, so a slow tick catches up.
    await new Promise((resolve) => {
      const tick = () => {
        const now = Date.now();
        if (broker.child.exitCode !== null || broker.child.signalCode !== null) {
          failures.push('the broker died during the run');
          resolve();
          return;
        }
        const due = Math.min(opts.rate * ((Math.min(now, end) - started) / 1000), opts.rate * opts.duration);
        while (sent < due) {
          const k = sent++;
          const t0 = performance.now();
          const payload = JSON.stringify({ observedAt: new Date().toISOString(), energy: k });
          clients[k % CLIENTS].publishAsync(`ngsi/default/${devices[k % devices.length]}/attrs`, payload, { qos: 1 }).then(
            () => {
              acked++;
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

    // Drain: every PUBACK, then every notification (one per acknowledged measurement).
    const drainUntil = Date.now() + 30_000;
    while ((acked + failed < sent || receiver.received() < acked) && Date.now() < drainUntil) await new Promise((r) => setTimeout(r, 50));
    sample();
    const fromWarm = samples.filter((s) => s.t >= Math.min(opts.duration * 0.2, 300));
    const summary = {
      durationS: opts.duration, rate: opts.rate, subscriptions: opts.subscriptions, sent, acked, failed, notified: receiver.received(),
      achievedRate: Math.round(sent / ((Date.now() - started) / 1000)),
      rssSlopeMiBPerHour: Number((slope(fromWarm.map((s) => ({ x: s.t / 3600, y: s.rss / 2 ** 20 })))).toFixed(2)),
      rssMaxMiB: Number((Math.max(...samples.map((s) => s.rss)) / 2 ** 20).toFixed(1)),
      pubackP99Ms: Number(p99(ackLatencies).toFixed(1)),
      notificationP99Ms: p99(receiver.latencies),
      queueMax: Math.max(...samples.map((s) => s.queue)),
      samples,
    };
    if (failed > 0 || acked < sent) failures.push(`${sent - acked} of ${sent} measurements not acknowledged`);
    if (receiver.received() < acked) failures.push(`${acked - receiver.received()} notifications missing`);
    for (const c of clients) c.end(true);
    clients = [];
    broker.child.kill('SIGTERM');
    let timer;
    const code = await Promise.race([broker.exited, new Promise((r) => (timer = setTimeout(() => r('no exit in 15 s'), 15_000)))]);
    clearTimeout(timer);
    if (code !== 0) failures.push(`the broker stopped with ${code} on SIGTERM`);
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
    if (broker.child.exitCode === null && broker.child.signalCode === null) broker.child.kill('SIGKILL');
    await broker.exited;
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    process.stderr.write(`soak: FAILED: ${failures.join('; ')}\n`);
    process.exitCode = 1;
  }
}

await main();
