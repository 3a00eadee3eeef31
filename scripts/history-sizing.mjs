#!/usr/bin/env node
// The sizing table of attribute history (docs/history.md, "Sizing history"): for a number of
// sensors reporting one number at a rate, the bytes a day of raw instances and of per-minute and
// per-hour summaries take, and how many days of history a 32 GB card holds, keeping raw instances
// only or raw instances 30 days, minute summaries a year and hour summaries for ever. Computed from
// measured bytes per raw instance, per minute summary and per hour summary (pages of their tables
// and indexes, free space inside them included): the defaults are those `npm run bench -- --only
// history` measured (history.plant-30d.raw/.minute/.hour); --measure measures them again on a
// temporary database with the built broker (run `npm run build` first).
//
// Usage: node scripts/history-sizing.mjs [--raw BYTES] [--minute BYTES] [--hour BYTES]
//          [--card-gb GB] [--usable SHARE] [--measure]

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';

/** Bytes per row measured by `npm run bench -- --only history` (4 sensors × 30 days, one instance every 5 s). */
export const MEASURED = { raw: 85, minute: 101, hour: 104 };
const SENSORS = [50, 200, 500, 2000];
const EVERY_S = [1, 5, 60];
const RAW_DAYS = 30;
const MINUTE_DAYS = 365;
const HUNDRED_YEARS = 36_500;
const DAY_S = 86_400;

const USAGE = `usage: node scripts/history-sizing.mjs [--raw BYTES] [--minute BYTES] [--hour BYTES] [--card-gb GB] [--usable SHARE] [--measure]
  --raw BYTES      bytes per raw history instance (default ${MEASURED.raw})
  --minute BYTES   bytes per minute summary (default ${MEASURED.minute})
  --hour BYTES     bytes per hour summary (default ${MEASURED.hour})
  --card-gb GB     size of the card in GB of 10^9 bytes (default 32)
  --usable SHARE   share of the card history may take (default 0.5)
  --measure        measure the bytes per row first, on a temporary database, with dist/ (npm run build)`;

/**
 * Days until `usable` bytes hold the history written at `perDay` bytes a day of each level, each
 * level kept `keep` days (Infinity: for ever); Infinity when it never fills.
 */
export function daysToFill(perDay, keep, usable) {
  const levels = Object.keys(perDay).filter((k) => perDay[k] > 0);
  // The size grows piecewise linearly: every level until its retention, then the others.
  const breaks = [...new Set(levels.map((k) => keep[k]).filter(Number.isFinite))].sort((a, b) => a - b);
  let day = 0;
  let size = 0;
  for (const end of [...breaks, Number.POSITIVE_INFINITY]) {
    const rate = levels.filter((k) => keep[k] > day).reduce((sum, k) => sum + perDay[k], 0);
    if (rate === 0) return Number.POSITIVE_INFINITY;
    if (size + rate * (end - day) >= usable) return day + (usable - size) / rate;
    size += rate * (end - day);
    day = end;
  }
  return Number.POSITIVE_INFINITY;
}

const count = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const oneDecimal = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

function formatDays(days) {
  if (days >= HUNDRED_YEARS) return '> 100 years';
  if (days >= 730) return `${oneDecimal.format(days / 365)} years`;
  return days < 10 ? oneDecimal.format(days) : count.format(Math.floor(days));
}

function formatMb(bytes) {
  const mb = bytes / 1e6;
  return mb < 100 ? oneDecimal.format(mb) : count.format(mb);
}

/** One line of the table: a number of sensors at one instance every `everyS` seconds. */
export function sizingRow(bytes, sensors, everyS, usable) {
  const instances = sensors * (DAY_S / everyS);
  const perDay = {
    raw: instances * bytes.raw,
    // A minute with an instance has a summary, an hour too: never more summaries than instances.
    minute: sensors * Math.min(1_440, DAY_S / everyS) * bytes.minute,
    hour: sensors * Math.min(24, DAY_S / everyS) * bytes.hour,
  };
  const rawOnly = daysToFill({ raw: perDay.raw }, { raw: Number.POSITIVE_INFINITY }, usable);
  const tiered = daysToFill(perDay, { raw: RAW_DAYS, minute: MINUTE_DAYS, hour: Number.POSITIVE_INFINITY }, usable);
  const afterYear = RAW_DAYS * perDay.raw + MINUTE_DAYS * perDay.minute + MINUTE_DAYS * perDay.hour;
  return { instances, perDay, rawOnly, tiered, afterYear };
}

/** The table and the sentence above it, as Markdown. */
export function sizingTable(bytes, cardGb = 32, usableShare = 0.5) {
  const usable = cardGb * 1e9 * usableShare;
  const lines = [
    `Bytes per row: ${bytes.raw} a raw instance, ${bytes.minute} a minute summary, ${bytes.hour} an hour summary; ` +
      `a ${cardGb} GB card of which ${Math.round(usableShare * 100)}% (${oneDecimal.format(usable / 1e9)} GB) holds history.`,
    '',
    '| Sensors | Every | Instances a day | Raw only: MB a day | Raw only: days on the card | Tiers: MB a day (first 30 days) | Tiers: GB after a year | Tiers: days on the card |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const sensors of SENSORS) {
    for (const everyS of EVERY_S) {
      const r = sizingRow(bytes, sensors, everyS, usable);
      lines.push(`| ${count.format(sensors)} | ${everyS} s | ${count.format(r.instances)} | ${formatMb(r.perDay.raw)} | ${formatDays(r.rawOnly)} | ` +
        `${formatMb(r.perDay.raw + r.perDay.minute + r.perDay.hour)} | ${oneDecimal.format(r.afterYear / 1e9)} | ${formatDays(r.tiered)} |`);
    }
  }
  return lines.join('\n');
}

/** Measures bytes per row on a temporary database: sensors × one day every 5 s, summarized, then dbstat. */
async function measure(sensors = 20) {
  const dist = (p) => import(pathToFileURL(join(fileURLToPath(new URL('..', import.meta.url)), 'dist', p)).href);
  const [{ openStore }, { runRollups }, { createFixedClock, silentLogger }, { instanceIdAt }] =
    await Promise.all([dist('store/index.js'), dist('temporal/index.js'), dist('lib/index.js'), dist('ngsi/index.js')]);
  const { default: Database } = await import('better-sqlite3');
  const dir = mkdtempSync(join(tmpdir(), 'edgeld-sizing-'));
  try {
    const path = join(dir, 'edgeld.db');
    const start = Date.UTC(2026, 0, 1);
    const attr = 'https://uri.etsi.org/ngsi-ld/default-context/temperature';
    const store = openStore({ path, historyBucket: 'month', log: silentLogger, clock: createFixedClock(start + 86_400_000) });
    for (let k = 0; k < 17_280; k += 1_000) {
      const batch = [];
      for (let j = k; j < Math.min(17_280, k + 1_000); j++) {
        const at = start + j * 5_000;
        for (let n = 0; n < sensors; n++) {
          const value = Math.round(2000 + 500 * Math.sin(j / 5000 + n) + ((j * 7919 + n * 104_729) % 97)) / 100;
          batch.push({ entityId: `urn:ngsi-ld:Sensor:s${n}`, attr, instanceId: instanceIdAt(at, randomUUID()), observedAt: at, createdAt: at, modifiedAt: at,
            attribute: { kind: 'Property', value, observedAt: at, createdAt: at, modifiedAt: at, sub: {} } });
        }
      }
      store.transaction(() => store.history.append('', batch));
    }
    await runRollups({ store, log: silentLogger, mergeBefore: Number.NEGATIVE_INFINITY }, Date.now());
    store.checkpoint('TRUNCATE');
    store.close();
    const db = new Database(path, { readonly: true });
    const owners = new Map(db.prepare("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')").raw().all());
    const level = (t) => (/^rollup_minute_/.test(t) ? 'minute' : /^rollup_hour_/.test(t) ? 'hour' : /^history_\d/.test(t) ? 'raw' : undefined);
    const sizes = { raw: { rows: 0, bytes: 0 }, minute: { rows: 0, bytes: 0 }, hour: { rows: 0, bytes: 0 } };
    for (const [name, bytes] of db.prepare('SELECT name, sum(pgsize) FROM dbstat GROUP BY name').raw().all()) {
      const table = owners.get(name) ?? name;
      const l = level(table);
      if (l === undefined) continue;
      sizes[l].bytes += bytes;
      if (table === name) sizes[l].rows += db.prepare(`SELECT count(*) FROM "${name}"`).pluck().get();
    }
    db.close();
    return { raw: Math.round(sizes.raw.bytes / sizes.raw.rows), minute: Math.round(sizes.minute.bytes / sizes.minute.rows), hour: Math.round(sizes.hour.bytes / sizes.hour.rows) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function positive(name, text, fallback) {
  if (text === undefined) return fallback;
  const v = Number(text);
  if (!(v > 0)) throw new Error(`--${name}: expected a positive number\n${USAGE}`);
  return v;
}

async function main() {
  const { values } = parseArgs({
    options: {
      raw: { type: 'string' }, minute: { type: 'string' }, hour: { type: 'string' }, 'card-gb': { type: 'string' }, usable: { type: 'string' },
      measure: { type: 'boolean', default: false }, help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const base = values.measure ? await measure() : MEASURED;
  if (values.measure) process.stderr.write(`measured: ${base.raw} bytes a raw instance, ${base.minute} a minute summary, ${base.hour} an hour summary\n`);
  const bytes = { raw: positive('raw', values.raw, base.raw), minute: positive('minute', values.minute, base.minute), hour: positive('hour', values.hour, base.hour) };
  const usable = positive('usable', values.usable, 0.5);
  if (usable > 1) throw new Error(`--usable: expected a share between 0 and 1\n${USAGE}`);
  process.stdout.write(`${sizingTable(bytes, positive('card-gb', values['card-gb'], 32), usable)}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
