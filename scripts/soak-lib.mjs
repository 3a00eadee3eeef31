// What the soak profiles share (scripts/soak.mjs and scripts/plant-room.mjs): starting an edgeld
// process of dist/ with the unit's V8 flags, its RSS, its federation status, a whole attribute history
// read from the temporal API, and the statistics of the reports.

import { spawn } from 'node:child_process';
import { readFileSync, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quantile, slopeOf } from './plant-room-plan.mjs';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** The p99 of `values` by nearest rank; 0 without values. */
export const p99 = (values) => quantile(values, 0.99) ?? 0;

/** Least-squares slope of y over x. */
export const slope = slopeOf;

export function rssBytes(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * An edgeld process (by default on free ports of 127.0.0.1, HTTP and MQTT) with its data in `dataDir`,
 * the V8 flags of the systemd unit, and `prefix` before node (e.g. `taskset -c 1`, `ip netns exec <ns>`).
 * `logFile`: every log line it writes is appended there too (the soak's record of what it did).
 */
export function startBroker(name, dataDir, env = {}, prefix = [], logFile = undefined, extraFlags = []) {
  const flags = [...pkg.config.nodeFlags.split(' '), ...extraFlags];
  const argv = [...prefix, process.execPath, ...flags, join(ROOT, 'dist/main.js')];
  const child = spawn(argv[0], argv.slice(1), {
    env: {
      PATH: process.env.PATH ?? '', STORAGE_DIR: dataDir, SERVER_HOST: '127.0.0.1', SERVER_PORT: '0', MQTT_HOST: '127.0.0.1', MQTT_PORT: '0', LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  if (logFile !== undefined) {
    const out = createWriteStream(logFile, { flags: 'a' });
    child.stderr.on('data', (chunk) => out.write(chunk));
    child.once('exit', () => out.end());
  }
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const started = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${name} did not start in 15 s:\n${err}`)), 15_000);
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
    exited.then((code) => reject(new Error(`the ${name} exited (${code}) before it started:\n${err}`)));
  });
  return { child, exited, started, stderr: () => err };
}

export const alive = (child) => child.exitCode === null && child.signalCode === null;

/** SIGTERM, then its exit code or signal (or a note after 15 s). */
export async function stop(proc) {
  proc.child.kill('SIGTERM');
  let timer;
  const code = await Promise.race([proc.exited, new Promise((r) => (timer = setTimeout(() => r('no exit in 15 s'), 15_000)))]);
  clearTimeout(timer);
  return code;
}

/** GET /ngsi-ld/v1/federation/status of the soaked broker. */
export async function federationStatus(base) {
  const res = await fetch(`${base}/ngsi-ld/v1/federation/status`, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  const body = res.status === 200 ? JSON.parse(text) : undefined;
  if (typeof body?.outboxDepth !== 'number') throw new Error(`federation status: ${res.status} ${text.slice(0, 300)}`);
  return body;
}

/**
 * Reads every instance of the attribute of one entity from a broker's temporal API (simplified
 * representation), calls `onValue` with each value and returns how many there were. An attribute over
 * temporal.limit answers 206 with `Content-Range: date-time <start>-<end>/<size>`: the page holds every
 * instance up to `end`, and the instances of one instant are never split between pages. The next page
 * asks from `end` on (timerel=after is t >= timeAt) and skips the instances at `end` the page before
 * already held.
 */
export async function readHistory(base, entityId, attr, onValue) {
  let from;
  let skipAt;
  let count = 0;
  for (;;) {
    const url = `${base}/ngsi-ld/v1/temporal/entities/${encodeURIComponent(entityId)}?attrs=${attr}&options=temporalValues`
      + (from === undefined ? '' : `&timerel=after&timeAt=${new Date(from).toISOString()}`);
    const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
    const text = await res.text();
    if (res.status === 404 && from === undefined) return 0;
    if (res.status !== 200 && res.status !== 206) throw new Error(`temporal read of ${entityId}: ${res.status} ${text.slice(0, 300)}`);
    const values = JSON.parse(text)[attr]?.values ?? [];
    let end;
    if (res.status === 206) {
      const m = /^date-time (.+Z)-(.+Z)\//.exec(res.headers.get('content-range') ?? '');
      end = m ? Date.parse(m[2]) : NaN;
      if (!Number.isFinite(end) || (from !== undefined && end <= from)) {
        throw new Error(`temporal read of ${entityId}: a 206 without progress (Content-Range ${res.headers.get('content-range')})`);
      }
    }
    let atEnd = false;
    for (const [value, at] of values) {
      const t = Date.parse(at);
      if (t === skipAt) continue;
      if (t === end) atEnd = true;
      count++;
      onValue(value);
    }
    if (res.status === 200) return count;
    from = end;
    skipAt = atEnd ? end : undefined;
  }
}
