// History retention: the job body with a fixed `now` (whole day buckets dropped, the straddling one
// pruned in chunks, data inside the horizon intact), and the scheduler that runs it without overlap.

import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { createJobScheduler } from '../../src/jobs/index.js';
import { silentLogger } from '../../src/lib/index.js';
import { parseDuration, runRetention } from '../../src/temporal/index.js';
import type { HistoryInstance, Store } from '../../src/store/index.js';
import { memoryStore, NS, property } from '../store/helpers.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';

const E = 'urn:ngsi-ld:Sensor:r1';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const START = Date.UTC(2026, 3, 1);
const NOW = START + 5 * DAY + 6 * HOUR;

function hourly(store: Store): HistoryInstance[] {
  const list: HistoryInstance[] = [];
  for (let t = START; t < START + 5 * DAY; t += HOUR) {
    list.push({
      entityId: E, attr: NS + 'temperature', instanceId: `urn:ngsi-ld:Instance:${randomUUID()}`, observedAt: t, createdAt: t, modifiedAt: t,
      attribute: property(t / HOUR, { observedAt: t, createdAt: t, modifiedAt: t }),
    });
  }
  store.history.upsertObserved('', list);
  return list;
}

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

describe('runRetention', () => {
  it('drops whole day buckets before the horizon, prunes the straddling one, keeps the rest intact', async () => {
    const store = memoryStore({ historyBucket: 'day' });
    stores.push(store);
    const written = hourly(store);
    const buckets = store.history.buckets();
    expect(buckets).toHaveLength(5);
    const report = await runRetention({ store, log: silentLogger, retention: { raw: parseDuration('P2D')! }, chunk: 4 }, NOW);
    const horizon = NOW - 2 * DAY;
    expect(report).toEqual({ horizon, dropped: buckets.slice(0, 3), pruned: 6 });
    expect(store.history.buckets()).toEqual(buckets.slice(3));
    expect(store.history.listForEntity({ tenant: '' }, E)).toEqual(written.filter((i) => i.observedAt! >= horizon));
    // Idempotent: nothing left to do.
    expect(await runRetention({ store, log: silentLogger, retention: { raw: parseDuration('P2D')! } }, NOW)).toEqual({ horizon, dropped: [], pruned: 0 });
  });

  it('stops after the bucket or chunk in progress when its signal aborts (shutdown); the next run goes on', async () => {
    const store = memoryStore({ historyBucket: 'day' });
    stores.push(store);
    hourly(store);
    const buckets = store.history.buckets();
    const shutdown = new AbortController();
    const running = runRetention({ store, log: silentLogger, retention: { raw: parseDuration('P2D')! }, chunk: 4, signal: shutdown.signal }, NOW);
    shutdown.abort();
    const horizon = NOW - 2 * DAY;
    expect(await running).toEqual({ horizon, dropped: buckets.slice(0, 1), pruned: 0 });
    expect(await runRetention({ store, log: silentLogger, retention: { raw: parseDuration('P2D')! }, chunk: 4 }, NOW)).toEqual({ horizon, dropped: buckets.slice(1, 3), pruned: 6 });
  });

  it('prunes row-wise only inside the one month bucket that straddles the horizon', async () => {
    const store = memoryStore({ historyBucket: 'month' });
    stores.push(store);
    const written = hourly(store);
    const report = await runRetention({ store, log: silentLogger, retention: { raw: parseDuration('P2D')! } }, NOW);
    expect(report.dropped).toEqual([]);
    expect(report.pruned).toBe(written.filter((i) => i.observedAt! < NOW - 2 * DAY).length);
    expect(store.history.listForEntity({ tenant: '' }, E).map((i) => i.observedAt)).toEqual(
      written.map((i) => i.observedAt).filter((t) => t! >= NOW - 2 * DAY));
  });
});

describe('retention through the broker', () => {
  let b: TestBroker | undefined;
  afterEach(async () => b?.close());

  it('runs with history.retention from the config, and not at all without it', async () => {
    b = await startTestBroker({ config: { history: { bucket: 'day', retention: 'P2D' } } });
    hourly(b.broker.store);
    const report = await b.broker.temporal.applyRetention(NOW);
    expect(report?.dropped).toHaveLength(3);
    await b.close();
    b = await startTestBroker({ config: { history: { bucket: 'day' } } });
    hourly(b.broker.store);
    expect(await b.broker.temporal.applyRetention(NOW)).toBeUndefined();
    expect(b.broker.store.history.buckets()).toHaveLength(5);
  });
});

describe('job scheduler', () => {
  it('never runs a job twice at once, and stop() waits for the run in progress', async () => {
    const jobs = createJobScheduler({ log: silentLogger });
    let release: () => void = () => undefined;
    let runs = 0;
    jobs.schedule('slow', '0 0 1 1 *', async () => {
      runs += 1;
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    const first = jobs.run('slow');
    const second = jobs.run('slow');
    expect(runs).toBe(1);
    let stopped = false;
    const stopping = jobs.stop().then(() => {
      stopped = true;
    });
    await Promise.resolve();
    expect(stopped).toBe(false);
    release();
    await Promise.all([first, second, stopping]);
    expect(stopped).toBe(true);
    expect(runs).toBe(1);
    await jobs.run('slow');
    expect(runs).toBe(1);
  });

  it('tells a run in progress through its signal that the scheduler stops', async () => {
    const jobs = createJobScheduler({ log: silentLogger });
    let seen: AbortSignal | undefined;
    let release: () => void = () => undefined;
    jobs.schedule('long', '0 0 1 1 *', async (signal) => {
      seen = signal;
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    const run = jobs.run('long');
    expect(seen?.aborted).toBe(false);
    const stopping = jobs.stop();
    expect(seen?.aborted).toBe(true);
    release();
    await Promise.all([run, stopping]);
  });

  it('runs a job on its schedule, once per firing, until stopped', async () => {
    const jobs = createJobScheduler({ log: silentLogger });
    const runs: number[] = [];
    jobs.schedule('every-second', '* * * * * *', () => {
      runs.push(Date.now());
    });
    const deadline = Date.now() + 5000;
    while (runs.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await jobs.stop();
    expect(runs.length).toBeGreaterThanOrEqual(2);
    // Never two runs in the same second.
    expect(new Set(runs.map((at) => Math.floor(at / 1000))).size).toBe(runs.length);
    const after = runs.length;
    await new Promise((resolve) => setTimeout(resolve, 1100)); // a whole firing period after stop()
    expect(runs.length).toBe(after);
  });

  it('refuses an invalid cron expression and reports a failing body without throwing', async () => {
    const jobs = createJobScheduler({ log: silentLogger });
    expect(() => jobs.schedule('bad', 'every hour', () => undefined)).toThrow(/invalid cron expression/);
    jobs.schedule('failing', '0 0 1 1 *', () => {
      throw new Error('boom');
    });
    await expect(jobs.run('failing')).resolves.toBeUndefined();
    await jobs.stop();
  });
});

describe('retention configuration', () => {
  it('takes an ISO 8601 duration or empty (for ever), and a cron schedule (hourly by default)', () => {
    expect(loadConfig({ argv: [], env: {} }).history).toMatchObject({ retention: '', retentionSchedule: '0 * * * *' });
    const config = loadConfig({ argv: [], env: { HISTORY_RETENTION: 'P90D', HISTORY_RETENTION_SCHEDULE: '*/5 * * * *' } });
    expect(config.history).toMatchObject({ retention: 'P90D', retentionSchedule: '*/5 * * * *' });
    for (const env of [{ HISTORY_RETENTION: '90 days' }, { HISTORY_RETENTION: 'P0D' }, { HISTORY_RETENTION_SCHEDULE: 'hourly' }]) {
      expect(() => loadConfig({ argv: [], env })).toThrow(ConfigError);
    }
  });
});
