// The disk budget (storage.max-bytes) on a real database file: four days of history in day buckets;
// with the rollups not computed nothing can go, so writes get 507 and MQTT measurements are not acknowledged;
// once the rollups exist, the oldest raw buckets go first (an hourly aggregation over them is still
// answered, from the hour summaries, with the NGSILD-Warning header) and writes are accepted again;
// with a smaller budget the minute summaries follow the raw buckets. GET /edgeld/v1/storage shows the
// pages in use, the bytes per tier (no more than the file) and the bytes written per day, which a
// restart keeps. With rollups off, the oldest raw bucket goes all the same, with a warning.

import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger, type LogLevel } from '../../../src/lib/index.js';
import { DEFAULT_CONTEXT_VOCAB } from '../../../src/ngsi/index.js';
import type { HistoryInstance } from '../../../src/store/index.js';
import { startTestBroker, tempDir, T0, type ConfigPatch, type TestBroker } from '../../helpers/broker.js';
import { connectClient } from '../../helpers/mqtt.js';
import { waitUntil } from '../../helpers/fake-cloud.js';
import { property } from '../../store/helpers.js';

const dir = tempDir('edgeld-disk-budget-');
afterAll(() => dir.remove());

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The four days of history: 2026-04-27 to 2026-04-30 (T0 is 2026-05-01T10:00Z). */
const FIRST_DAY = Date.UTC(2026, 3, 27);
const STEP = 10_000;
const ENTITIES = ['urn:ngsi-ld:Sensor:b1', 'urn:ngsi-ld:Sensor:b2'];
const TEMPERATURE = `${DEFAULT_CONTEXT_VOCAB}temperature`;
const valueAt = (t: number): number => ((t / STEP) % 97) / 4;

interface LogLine { level: LogLevel; msg: string; table?: string; tier?: string; [k: string]: unknown }

function startBudgetBroker(config: ConfigPatch, lines: LogLine[] = []): Promise<TestBroker> {
  return startTestBroker({
    dbPath: `${dir.path}/edgeld.db`,
    config: { ...config, storage: { minFreeBytes: 0, ...config.storage }, history: { bucket: 'day', ...config.history } },
    log: createLogger('info', 'edgeld', (l) => lines.push(JSON.parse(l) as LogLine)), // NOTE: one JSON object per line
  });
}

/** Four days of an instance every 10 s for each sensor, written straight into the history store. */
function writeHistory(b: TestBroker): void {
  for (let day = 0; day < 4; day++) {
    for (const entityId of ENTITIES) {
      const instances: HistoryInstance[] = [];
      for (let t = FIRST_DAY + day * DAY; t < FIRST_DAY + (day + 1) * DAY; t += STEP) {
        instances.push({
          entityId, attr: TEMPERATURE, instanceId: `urn:ngsi-ld:Instance:${randomUUID()}`, observedAt: t, createdAt: t, modifiedAt: t,
          attribute: property(valueAt(t), { observedAt: t, createdAt: t, modifiedAt: t }),
        });
      }
      b.broker.store.history.upsertObserved('', instances);
    }
  }
}

const storage = async (b: TestBroker) => {
  const res = await b.request('GET', '/edgeld/v1/storage');
  expect(res.status, res.text).toBe(200);
  return res.json;
};

/** The hourly sums and counts of the first three hours of the first day, as the temporal API answers them. */
async function firstHours(b: TestBroker): Promise<{ warning: string | null; sum: unknown; totalCount: unknown }> {
  const res = await b.request('GET', `/ngsi-ld/v1/temporal/entities/${ENTITIES[0]}?options=aggregatedValues&aggrMethods=sum,totalCount`
    + `&aggrPeriodDuration=PT1H&timerel=between&timeAt=2026-04-27T00:00:00Z&endTimeAt=2026-04-27T03:00:00Z&attrs=temperature`);
  expect(res.status, res.text).toBe(200);
  return { warning: res.headers.get('ngsild-warning'), sum: res.json.temperature.sum, totalCount: res.json.temperature.totalCount };
}

function expectedHours(): { sum: unknown[]; totalCount: unknown[] } {
  const sum: unknown[] = [];
  const totalCount: unknown[] = [];
  for (let h = 0; h < 3; h++) {
    const from = FIRST_DAY + h * HOUR;
    let s = 0;
    for (let t = from; t < from + HOUR; t += STEP) s += valueAt(t);
    const bounds = [new Date(from).toISOString().replace('.000Z', 'Z'), new Date(from + HOUR).toISOString().replace('.000Z', 'Z')];
    sum.push([s, ...bounds]);
    totalCount.push([HOUR / STEP, ...bounds]);
  }
  return { sum, totalCount };
}

const bucketsOf = (b: TestBroker): string[] => b.broker.store.history.buckets();
const minuteTables = (b: TestBroker): string[] => b.broker.store.history.rollups.tables('minute').map((t) => t.name);

describe('storage.max-bytes', () => {
  let written = 0;
  let filled = 0;

  it('fills a database file with four days of history, and counts the bytes written today', async () => {
    const b = await startBudgetBroker({ storage: { maxBytes: 0 } });
    try {
      for (const id of ENTITIES) {
        expect((await b.request('POST', '/ngsi-ld/v1/entities', { body: { id, type: 'Sensor', temperature: { type: 'Property', value: 0 } } })).status).toBe(201);
      }
      const before = await b.broker.diskBudget.check();
      writeHistory(b);
      filled = await b.broker.diskBudget.check();
      written = filled - before;
      expect(written).toBeGreaterThan(3 * 1024 * 1024);
      // Today's bucket holds the instances of the entities' creation.
      expect(bucketsOf(b)).toEqual(['history_20260427', 'history_20260428', 'history_20260429', 'history_20260430', 'history_20260501']);
      const s = await storage(b);
      expect(s.budget).toMatchObject({ maxBytes: null, writesRefused: false, dropped: { raw: 0, minute: 0 } });
      expect(s.written.days).toEqual([{ day: '2026-05-01', bytes: written }]);
      expect(s.written.bytesPerDay).toBe(written);
      // Without a budget, the days left are the free disk's.
      expect(s.written.daysLeft).toBeCloseTo(s.freeDiskBytes / written, 0);
    } finally {
      await b.close();
    }
  });

  it('drops nothing while the rollups are missing: writes get 507 and MQTT measurements are not acknowledged; once they exist, the oldest raw buckets go and the device\'s measurement is stored', async () => {
    const lines: LogLine[] = [];
    const maxBytes = Math.floor(filled * 0.9);
    const b = await startBudgetBroker({ storage: { maxBytes } }, lines);
    try {
      expect(await b.broker.diskBudget.check()).toBeGreaterThan(maxBytes);
      expect(bucketsOf(b)).toHaveLength(5);
      const refused = await b.request('POST', '/ngsi-ld/v1/entities', { body: { id: 'urn:ngsi-ld:Sensor:new', type: 'Sensor' } });
      expect(refused.status).toBe(507);
      expect(refused.json).toMatchObject({ type: `${ERR}InsufficientStorage`, status: 507, title: 'Insufficient storage' });
      expect(lines.filter((l) => l.msg.startsWith('disk budget reached'))).toHaveLength(1);
      // A second check finds the same: logged once per change.
      await b.broker.diskBudget.check();
      expect(lines.filter((l) => l.msg.startsWith('disk budget reached'))).toHaveLength(1);
      const held = await storage(b);
      expect(held.budget).toMatchObject({ maxBytes, writesRefused: true, holds: 1, dropped: { raw: 0, minute: 0 } });
      expect(held.written.daysLeft).toBe(0);

      await b.broker.listen();
      // A device with a session of its own: the measurement is not acknowledged, the connection ends,
      // and the device sends it again after reconnecting, until there is room. NOTE: MQTT 3.1.1 here; an
      // MQTT 5 device gets PUBACK 0x97 at once instead (test/mqtt/reason-codes.test.ts).
      const client = await connectClient(`mqtt://127.0.0.1:${b.broker.mqttPort}`, { clientId: 'meter9', clean: false, reconnectPeriod: 200, protocolVersion: 4 });
      const acknowledged = client.publishAsync('ngsi/default/meter9/attrs', JSON.stringify({ energy: 5 }), { qos: 1 });
      await waitUntil(() => b.broker.mqttIngest.stats().dropped['disk-full'] >= 1, 10_000, 'the measurement refused');
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the connection was not closed')), 10_000);
        client.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      expect(b.broker.mqttIngest.stats().stored).toBe(0);

      await b.broker.temporal.applyRollups(T0);
      await b.broker.diskBudget.check();
      // Room again: the message sent again is stored and acknowledged.
      await acknowledged;
      await client.endAsync();
      expect(b.broker.mqttIngest.stats().stored).toBe(1);
      const drops = lines.filter((l) => l.msg === 'disk budget: history dropped');
      // Two buckets are enough to get back to the low watermark (the minute summaries took some room).
      expect(drops.map((l) => l.table)).toEqual(['history_20260427', 'history_20260428']);
      expect(drops[0]).toMatchObject({ level: 'info', tier: 'raw' });
      expect((drops[0]!.bytesAfter as number)).toBeLessThan(drops[0]!.bytesBefore as number);
      expect(minuteTables(b)).toEqual(['rollup_minute_202604']);
      expect(b.broker.store.usage.usedBytes()).toBeLessThanOrEqual(maxBytes * 0.9);
      expect(lines.filter((l) => l.msg.startsWith('back under the disk budget'))).toHaveLength(1);
      expect((await b.request('POST', '/ngsi-ld/v1/entities', { body: { id: 'urn:ngsi-ld:Sensor:new', type: 'Sensor' } })).status).toBe(201);

      // The first day's raw rows are gone: its hours are answered from the hour summaries, with a warning.
      const hours = await firstHours(b);
      expect(hours.warning).toContain('raw instances before 2026-04-29T00:00:00.000Z were removed by retention or the disk budget');
      expect({ sum: hours.sum, totalCount: hours.totalCount }).toEqual(expectedHours());

      const s = await storage(b);
      expect(s.budget).toMatchObject({ writesRefused: false, dropped: { raw: drops.length, minute: 0 } });
    } finally {
      await b.close();
    }
  });

  it('drops the minute summaries once no raw bucket is left, never the hour summaries', async () => {
    const lines: LogLine[] = [];
    let b = await startBudgetBroker({ storage: { maxBytes: 0 } });
    await b.broker.diskBudget.figures.measureTiers();
    const before = await storage(b);
    await b.close();
    expect(before.tiers.minute).toBeGreaterThan(0);
    // Dropping every raw bucket is not enough, dropping the minute table too is (today's bucket is a few pages).
    const maxBytes = Math.floor((before.usedBytes - before.tiers.raw - before.tiers.minute / 2) / 0.9);
    b = await startBudgetBroker({ storage: { maxBytes } }, lines);
    try {
      await b.broker.diskBudget.check();
      const drops = lines.filter((l) => l.msg === 'disk budget: history dropped').map((l) => String(l.table));
      expect(drops).toEqual(['history_20260429', 'history_20260430', 'rollup_minute_202604']);
      // Today's bucket stays: its rollups are not complete.
      expect(bucketsOf(b)).toEqual(['history_20260501']);
      expect(minuteTables(b)).toEqual([]);
      expect(b.broker.store.history.rollups.tables('hour').map((t) => t.name)).toEqual(['rollup_hour_2026']);
      expect(b.broker.store.history.rollups.droppedBefore('minute')).toBe(Date.UTC(2026, 4, 1));
      const hours = await firstHours(b);
      expect({ sum: hours.sum, totalCount: hours.totalCount }).toEqual(expectedHours());

      // The figures: bytes per tier no more than the file, the bytes written per day kept across restarts.
      await b.broker.diskBudget.figures.measureTiers();
      const s = await storage(b);
      const { raw, minute, hour, other, ageSeconds } = s.tiers;
      expect(raw).toBeLessThan(64 * 1024);
      expect(minute).toBe(0);
      expect(hour).toBeGreaterThan(0);
      expect(raw + minute + hour + other).toBeLessThanOrEqual(s.fileBytes);
      b.broker.store.checkpoint('TRUNCATE');
      expect(s.fileBytes).toBe(statSync(`${dir.path}/edgeld.db`).size);
      expect(s.usedBytes).toBeLessThanOrEqual(s.fileBytes);
      expect(ageSeconds).toBe(0);
      expect(s.budget).toMatchObject({ maxBytes, highWatermarkBytes: Math.floor(maxBytes * 0.95), lowWatermarkBytes: Math.floor(maxBytes * 0.9), writesRefused: false });
      expect(s.written.days).toHaveLength(1);
      expect(s.written.days[0].day).toBe('2026-05-01');
      expect(s.written.days[0].bytes).toBeGreaterThanOrEqual(written);
      expect(s.written.daysLeft).toBeGreaterThan(0);

      // A day later: that day's figure beside the first, the rate over the time they span.
      b.clock.advance(DAY);
      const t1 = T0 + DAY;
      b.broker.store.history.upsertObserved('', Array.from({ length: 500 }, (_, i): HistoryInstance => ({
        entityId: ENTITIES[0]!, attr: TEMPERATURE, instanceId: `urn:ngsi-ld:Instance:${randomUUID()}`, observedAt: t1 - i * STEP, createdAt: t1, modifiedAt: t1,
        attribute: property(i, { observedAt: t1 - i * STEP, createdAt: t1, modifiedAt: t1 }),
      })));
      await b.broker.diskBudget.check();
      const next = await storage(b);
      expect(next.written.days.map((d: { day: string }) => d.day)).toEqual(['2026-05-01', '2026-05-02']);
      const [first, second] = next.written.days as Array<{ bytes: number }>;
      expect(first!.bytes).toBe(s.written.days[0].bytes);
      expect(second!.bytes).toBeGreaterThan(0);
      // From the start of the first day to now: one day and ten hours.
      expect(next.written.bytesPerDay).toBe(Math.round((first!.bytes + second!.bytes) / (34 / 24)));
      const metrics = await b.request('GET', '/metrics');
      expect(metrics.text).toContain(`edgeld_storage_max_bytes ${maxBytes}`);
      expect(metrics.text).toMatch(/edgeld_storage_budget_drops_total\{level="minute"\} 1\b/);
      expect(metrics.text).toMatch(/edgeld_storage_tier_bytes\{tier="hour"\} [1-9]/);
      expect(metrics.text).toMatch(/edgeld_storage_written_bytes_per_day [1-9]/);
    } finally {
      await b.close();
    }
  });
});

describe('storage.max-bytes with rollups off', () => {
  it('drops the oldest raw bucket without summaries, with a warning', async () => {
    const lines: LogLine[] = [];
    const sub = tempDir('edgeld-disk-budget-raw-');
    try {
      const start = (maxBytes: number) => startTestBroker({
        dbPath: `${sub.path}/edgeld.db`, config: { storage: { minFreeBytes: 0, maxBytes }, history: { bucket: 'day', rollups: false } },
        log: createLogger('info', 'edgeld', (l) => lines.push(JSON.parse(l) as LogLine)), // NOTE: one JSON object per line
      });
      let b = await start(0);
      writeHistory(b);
      const used = b.broker.store.usage.usedBytes();
      await b.close();
      b = await start(Math.floor(used / 0.97));
      try {
        await b.broker.diskBudget.check();
        const drops = lines.filter((l) => l.msg.startsWith('disk budget: raw history dropped without summaries'));
        expect(drops.map((l) => [l.level, l.table])).toEqual([['warn', 'history_20260427']]);
        expect(bucketsOf(b)).toEqual(['history_20260428', 'history_20260429', 'history_20260430']);
        expect(b.broker.store.history.rollups.droppedBefore('raw')).toBe(Date.UTC(2026, 3, 28));
      } finally {
        await b.close();
      }
    } finally {
      sub.remove();
    }
  });
});
