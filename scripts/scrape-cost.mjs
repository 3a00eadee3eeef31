#!/usr/bin/env node
// Measures what one GET /metrics costs on a database of N entities (default 10,000) with history:
// fills a temporary database through the API, then times scrapes and the store's counts alone.
//
// Usage: npm run build && node scripts/scrape-cost.mjs [entities] [updates per entity]

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfig } from '../dist/config/index.js';
import { createLogger, systemClock } from '../dist/lib/index.js';
import { createBroker } from '../dist/server.js';

const entities = Number(process.argv[2] ?? 10_000);
const updates = Number(process.argv[3] ?? 4);
const dir = mkdtempSync(join(tmpdir(), 'edgeld-scrape-'));
const broker = createBroker({ config: defaultConfig(), log: createLogger('warn'), clock: systemClock, dbPath: join(dir, 'edgeld.db') });

const post = async (path, body) => {
  const res = await broker.app.request(`http://127.0.0.1${path}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = async (fn, runs) => {
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  return { median: median(ms).toFixed(2), max: Math.max(...ms).toFixed(2) };
};

try {
  for (let round = 0; round <= updates; round++) {
    for (let i = 0; i < entities; i += 1_000) {
      const batch = Array.from({ length: Math.min(1_000, entities - i) }, (_, k) => ({
        id: `urn:ngsi-ld:Sensor:${i + k}`, type: 'Sensor',
        temperature: { type: 'Property', value: 20 + round }, humidity: { type: 'Property', value: 40 + round },
      }));
      await post(`/ngsi-ld/v1/entityOperations/${round === 0 ? 'create' : 'upsert?options=update'}`, batch);
    }
  }
  const scrape = () => broker.app.request('http://127.0.0.1/metrics').then((r) => r.text());
  const first = await scrape();
  const line = (name) => first.split('\n').find((l) => l.startsWith(`${name} `));
  process.stdout.write(`${line('edgeld_entities')}\n${line('edgeld_history_rows')}\n${line('edgeld_database_size_bytes')}\n`);
  process.stdout.write(`live-entity count (once, at start-up): ${JSON.stringify(await time(() => broker.store.countLiveEntities(), 5))} ms\n`);
  process.stdout.write(`history estimate: ${JSON.stringify(await time(() => broker.store.estimateHistoryRows(), 200))} ms\n`);
  process.stdout.write(`scrape:       ${JSON.stringify(await time(scrape, 200))} ms\n`);
} finally {
  await broker.close();
  rmSync(dir, { recursive: true, force: true });
}
