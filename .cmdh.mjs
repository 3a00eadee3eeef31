// ../../tmp/prof/cmdh.ts
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";

// bench/command-devices.ts
import { Worker } from "node:worker_threads";
var WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const mqtt = require('mqtt');
const { port, mqttPort, devices, rate } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const sent = new Map();
const answered = new Set();
let roundTrips = [];
let duplicates = 0;
let next = 0;
const clients = [];
const valve = (n) => 'urn:ngsi-ld:Valve:cmd' + n;
function patch(value) {
  return new Promise((resolve) => {
    const body = JSON.stringify({ type: 'Property', value });
    const req = http.request({ host: '127.0.0.1', port, agent, method: 'PATCH', timeout: 30000,
      path: '/ngsi-ld/v1/entities/' + encodeURIComponent(valve(value % devices)) + '/attrs/open',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode === 204));
    });
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.once('error', () => resolve(false));
    req.end(body);
  });
}
async function connectAll() {
  for (let n = 0; n < devices; n++) {
    const client = mqtt.connect('mqtt://127.0.0.1:' + mqttPort, { clientId: 'default/cmd' + n, reconnectPeriod: 0 });
    await new Promise((resolve, reject) => { client.once('connect', resolve); client.once('error', reject); });
    client.on('message', (_t, payload) => {
      const cmd = JSON.parse(payload.toString());
      if (answered.has(cmd.value)) duplicates++;
      client.publish('ngsi/default/cmd' + n + '/cmdexe', JSON.stringify({ id: cmd.id, status: 'OK', info: { done: cmd.value } }), { qos: 1 }, (err) => {
        const at = sent.get(cmd.value);
        if (err || at === undefined || answered.has(cmd.value)) return;
        answered.add(cmd.value);
        roundTrips.push(performance.now() - at);
      });
    });
    await new Promise((resolve, reject) => client.subscribe('ngsi/default/cmd' + n + '/cmd', { qos: 1 }, (err) => (err ? reject(err) : resolve())));
    clients.push(client);
  }
}
async function issue(durationMs) {
  const t0 = performance.now();
  const inFlight = [];
  let issued = 0;
  let failed = 0;
  for (let k = 0; performance.now() - t0 < durationMs; k++) {
    const wait = t0 + (k * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const value = next++;
    sent.set(value, performance.now());
    issued++;
    inFlight.push(patch(value).then((ok) => { if (!ok) failed++; }));
  }
  await Promise.all(inFlight);
  return { issued, failed };
}
async function report(settleMs) {
  const deadline = performance.now() + settleMs;
  const isDone = () => { for (const v of sent.keys()) if (!answered.has(v)) return false; return true; };
  while (!isDone() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  let lost = 0;
  for (const v of sent.keys()) if (!answered.has(v)) lost++;
  const out = { roundTrips, lost, duplicates, issued: sent.size };
  roundTrips = [];
  return out;
}
parentPort.on('message', async (m) => {
  try {
    if (m.type === 'connect') { await connectAll(); parentPort.postMessage({ type: 'connected' }); }
    if (m.type === 'issue') parentPort.postMessage({ type: 'issued', ...(await issue(m.durationMs)) });
    if (m.type === 'report') parentPort.postMessage({ type: 'report', ...(await report(m.settleMs)) });
    if (m.type === 'end') { for (const c of clients) c.end(true); agent.destroy(); parentPort.postMessage({ type: 'ended' }); }
  } catch (err) {
    parentPort.postMessage({ type: 'error', message: String(err && err.stack || err) });
  }
});
`;
async function startCommandDevices(options) {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ...options } });
  const ask = (message, answer) => new Promise((resolve, reject) => {
    const onMessage = (m) => {
      if (m.type !== answer && m.type !== "error") return;
      worker.off("message", onMessage);
      if (m.type === "error") reject(new Error(m.message));
      else resolve(m);
    };
    worker.on("message", onMessage);
    worker.postMessage(message);
  });
  worker.once("error", (err) => process.stderr.write(`command devices: ${String(err)}
`));
  await ask({ type: "connect" }, "connected");
  return {
    issue: (durationMs) => ask({ type: "issue", durationMs }, "issued"),
    report: (settleMs) => ask({ type: "report", settleMs }, "report"),
    async end() {
      await ask({ type: "end" }, "ended");
      await worker.terminate();
    }
  };
}

// bench/load.ts
import { Agent, request } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { performance as performance2 } from "node:perf_hooks";
var REQUEST_TIMEOUT_MS = 1e4;
var httpsAgents = /* @__PURE__ */ new WeakMap();
function clientOf(options) {
  const { tls } = options;
  if (tls === void 0) return { agent: new Agent({ keepAlive: true, maxSockets: options.concurrency }), request, isShared: false };
  let agent = httpsAgents.get(tls);
  if (agent === void 0) {
    agent = new HttpsAgent({ keepAlive: true, ca: tls.ca });
    httpsAgents.set(tls, agent);
  }
  return { agent, request: httpsRequest, isShared: true };
}
function send(client, port, req) {
  const headers = req.body === void 0 ? { ...req.headers } : { ...req.headers, "content-type": "application/json", "content-length": Buffer.byteLength(req.body) };
  return new Promise((resolve, reject) => {
    const out = client.request({ host: "127.0.0.1", port, method: req.method, path: req.path, agent: client.agent, headers }, (res) => {
      const chunks = [];
      res.on("data", (chunk) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
    });
    out.setTimeout(REQUEST_TIMEOUT_MS, () => out.destroy(new Error(`no response within ${REQUEST_TIMEOUT_MS} ms`)));
    out.on("error", reject);
    out.end(req.body);
  });
}
function percentile(sorted, p2) {
  if (p2 > 0 && p2 < 1) throw new RangeError(`percentile takes a percent from 1 to 100, not ${p2}`);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p2 / 100 * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}
async function runLoad(options) {
  const http = clientOf(options);
  const latencies = [];
  let issued = 0;
  let completed = 0;
  let errors = 0;
  let firstError;
  let firstErrorStatus;
  let responseBytes;
  const start = performance2.now();
  const deadline = start + options.durationMs;
  const fail = (n, status, detail) => {
    errors++;
    firstError ??= `request ${n}: ${detail}`;
    firstErrorStatus ??= status;
  };
  const inspect = (n, req, reply) => {
    if (reply.status !== options.expectStatus) {
      fail(n, reply.status, `${req.method} ${req.path} \u2192 ${reply.status} ${reply.body.slice(0, 300)}`);
      return;
    }
    if (responseBytes !== void 0) return;
    responseBytes = Buffer.byteLength(reply.body);
    const problem = options.check?.(reply.body);
    if (problem !== void 0) fail(n, reply.status, `${req.method} ${req.path} \u2192 ${problem}`);
  };
  const isStopped = () => options.stopOnError === true && errors > 0;
  const worker = async (client) => {
    while (issued < options.maxRequests && performance2.now() < deadline && !isStopped()) {
      const n = issued++;
      const req = options.next(n, client);
      const t0 = performance2.now();
      try {
        inspect(n, req, await send(http, options.port, req));
      } catch (err) {
        fail(n, 0, `${req.method} ${req.path} \u2192 ${err instanceof Error ? err.message : String(err)}`);
      }
      latencies.push(performance2.now() - t0);
      completed++;
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, (_, client) => worker(client)));
  } finally {
    if (!http.isShared) http.agent.destroy();
  }
  const durationMs = performance2.now() - start;
  const sorted = Float64Array.from(latencies).sort();
  return {
    completed,
    errors,
    firstError,
    firstErrorStatus,
    responseBytes,
    durationMs,
    busyMs: latencies.reduce((sum, ms) => sum + ms, 0),
    requestsPerSecond: completed / (durationMs / 1e3),
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99)
  };
}

// ../../tmp/prof/cmdh.ts
import { readdirSync } from "node:fs";
var dir = mkdtempSync("/tmp/prof/d-");
var flags = (process.env.FLAGS ?? "--max-old-space-size=128 --max-semi-space-size=4 --no-allocation-site-pretenuring --heap-growing-percent=50").split(" ").filter(Boolean);
var p = spawn(process.execPath, [...flags, "/work/main/dist/main.js"], { env: { PATH: process.env.PATH, SERVER_PORT: "5501", SERVER_HOST: "127.0.0.1", STORAGE_DIR: dir, LOG_LEVEL: "warn", PROF_TX: "1", MQTT_PORT: "5997", NODE_ENV: "production", MQTT_MAX_CONNECTIONS_PER_ADDRESS: "200" }, stdio: "inherit" });
for (let i = 0; i < 200; i++) {
  try {
    const r = await fetch("http://127.0.0.1:5501/ready");
    if (r.status === 200) break;
  } catch {
  }
  await new Promise((r) => setTimeout(r, 50));
}
var call = async (method, path, body) => {
  const r = await fetch(`http://127.0.0.1:5501${path}`, { method, body: body && JSON.stringify(body), headers: body ? { "content-type": "application/json" } : {} });
  await r.arrayBuffer();
  return r.status;
};
for (let n = 0; n < 100; n++) {
  await call("POST", "/edgeld/v1/devices", { deviceId: `cmd${n}`, entityId: `urn:ngsi-ld:Valve:cmd${n}`, entityType: "Valve", commands: [{ name: "open" }] });
  await call("POST", "/ngsi-ld/v1/entities", { id: `urn:ngsi-ld:Valve:cmd${n}`, type: "Valve", open: { type: "Property", value: -1 } });
}
for (let n = 0; n < 100; n++) await call("POST", "/ngsi-ld/v1/entities", { id: `urn:ngsi-ld:Sensor:cmd${n}`, type: "Sensor", temperature: { type: "Property", value: 0 } });
var tasks = () => Object.fromEntries(readdirSync(`/proc/${p.pid}/task`).map((t) => {
  const raw = readFileSync(`/proc/${p.pid}/task/${t}/stat`, "utf8");
  const name = raw.slice(raw.indexOf("(") + 1, raw.lastIndexOf(")"));
  const f = raw.split(") ")[1].split(" ");
  return [`${t}:${name}`, (+f[11] + +f[12]) * 10];
}));
var cpu = () => {
  const f = readFileSync(`/proc/${p.pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (+f[11] + +f[12]) * 10;
};
var straceStart = async () => {
  if (!process.env.STRACE) return void 0;
  const tids = readdirSync(`/proc/${p.pid}/task`);
  const st = spawn("strace", ["-c", "-o", process.env.STRACE, ...tids.flatMap((t) => ["-p", t])], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 1500));
  return st;
};
var straceStop = async (st) => {
  if (!st) return;
  st.kill("SIGINT");
  await new Promise((r) => st.on("exit", r));
};
var devices = await startCommandDevices({ port: 5501, mqttPort: 5997, devices: 100, rate: 100 });
var k = 0;
var updates = (ms) => runLoad({ port: 5501, concurrency: 16, maxRequests: Number.MAX_SAFE_INTEGER, durationMs: ms, expectStatus: 204, next: () => {
  const i = k++;
  return { method: "PATCH", path: `/ngsi-ld/v1/entities/urn:ngsi-ld:Sensor:cmd${i % 100}/attrs`, body: JSON.stringify({ temperature: { type: "Property", value: i } }), headers: { "content-type": "application/json" } };
} });
await devices.issue(1500);
await devices.report(1e4);
await updates(1500);
if (process.env.ONLYBOTH) {
  const [u] = await Promise.all([updates(1e4), devices.issue(1e4)]);
  console.log("both req/s", u.requestsPerSecond.toFixed(0));
  await devices.end();
  p.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 2e3));
  process.exit(0);
}
if (process.env.ONLYUPD) {
  const u = await updates(1e4);
  console.log("upd req/s", u.requestsPerSecond.toFixed(0));
  await devices.end();
  p.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 2e3));
  process.exit(0);
}
if (process.env.ONLYPATCH) {
  const stp = await straceStart();
  const t0 = tasks();
  const c0 = cpu();
  const st = performance.now();
  let i = 0;
  const inflight = [];
  while (performance.now() - st < 8e3) {
    const due = st + i * 10;
    const w = due - performance.now();
    if (w > 0) await new Promise((r) => setTimeout(r, w));
    const path = process.env.ONLYPATCH === "valve" ? `/ngsi-ld/v1/entities/urn:ngsi-ld:Valve:cmd${i % 100}/attrs` : `/ngsi-ld/v1/entities/urn:ngsi-ld:Sensor:cmd${i % 100}/attrs`;
    const body = process.env.ONLYPATCH === "valve" ? { other: { type: "Property", value: i } } : { temperature: { type: "Property", value: i } };
    inflight.push(call("PATCH", path, body));
    i++;
  }
  await Promise.all(inflight);
  const c1 = cpu();
  const t1 = tasks();
  for (const k2 of Object.keys(t1)) if (t1[k2] - (t0[k2] ?? 0) > 0) console.log(k2, t1[k2] - (t0[k2] ?? 0), "ms");
  console.log("patch only ms/patch", ((c1 - c0) / i).toFixed(3), i);
  await straceStop(stp);
  await devices.end();
  p.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 2e3));
  process.exit(0);
}
if (process.env.ONLYCMD) {
  const stp = await straceStart();
  const t0 = tasks();
  const c0 = cpu();
  await devices.issue(8e3);
  const c1 = cpu();
  const t1 = tasks();
  for (const k2 of Object.keys(t1)) if (t1[k2] - (t0[k2] ?? 0) > 0) console.log(k2, t1[k2] - (t0[k2] ?? 0), "ms");
  console.log("cmd only ms/cmd", ((c1 - c0) / 800).toFixed(3));
  await straceStop(stp);
  await devices.end();
  p.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 2e3));
  process.exit(0);
}
for (let r = 0; r < 2; r++) {
  let h0 = process.cpuUsage();
  let c0 = cpu();
  const u = await updates(4e3);
  let c1 = cpu();
  let h1 = process.cpuUsage(h0);
  console.log("harness cpu% upd", ((h1.user + h1.system) / 4e4).toFixed(0));
  const n = u.requestsPerSecond * 4;
  console.log("updates alone", u.requestsPerSecond.toFixed(0), "req/s; broker ms/update", ((c1 - c0) / n).toFixed(3), "broker cpu%", ((c1 - c0) / 40).toFixed(0));
  c0 = cpu();
  const f = await devices.issue(4e3);
  c1 = cpu();
  console.log("commands alone: broker ms per command", ((c1 - c0) / 400).toFixed(3), "cpu%", ((c1 - c0) / 40).toFixed(0));
  h0 = process.cpuUsage();
  c0 = cpu();
  const [u2] = await Promise.all([updates(4e3), devices.issue(4e3)]);
  c1 = cpu();
  h1 = process.cpuUsage(h0);
  console.log("harness cpu% both", ((h1.user + h1.system) / 4e4).toFixed(0));
  console.log("both", u2.requestsPerSecond.toFixed(0), "req/s, ratio", (u2.requestsPerSecond / u.requestsPerSecond).toFixed(2), "broker cpu%", ((c1 - c0) / 40).toFixed(0));
}
await devices.end();
p.kill();
process.exit(0);
