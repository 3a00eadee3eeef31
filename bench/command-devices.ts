// The devices of the command round trip and the commands' issuer, on a worker thread of their own,
// so that their work does not delay the load generator measuring updates on the main thread: 100
// mqtt clients, each answering OK on cmdexe as soon as a command arrives, and HTTP PATCHes of the
// command attribute at a fixed rate (open loop) over keep-alive connections.

import { Worker } from 'node:worker_threads';

// NOTE: plain JavaScript evaluated in the worker: the bench is bundled, and a worker of its own file
// would need a bundle of its own. `require` resolves from the working directory (the repository).
const WORKER_SOURCE = `
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

export interface CommandReport {
  /** Round trips (ms) of the commands answered since the last report. */
  roundTrips: number[];
  /** Commands issued so far never answered. */
  lost: number;
  /** Commands received again after their answer. */
  duplicates: number;
  /** Commands issued so far. */
  issued: number;
}

export interface CommandDevices {
  /** Issues commands at the rate for `durationMs`; resolves when every PATCH is answered. */
  issue(durationMs: number): Promise<{ issued: number; failed: number }>;
  /** Waits (at most `settleMs`) for every command issued to be answered, then reports. */
  report(settleMs: number): Promise<CommandReport>;
  end(): Promise<void>;
}

/** Starts the worker and connects the devices (`default/cmd<n>`, each subscribed to its cmd topic). */
export async function startCommandDevices(options: { port: number; mqttPort: number; devices: number; rate: number }): Promise<CommandDevices> {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ...options } });
  const ask = <T>(message: Record<string, unknown>, answer: string): Promise<T> => new Promise((resolve, reject) => {
    const onMessage = (m: { type: string; message?: string }): void => {
      if (m.type !== answer && m.type !== 'error') return;
      worker.off('message', onMessage);
      if (m.type === 'error') reject(new Error(m.message));
      else resolve(m as T);
    };
    worker.on('message', onMessage);
    worker.postMessage(message);
  });
  worker.once('error', (err) => process.stderr.write(`command devices: ${String(err)}\n`));
  await ask({ type: 'connect' }, 'connected');
  return {
    issue: (durationMs) => ask({ type: 'issue', durationMs }, 'issued'),
    report: (settleMs) => ask({ type: 'report', settleMs }, 'report'),
    async end() {
      await ask({ type: 'end' }, 'ended');
      await worker.terminate();
    },
  };
}
