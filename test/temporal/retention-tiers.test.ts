// Retention per level of history: raw rows go only once their summaries exist, minute summaries only
// once the hours exist, hour summaries by their own period; rules shorten or lengthen a tenant's or a
// type's history; aggregations over removed raw history are answered from the summaries, with a
// warning; the rollup job runs on its schedule.

import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/lib/index.js';
import type { HistoryInstance, Store } from '../../src/store/index.js';
import { parseDuration, runRetention } from '../../src/temporal/index.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { memoryStore, NS, property } from '../store/helpers.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const START = Date.UTC(2026, 3, 1);
const TEMP = NS + 'temperature';

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

function instance(entityId: string, at: number, value: number): HistoryInstance {
  return {
    entityId, attr: TEMP, instanceId: `urn:ngsi-ld:Instance:${randomUUID()}`, observedAt: at, createdAt: at, modifiedAt: at,
    attribute: property(value, { observedAt: at, createdAt: at, modifiedAt: at }),
  };
}

/** One instance every 10 minutes of an entity from START for `days`. */
function tenMinutely(entityId: string, days: number): HistoryInstance[] {
  const list: HistoryInstance[] = [];
  for (let t = START; t < START + days * DAY; t += 10 * MINUTE) list.push(instance(entityId, t, (t - START) / MINUTE));
  return list;
}

const d = (text: string): NonNullable<ReturnType<typeof parseDuration>> => parseDuration(text)!;

describe('retention per level', () => {
  it('drops raw rows only before the instant both tiers summarize, then summaries by their own periods', async () => {
    const store = memoryStore({ historyBucket: 'day' });
    stores.push(store);
    store.history.upsertObserved('', tenMinutely('urn:ngsi-ld:S:1', 4));
    const raw = store.history.buckets();
    // now: 30 minutes into the last day's last hour plus 4 days; raw kept 1 hour: its horizon lies in an hour not closed yet.
    const now = START + 3 * DAY + 23 * HOUR + 30 * MINUTE;
    const report = await runRetention({ store, log: silentLogger, retention: { raw: d('PT1H') }, rollups: true }, now);
    // Raw rows go up to the hour that closed last (23:00), not to the horizon (23:30 - 1h = 22:30 is before it: so 22:30).
    expect(report.horizon).toBe(now - HOUR);
    expect(report.dropped).toEqual(raw.slice(0, 3));
    const left = store.history.listForEntity({ tenant: '' }, 'urn:ngsi-ld:S:1').map((i) => i.observedAt!);
    expect(Math.min(...left)).toBe(now - HOUR);
    expect(store.history.rollups.droppedBefore('raw')).toBe(now - HOUR);
    // Every hour summarized before the removal is still there.
    expect(store.history.rollups.count('hour')).toBe(4 * 24 - 1);

    // Minute summaries kept a day, hours two days.
    await runRetention({ store, log: silentLogger, retention: { minute: d('P1D'), hour: d('P2D') }, rollups: true }, now);
    const minutes = store.history.rollups.rows('minute', [1], Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY);
    expect(Math.min(...minutes.map((r) => r.t))).toBeGreaterThanOrEqual(now - DAY);
    const hours = store.history.rollups.rows('hour', [1], Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY);
    expect(Math.min(...hours.map((r) => r.t))).toBeGreaterThanOrEqual(now - 2 * DAY);
    expect(store.history.rollups.droppedBefore('minute')).toBe(now - DAY);
  });

  it('keeps raw rows whose hour has not closed, whatever the horizon', async () => {
    const store = memoryStore({ historyBucket: 'day' });
    stores.push(store);
    const hour = START + 10 * HOUR;
    store.history.upsertObserved('', [instance('urn:ngsi-ld:S:1', hour + 5 * MINUTE, 1), instance('urn:ngsi-ld:S:1', hour + 6 * MINUTE, 2)]);
    await runRetention({ store, log: silentLogger, retention: { raw: d('PT10M') }, rollups: true }, hour + 50 * MINUTE);
    expect(store.history.listForEntity({ tenant: '' }, 'urn:ngsi-ld:S:1')).toHaveLength(2);
    await runRetention({ store, log: silentLogger, retention: { raw: d('PT10M') }, rollups: true }, hour + 70 * MINUTE);
    expect(store.history.listForEntity({ tenant: '' }, 'urn:ngsi-ld:S:1')).toHaveLength(0);
    expect(store.history.rollups.count('hour')).toBe(1);
  });

  it('applies the rule of a type before the rule of its tenant, and the default to the rest', async () => {
    const store = memoryStore({ historyBucket: 'day' });
    stores.push(store);
    const now = START + 10 * DAY;
    const at = now - 3 * DAY;
    for (const tenant of ['', 'plant']) {
      store.entities.insert(tenant, { id: 'urn:ngsi-ld:Pump:1', types: [NS + 'Pump'], attrs: {}, createdAt: at, modifiedAt: at });
      store.entities.insert(tenant, { id: 'urn:ngsi-ld:Valve:1', types: [NS + 'Valve'], attrs: {}, createdAt: at, modifiedAt: at });
      store.history.upsertObserved(tenant, [instance('urn:ngsi-ld:Pump:1', at, 1), instance('urn:ngsi-ld:Valve:1', at, 2)]);
    }
    const rules = [{ tenant: 'plant', retention: { raw: d('P1D') } }, { tenant: 'plant', type: NS + 'Pump', retention: { raw: d('P5D') } }];
    await runRetention({ store, log: silentLogger, retention: { raw: d('P30D') }, rules, rollups: true }, now);
    const left = (tenant: string, id: string): number => store.history.listForEntity({ tenant }, id).length;
    expect([left('', 'urn:ngsi-ld:Pump:1'), left('', 'urn:ngsi-ld:Valve:1')]).toEqual([1, 1]);
    expect([left('plant', 'urn:ngsi-ld:Pump:1'), left('plant', 'urn:ngsi-ld:Valve:1')]).toEqual([1, 0]);
    // Their summaries stay.
    expect(store.history.rollups.count('hour')).toBe(4);
  });
});

describe('through the broker', () => {
  let b: TestBroker | undefined;
  afterEach(async () => b?.close());

  it('answers an hourly aggregation over removed raw history from the hour summaries, with a warning', async () => {
    b = await startTestBroker({ config: { history: { bucket: 'day', retention: 'P1D' } } });
    const id = 'urn:ngsi-ld:Sensor:agg';
    b.broker.store.entities.insert('', { id, types: [NS + 'Sensor'], attrs: {}, createdAt: START, modifiedAt: START });
    b.broker.store.history.upsertObserved('', tenMinutely(id, 3));
    const query = `/ngsi-ld/v1/temporal/entities/${encodeURIComponent(id)}?options=aggregatedValues&aggrMethods=sum,totalCount,min,max&aggrPeriodDuration=PT1H`
      + `&timerel=between&timeAt=${new Date(START).toISOString()}&endTimeAt=${new Date(START + 2 * HOUR).toISOString()}`;
    const before = await b.request('GET', query);
    expect(before.status, before.text).toBe(200);
    expect(before.headers.get('NGSILD-Warning')).toBeNull();
    await b.broker.temporal.applyRetention(START + 3 * DAY + HOUR);
    expect(b.broker.store.history.rollups.droppedBefore('raw')).toBeGreaterThan(START + 2 * HOUR);
    const after = await b.request('GET', query);
    expect(after.status).toBe(200);
    expect(after.headers.get('NGSILD-Warning')).toMatch(/^199 edgeld "raw instances before .* were removed by retention/);
    const values = (res: { json: Record<string, unknown> }): unknown => res.json[TEMP];
    // Sum of 0, 10, ..., 50 minutes in the first hour: 150; six instances.
    const answered = values(after);
    expect(answered).toEqual(values(before));
    expect(JSON.stringify(answered)).toContain('150');
  });

  it('schedules the rollup job with rollups on, and refuses bad retention rules at start', async () => {
    b = await startTestBroker({ config: { history: { bucket: 'day' } } });
    b.broker.store.history.upsertObserved('', [instance('urn:ngsi-ld:S:1', START, 1)]);
    const report = await b.broker.temporal.applyRollups(START + DAY);
    expect(report).toMatchObject({ read: 1, rolled: { hour: 1 } });
    expect(b.broker.store.history.rollups.count('minute')).toBe(1);
    await b.close();
    b = await startTestBroker({ config: { history: { bucket: 'day', rollups: false } } });
    expect(await b.broker.temporal.applyRollups(START + DAY)).toBeUndefined();
    for (const rules of ['{', '[{"tenant": "a", "raw": "3 days"}]', '[{"tenant": "a"}, {"tenant": "a"}]', '[{"type": "T"}]']) {
      expect(() => loadConfig({ argv: [], env: { HISTORY_RETENTION_RULES: rules } })).toThrow(ConfigError);
    }
    const config = loadConfig({ argv: [], env: { HISTORY_RETENTION_RULES: '[{"tenant": "plant", "type": "Pump", "raw": "P7D"}]', HISTORY_MINUTE_RETENTION: 'P90D' } });
    expect(config.history.minuteRetention).toBe('P90D');
  });
});
