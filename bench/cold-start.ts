// Cold start: the time from spawning the broker to GET /ready answering 200 on a database that holds
// 100,000 entities and 10 million history rows. The database is built once, in-process, through the
// store's own write functions (what HTTP or MQTT writes would leave, without the hours it would take
// them), checkpointed and closed; the broker is then started on it several times. The first start
// follows a drop of the page cache when the system allows it (root on Linux), as after a reboot.

import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { get } from 'node:http';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createFixedClock, silentLogger } from '../src/lib/index.js';
import { openStore } from '../src/store/index.js';
import type { Entity, HistoryInstance } from '../src/ngsi/index.js';
import { findFreePort, startServer } from './child.js';
import { readRssBytes } from './proc.js';
import type { Row } from './report.js';
import type { Cleanup } from './cleanup.js';

const VOCAB = 'https://uri.etsi.org/ngsi-ld/default-context/';
const TYPE = `${VOCAB}Meter`;
const ATTR = `${VOCAB}power`;
export const COLD_ENTITIES = 100_000;
export const COLD_HISTORY_ROWS = 10_000_000;
/** Instances per transaction while building. */
const CHUNK = 20_000;
/** One instance a minute per entity, ending at START + rows per entity minutes. */
const START = Date.UTC(2024, 0, 1);
const STEP_MS = 60_000;
const STARTS = 3;
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 15_000;

export interface ColdStartOptions {
  readonly script: string;
  readonly nodeFlags: readonly string[];
  readonly tmp: string | undefined;
  readonly entities?: number;
  readonly historyRows?: number;
  /** Drop the page cache before the first start when the system allows it (default true). */
  readonly dropPageCache?: boolean;
  readonly log: (line: string) => void;
}

export interface ColdStartResult {
  readonly rows: Row[];
  readonly notes: string[];
}

const meter = (n: number, at: number): Entity => ({
  id: `urn:ngsi-ld:Meter:${n}`, types: [TYPE], createdAt: at, modifiedAt: at,
  attrs: { [ATTR]: [{ kind: 'Property', value: n % 1000, observedAt: at, createdAt: at, modifiedAt: at, sub: {} }] },
});

/** Builds the database under `dir` (as `<dir>/edgeld.db`); returns its size in bytes. */
function buildDatabase(dir: string, entities: number, historyRows: number, log: (line: string) => void): number {
  const path = join(dir, 'edgeld.db');
  const store = openStore({ path, historyBucket: 'month', log: silentLogger, clock: createFixedClock(START) });
  try {
    const perEntity = Math.max(1, Math.floor(historyRows / entities));
    const last = START + perEntity * STEP_MS;
    for (let first = 0; first < entities; first += CHUNK) {
      store.transaction(() => {
        for (let n = first; n < Math.min(entities, first + CHUNK); n++) store.entities.insert('', meter(n, last));
      });
    }
    // Instances in time order, entity after entity within each minute: as meters reporting together.
    let written = 0;
    let batch: HistoryInstance[] = [];
    const flush = (): void => {
      if (batch.length === 0) return;
      const chunk = batch;
      store.transaction(() => store.history.append('', chunk));
      written += chunk.length;
      batch = [];
    };
    const started = performance.now();
    for (let k = 0; k < perEntity && written + batch.length < historyRows; k++) {
      const at = START + k * STEP_MS;
      for (let n = 0; n < entities && written + batch.length < historyRows; n++) {
        batch.push({
          entityId: `urn:ngsi-ld:Meter:${n}`, attr: ATTR, instanceId: `urn:ngsi-ld:Instance:${randomUUID()}`,
          observedAt: at, createdAt: at, modifiedAt: at,
          attribute: { kind: 'Property', value: (n + k) % 1000, observedAt: at, createdAt: at, modifiedAt: at, sub: {} },
        });
        if (batch.length >= CHUNK) flush();
      }
      if (k % 10 === 9) log(`[cold-start] ${written.toLocaleString('en')} history rows written in ${Math.round((performance.now() - started) / 1000)} s`);
    }
    flush();
  } finally {
    store.close();
  }
  return statSync(path).size;
}

/** Empties the page cache (needs root on Linux); false when the system does not allow it. */
function dropPageCache(): boolean {
  try {
    execFileSync('sync');
    writeFileSync('/proc/sys/vm/drop_caches', '3');
    return true;
  } catch {
    return false;
  }
}

/** How many entities of the built type the broker counts (NGSILD-Results-Count). */
function countMeters(port: number): Promise<number> {
  const path = `/ngsi-ld/v1/entities?type=${encodeURIComponent(TYPE)}&count=true&limit=0`;
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path, timeout: 30_000 }, (res) => {
      res.resume();
      const count = Number(res.headers['ngsild-results-count']);
      if (res.statusCode === 200 && Number.isInteger(count)) resolve(count);
      else reject(new Error(`counting the built entities: ${res.statusCode ?? 0}`));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('counting the built entities timed out')));
  });
}

/** Starts the broker on `dir`; milliseconds until GET /ready answered 200, and the RSS then. */
async function timeStart(options: ColdStartOptions, dir: string, cleanup: Cleanup, entities: number): Promise<{ ms: number; rss: number | undefined }> {
  const port = await findFreePort();
  const mqttPort = await findFreePort();
  let release = async (): Promise<void> => {};
  const started = performance.now();
  const server = await startServer({
    name: 'broker', script: options.script, nodeFlags: options.nodeFlags, port, readyTimeoutMs: READY_TIMEOUT_MS, pollMs: 5,
    env: { SERVER_PORT: String(port), SERVER_HOST: '127.0.0.1', MQTT_PORT: String(mqttPort), STORAGE_DIR: dir, LOG_LEVEL: 'warn', NODE_ENV: 'production' },
    register: (s) => {
      release = cleanup.add(async () => {
        await s.stop(STOP_GRACE_MS);
      }, () => s.kill());
    },
  });
  try {
    const ms = performance.now() - started;
    const rss = await readRssBytes(server.pid);
    // A start that did not find the database (another directory, a failed migration) is no cold start.
    const counted = await countMeters(port);
    if (counted !== entities) throw new Error(`the broker counts ${counted} of the ${entities} entities built`);
    return { ms, rss };
  } finally {
    await release();
  }
}

/** Builds the database, then starts the broker on it STARTS times; rows and notes for the report. */
export async function benchColdStart(options: ColdStartOptions, cleanup: Cleanup): Promise<ColdStartResult> {
  const entities = options.entities ?? COLD_ENTITIES;
  const historyRows = options.historyRows ?? COLD_HISTORY_ROWS;
  const dir = mkdtempSync(join(options.tmp ?? tmpdir(), 'edgeld-cold-'));
  const removeDir = cleanup.add(async () => rmSync(dir, { recursive: true, force: true }), () => rmSync(dir, { recursive: true, force: true }));
  try {
    options.log(`[cold-start] building ${entities.toLocaleString('en')} entities and ${historyRows.toLocaleString('en')} history rows in ${dir}`);
    const builtAt = performance.now();
    const bytes = buildDatabase(dir, entities, historyRows, options.log);
    const buildS = (performance.now() - builtAt) / 1000;
    const dropped = options.dropPageCache !== false && dropPageCache();
    const starts: Array<{ ms: number; rss: number | undefined }> = [];
    for (let i = 0; i < STARTS; i++) {
      starts.push(await timeStart(options, dir, cleanup, entities));
      options.log(`[cold-start] start ${i + 1}: ready in ${Math.round(starts[i]!.ms)} ms`);
    }
    const mib = (b: number | undefined): number | null => (b === undefined ? null : Math.round((b / 1_048_576) * 10) / 10);
    const round = (v: number): number => Math.round(v);
    const warm = starts.slice(1).map((s) => s.ms);
    const rows: Row[] = [
      { key: 'coldstart.first', group: 'cold start', unit: 'ms', value: round(starts[0]!.ms), ceiling: null, ratio: null },
      { key: 'coldstart.again', group: 'cold start', unit: 'ms', value: round(Math.max(...warm)), ceiling: null, ratio: null },
      { key: 'coldstart.rss', group: 'cold start', unit: 'MiB', value: mib(starts[starts.length - 1]!.rss), ceiling: null, ratio: null },
      { key: 'coldstart.db', group: 'cold start', unit: 'MiB', value: mib(bytes), ceiling: null, ratio: null },
    ];
    const notes = [
      `coldstart.*: spawn of the broker to the first 200 of GET /ready (polled every 5 ms) on a database of ${entities.toLocaleString('en')} entities and ${historyRows.toLocaleString('en')} history rows (built in-process in ${Math.round(buildS)} s); ` +
        `first: the first start, ${dropped ? 'after the page cache was dropped' : 'with the page cache as the build left it'}; again: the slowest of ${STARTS - 1} starts after it; rss: the broker's RSS when ready (each start is checked to count every entity built); target: < 2,000 ms`,
      `target coldstart.first < 2000 ms: ${round(starts[0]!.ms)}, ${starts[0]!.ms < 2_000 ? 'met' : 'MISSED'}`,
    ];
    return { rows, notes };
  } finally {
    await removeDir();
  }
}
