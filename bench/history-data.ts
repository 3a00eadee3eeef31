// The history data set of the rollup benchmarks: sensors reporting one number at a fixed step for a
// number of days, written in-process through the store's own write function (what MQTT or HTTP
// ingestion leaves, without the hours it would take them), then its per-minute and per-hour
// summaries computed by the rollup job body; and the size of each level, read from the database.

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { createFixedClock, silentLogger } from '../src/lib/index.js';
import { instanceIdAt, type Entity, type HistoryInstance } from '../src/ngsi/index.js';
import { openStore } from '../src/store/index.js';
import { runRollups } from '../src/temporal/index.js';

const VOCAB = 'https://uri.etsi.org/ngsi-ld/default-context/';
export const SENSOR_TYPE = `${VOCAB}Sensor`;
/** `temperature` in the core context: the temporal API finds it without a Link header. */
export const SENSOR_ATTR = `${VOCAB}temperature`;
/** Instances per transaction while building. */
const CHUNK = 20_000;

export interface Plant {
  readonly sensors: number;
  readonly days: number;
  readonly stepMs: number;
  /** The first instant, on a whole hour. */
  readonly start: number;
}

export const sensorId = (n: number): string => `urn:ngsi-ld:Sensor:s${n}`;
/** The database file the broker opens in its storage directory. */
export const databaseOf = (dir: string): string => join(dir, 'edgeld.db');
export const instancesOf = (plant: Plant): number => plant.sensors * Math.floor((plant.days * 86_400_000) / plant.stepMs);

/** Value of sensor n at tick k: a slow daily wave with noise, two decimals, as a temperature probe reports. */
const valueAt = (n: number, k: number): number => Math.round(2000 + 500 * Math.sin(k / 5000 + n) + ((k * 7919 + n * 104_729) % 97)) / 100;

/** Writes the plant's sensors and their history into `<dir>/edgeld.db`; the time it took in ms. */
export function buildPlant(dir: string, plant: Plant, log: (line: string) => void): number {
  const ticks = Math.floor((plant.days * 86_400_000) / plant.stepMs);
  const end = plant.start + ticks * plant.stepMs;
  const store = openStore({ path: databaseOf(dir), historyBucket: 'month', log: silentLogger, clock: createFixedClock(end) });
  const started = performance.now();
  try {
    store.transaction(() => {
      for (let n = 0; n < plant.sensors; n++) store.entities.insert('', sensor(n, end - plant.stepMs, valueAt(n, ticks - 1)));
    });
    // Instances in time order, sensor after sensor within each tick: as a plant reporting together.
    let batch: HistoryInstance[] = [];
    let written = 0;
    for (let k = 0; k < ticks; k++) {
      const at = plant.start + k * plant.stepMs;
      for (let n = 0; n < plant.sensors; n++) {
        const value = valueAt(n, k);
        batch.push({
          entityId: sensorId(n), attr: SENSOR_ATTR, instanceId: instanceIdAt(at, randomUUID()), observedAt: at, createdAt: at, modifiedAt: at,
          attribute: { kind: 'Property', value, observedAt: at, createdAt: at, modifiedAt: at, sub: {} },
        });
      }
      if (batch.length >= CHUNK) {
        const chunk = batch;
        store.transaction(() => store.history.append('', chunk));
        written += chunk.length;
        batch = [];
        if (written % 1_000_000 < CHUNK) log(`[history] ${written.toLocaleString('en')} instances written in ${Math.round((performance.now() - started) / 1000)} s`);
      }
    }
    const rest = batch;
    store.transaction(() => store.history.append('', rest));
    store.checkpoint('TRUNCATE');
  } finally {
    store.close();
  }
  return performance.now() - started;
}

function sensor(n: number, at: number, value: number): Entity {
  return {
    id: sensorId(n), types: [SENSOR_TYPE], createdAt: at, modifiedAt: at,
    attrs: { [SENSOR_ATTR]: [{ kind: 'Property', value, observedAt: at, createdAt: at, modifiedAt: at, sub: {} }] },
  };
}

export interface RollupRun {
  readonly ms: number;
  readonly read: number;
  readonly minutes: number;
  readonly hours: number;
  /** The instant before which the hour tier is complete after the run. */
  readonly hourCompleteBefore: number;
}

/** Computes every summary of the database as the rollup job would at `now` (no raw retention). */
export async function rollUp(dir: string, now: number): Promise<RollupRun> {
  const store = openStore({ path: databaseOf(dir), historyBucket: 'month', log: silentLogger, clock: createFixedClock(now) });
  try {
    const started = performance.now();
    const report = await runRollups({ store, log: silentLogger, mergeBefore: Number.NEGATIVE_INFINITY }, now);
    const ms = performance.now() - started;
    store.checkpoint('TRUNCATE');
    return { ms, read: report.read, minutes: report.rolled.minute, hours: report.rolled.hour, hourCompleteBefore: store.history.rollups.completeBefore('hour') };
  } finally {
    store.close();
  }
}

export interface LevelSize {
  /** Rows of the level's tables. */
  readonly rows: number;
  /** Bytes of the pages of its tables and their indexes (free space inside them included). */
  readonly bytes: number;
}

export interface DatabaseSizes {
  /** Pages in use (page count less the free list) times the page size. */
  readonly inUse: number;
  readonly raw: LevelSize;
  readonly minute: LevelSize;
  readonly hour: LevelSize;
}

type Level = 'raw' | 'minute' | 'hour';

function levelOf(table: string): Level | undefined {
  if (/^rollup_minute_\d{6}$/.test(table)) return 'minute';
  if (/^rollup_hour_\d{4}$/.test(table)) return 'hour';
  if (/^history_\d{6,8}$/.test(table)) return 'raw';
  return undefined;
}

/** The size of each level of the closed database at `<dir>/edgeld.db`, from SQLite's dbstat. */
export function measureSizes(dir: string): DatabaseSizes {
  const db = new Database(databaseOf(dir), { readonly: true });
  try {
    // NOTE: SQLite's own answers: a name and its table, a name and its bytes, integers.
    const owners = new Map(db.prepare<[], { name: string; tbl: string }>(`SELECT name, tbl_name AS tbl FROM sqlite_master WHERE type IN ('table', 'index')`).all()
      .map((r) => [r.name, r.tbl]));
    const sizes: Record<Level, { rows: number; bytes: number }> = { raw: { rows: 0, bytes: 0 }, minute: { rows: 0, bytes: 0 }, hour: { rows: 0, bytes: 0 } };
    for (const { name, bytes } of db.prepare<[], { name: string; bytes: number }>('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name').all()) {
      const table = owners.get(name) ?? name;
      const level = levelOf(table);
      if (level === undefined) continue;
      sizes[level].bytes += bytes;
      if (table === name) sizes[level].rows += db.prepare<[], number>(`SELECT count(*) FROM "${name}"`).pluck().get() ?? 0;
    }
    const pages = db.pragma('page_count', { simple: true }) as number;
    const free = db.pragma('freelist_count', { simple: true }) as number;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    return { inUse: (pages - free) * pageSize, ...sizes };
  } finally {
    db.close();
  }
}
