// The pure parts of the plant-room soak (scripts/plant-room-plan.mjs): its options, the schedule of
// the uplink's outages and of the kill, the statistics of its report, and the checks that give its
// exit status.

import { describe, expect, it } from 'vitest';
import {
  DEFAULTS, checks, drainTimes, inWindows, killMoment, memoryReport, outageSchedule, parsePlantRoomArgs, percentilesOverTime, processFigures, quantile, rssSlope,
  seededRandom, slopeOf, summaryTable,
} from '../../scripts/plant-room-plan.mjs';

describe('plant-room options', () => {
  it('defaults to the hour-long plant room of 1,000 devices behind a 1 Mbit/s, 5% loss, 300 ms uplink', () => {
    expect(parsePlantRoomArgs([])).toMatchObject({ duration: 3600, devices: 1000, delayMs: 300, lossPercent: 5, rateKbit: 1000, findCapacity: false });
    expect(parsePlantRoomArgs(['--duration', '300', '--devices', '200', '--json', '--report', '/tmp/r.json', '--seed', '4'])).toMatchObject({
      duration: 300, devices: 200, json: true, report: '/tmp/r.json', seed: 4,
    });
    expect(DEFAULTS.devices).toBe(1000);
  });

  it('refuses unknown arguments, short runs and a --report without its file', () => {
    expect(() => parsePlantRoomArgs(['--rate', '5'])).toThrow(/unknown argument --rate/);
    expect(() => parsePlantRoomArgs(['--duration', '10'])).toThrow(/at least 30/);
    expect(() => parsePlantRoomArgs(['--report'])).toThrow(/needs a file/);
    expect(() => parsePlantRoomArgs(['--gateway-env', 'storage.commit-window=20'])).toThrow(/NAME=value/);
  });

  it('passes gateway options as environment variables, each --gateway-env one more', () => {
    expect(parsePlantRoomArgs([]).gatewayEnv).toEqual({});
    expect(parsePlantRoomArgs(['--gateway-env', 'STORAGE_COMMIT_WINDOW=20', '--gateway-env', 'STORAGE_WAL_LIMIT_BYTES=67108864']).gatewayEnv)
      .toEqual({ STORAGE_COMMIT_WINDOW: '20', STORAGE_WAL_LIMIT_BYTES: '67108864' });
  });

  it('adds node flags to the gateway\'s command line, each --gateway-flag one more, and refuses what is no flag', () => {
    expect(parsePlantRoomArgs([]).gatewayFlags).toEqual([]);
    expect(parsePlantRoomArgs(['--gateway-flag', '--cpu-prof', '--gateway-flag', '--cpu-prof-dir=/tmp/prof']).gatewayFlags).toEqual(['--cpu-prof', '--cpu-prof-dir=/tmp/prof']);
    expect(() => parsePlantRoomArgs(['--gateway-flag', 'rm -rf'])).toThrow(/node flag/);
    expect(() => parsePlantRoomArgs(['--gateway-flag'])).toThrow(/node flag/);
  });
});

describe('the schedule of a run', () => {
  it('cuts the uplink 2 minutes in the middle of every 10 minutes of an hour', () => {
    const outages = outageSchedule(3600);
    expect(outages).toHaveLength(6);
    expect(outages[0]).toEqual({ start: 240, end: 360 });
    expect(outages[5]).toEqual({ start: 3240, end: 3360 });
    for (const o of outages) expect(o.end - o.start).toBe(120);
  });

  it('scales down for a short run: an outage of a fifth of the run in the middle of each half', () => {
    expect(outageSchedule(300)).toEqual([{ start: 45, end: 105 }, { start: 195, end: 255 }]);
    expect(outageSchedule(60)).toEqual([{ start: 9, end: 21 }, { start: 39, end: 51 }]);
  });

  it('draws the kill in the middle three fifths of the run, the same for the same seed', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    for (let i = 0; i < 200; i++) {
      const at = killMoment(300, a);
      expect(at).toBeGreaterThanOrEqual(60);
      expect(at).toBeLessThanOrEqual(240);
      expect(killMoment(300, b)).toBe(at);
    }
    expect(killMoment(300, seededRandom(1))).not.toBe(killMoment(300, seededRandom(2)));
  });
});

describe('the statistics of the report', () => {
  it('computes quantiles by nearest rank and slopes by least squares', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(quantile(values, 0.5)).toBe(51);
    expect(quantile(values, 0.99)).toBe(100);
    expect(quantile([], 0.99)).toBeNull();
    expect(slopeOf([{ x: 0, y: 1 }, { x: 1, y: 3 }, { x: 2, y: 5 }])).toBeCloseTo(2);
    expect(slopeOf([{ x: 1, y: 1 }])).toBe(0);
  });

  it('gives p50 and p99 per interval, leaving out empty ones', () => {
    const events = [...Array.from({ length: 10 }, (_, i) => ({ t: 1, v: i })), { t: 25, v: 7 }];
    expect(percentilesOverTime(events, 10)).toEqual([{ t: 0, n: 10, p50: 5, p99: 9 }, { t: 20, n: 1, p50: 7, p99: 7 }]);
  });

  it('times the drain after each outage from the first sample with an empty or steady outbox', () => {
    const samples = [
      { t: 100, outbox: 900, lagS: 40 }, { t: 110, outbox: 500, lagS: 30 }, { t: 130, outbox: 40, lagS: 2 },
      { t: 200, outbox: 3000, lagS: 60 }, { t: 250, outbox: null, lagS: null },
    ];
    expect(drainTimes(samples, [{ start: 45, end: 105 }, { start: 195, end: 255 }])).toEqual([
      { outageStartS: 45, outageEndS: 105, drainedAfterS: 25 },
      { outageStartS: 195, outageEndS: 255, drainedAfterS: null },
    ]);
    expect(inWindows(50, [{ start: 45, end: 105 }])).toBe(true);
    expect(inWindows(106, [{ start: 45, end: 105 }])).toBe(false);
  });

  it('judges the RSS slope on the longest warm incarnation, not across a kill', () => {
    const MiB = 2 ** 20;
    // Before the kill: 5 minutes growing fast (warm-up); after: 20 minutes flat at 100 MiB.
    const samples = [
      ...Array.from({ length: 10 }, (_, i) => ({ t: i * 30, rss: (60 + i * 5) * MiB, incarnation: 0 })),
      ...Array.from({ length: 41 }, (_, i) => ({ t: 310 + i * 30, rss: (i < 10 ? 40 + i * 6 : 100) * MiB, incarnation: 1 })),
    ];
    const flat = rssSlope(samples, 300);
    expect(flat.judged).toBe(true);
    expect(flat.mibPer10Min).toBeCloseTo(0, 5);
    const growing = rssSlope(samples.map((s) => ({ ...s, rss: s.rss + s.t * 0.01 * MiB })), 300);
    expect(growing.mibPer10Min).toBeCloseTo(6, 1);
    expect(rssSlope(samples.slice(0, 12), 60).judged).toBe(false);
  });
});

describe('the gateway\'s memory and event loop, from its metrics', () => {
  const MiB = 2 ** 20;
  const exposition = (heap: number, code: number, lagP99: number, lagMax: number): string => [
    '# HELP nodejs_heap_size_total_bytes Process heap size from Node.js in bytes.',
    '# TYPE nodejs_heap_size_total_bytes gauge',
    `nodejs_heap_size_total_bytes ${heap}`,
    `nodejs_heap_size_used_bytes ${heap / 2}`,
    `nodejs_external_memory_bytes ${4 * MiB}`,
    `nodejs_heap_space_size_total_bytes{space="read_only"} 0`,
    `nodejs_heap_space_size_total_bytes{space="old"} ${heap - code - MiB}`,
    `nodejs_heap_space_size_total_bytes{space="code"} ${code}`,
    `nodejs_eventloop_lag_p99_seconds ${lagP99}`,
    `nodejs_eventloop_lag_max_seconds ${lagMax}`,
    'edgeld_notifications_pending 0',
  ].join('\n');

  it('reads the heap, its spaces and the event-loop lag from the exposition', () => {
    expect(processFigures(exposition(80 * MiB, 5 * MiB, 0.0123, 0.25))).toEqual({
      heapTotal: 80 * MiB, heapUsed: 40 * MiB, code: 5 * MiB, old: 74 * MiB, external: 4 * MiB, lagP99Ms: 12.3, lagMaxMs: 250,
    });
    expect(processFigures('edgeld_notifications_pending 0\n')).toEqual({
      heapTotal: null, heapUsed: null, code: null, old: null, external: null, lagP99Ms: null, lagMaxMs: null,
    });
  });

  it('splits the RSS slope into the heap and the rest, and counts the lags over 100 ms', () => {
    // 20 minutes of one process: the heap flat at 80 MiB, the rest growing 2 MiB every 10 minutes.
    const samples: Array<{ t: number; incarnation: number; rss: number; process: ReturnType<typeof processFigures> | null }> = Array.from({ length: 41 }, (_, i) => {
      const t = i * 30;
      const heap = 80 * MiB;
      return { t, incarnation: 0, rss: heap + 60 * MiB + (t / 300) * MiB, process: processFigures(exposition(heap, (3 + t / 600) * MiB, 0.02, i === 7 ? 0.3 : 0.05)) };
    });
    samples[3]!.process = null; // a scrape that failed (the kill window): left out
    const m = memoryReport(samples, 300);
    expect(m.heapSlope.mibPer10Min).toBeCloseTo(0, 5);
    expect(m.outsideHeapSlope.mibPer10Min).toBeCloseTo(2, 5);
    expect(m.outsideHeapSlope.judged).toBe(true);
    expect(m.codeBytes).toEqual({ first: 3 * MiB, last: 5 * MiB });
    expect(m.eventLoop).toEqual({ worstP99Ms: 20, maxMs: 300, samplesOver100Ms: 1 });
    const table = summaryTable({ ...goodReport(), memory: m, checks: [] });
    expect(table).toMatch(/V8 heap\s+max 80\.0 MiB, slope 0 MiB\/10 min \(code space 3\.0 MiB to 5\.0 MiB\); the rest of the RSS: slope 2 MiB\/10 min/);
    expect(table).toMatch(/event loop\s+lag p99 at most 20 ms in a sample, max 300 ms, 1 samples with a lag over 100 ms/);
  });
});

/** A report of a run that held, to break one figure at a time. */
function goodReport() {
  return {
    devices: 200, durationS: 300, host: { loadStart: [1, 1, 1], loadEnd: [1, 1, 1], core: 1 },
    measurements: { sent: 12000, acknowledged: 12000, storedLocally: 12000, inCloud: 12000, missingLocally: 0, missingInCloud: 0, garbageSent: 700 },
    notifications: { due: 9000, delivered: 8990, joined: 10, missing: 0, throttledOk: true, p50Ms: 10, p99Ms: 40 },
    commands: { issued: 50, answered: 50, p99Ms: 300 },
    downlink: { written: 15, applied: 15 },
    puback: { p50Ms: 5, p99Ms: 900, p99OutsideKillMs: 30 },
    queries: { temporal: { n: 30, failed: 0, p99Ms: 50 }, aggregation: { n: 30, failed: 0, p99Ms: 50 }, dashboard: { n: 180, failed: 0, p99Ms: 20 } },
    cpu: { sharePercent: 20, msPerMeasurement: 1.2 },
    rss: { maxBytes: 2 ** 27, slope: { mibPer10Min: 0.3, spanS: 900, judged: true } },
    storage: { dbBytes: 2 ** 24, walMaxBytes: 2 ** 22, bytesWrittenPerMeasurement: 3000 },
    outbox: { max: 5000, drains: [{ outageStartS: 45, outageEndS: 105, drainedAfterS: 60 }] },
    kill: { atS: 150, restarted: true, downS: 4 },
    processesAlive: true,
  };
}

describe('the checks of the report', () => {
  it('all pass for a run that held, and the table shows each figure and check', () => {
    const r = goodReport();
    const list = checks(r);
    expect(list.length).toBeGreaterThanOrEqual(8);
    expect(list.filter((c) => !c.ok)).toEqual([]);
    const table = summaryTable({ ...r, checks: list });
    expect(table).toMatch(/measurements\s+12000 sent, 12000 acknowledged, 12000 stored locally, 12000 in the cloud/);
    expect(table.match(/^PASS /gm)).toHaveLength(list.length);
  });

  it.each([
    ['nothing lost', (r: ReturnType<typeof goodReport>) => { r.measurements.inCloud = 11999; r.measurements.missingInCloud = 1; }],
    ['nothing lost', (r: ReturnType<typeof goodReport>) => { r.measurements.missingLocally = 1; }],
    ['notifications due = delivered', (r: ReturnType<typeof goodReport>) => { r.notifications.missing = 3; }],
    ['notifications due = delivered', (r: ReturnType<typeof goodReport>) => { r.notifications.throttledOk = false; }],
    ['commands issued = answered', (r: ReturnType<typeof goodReport>) => { r.commands.answered = 49; }],
    ['downlink writes applied', (r: ReturnType<typeof goodReport>) => { r.downlink.applied = 14; }],
    ['p99 PUBACK under 100 ms outside the kill window', (r: ReturnType<typeof goodReport>) => { r.puback.p99OutsideKillMs = 100; }],
    ['RSS slope under 1 MiB per 10 minutes after warm-up', (r: ReturnType<typeof goodReport>) => { r.rss.slope.mibPer10Min = 1.5; }],
    ["outbox back to empty within 180 s of each outage's end", (r: ReturnType<typeof goodReport>) => { r.outbox.drains[0]!.drainedAfterS = 181; }],
    ["outbox back to empty within 180 s of each outage's end", (r: ReturnType<typeof goodReport>) => { (r.outbox.drains[0] as { drainedAfterS: number | null }).drainedAfterS = null; }],
    ['the gateway came back after the kill -9 and both processes ran to the end', (r: ReturnType<typeof goodReport>) => { r.processesAlive = false; }],
  ])('fails "%s" alone when its figure is off', (name, breakIt) => {
    const r = goodReport();
    breakIt(r);
    expect(checks(r).filter((c) => !c.ok).map((c) => c.name)).toEqual([name]);
  });

  it('does not judge an RSS slope measured over less than 10 minutes of one process', () => {
    const r = goodReport();
    r.rss.slope = { mibPer10Min: 50, spanS: 200, judged: false };
    const rss = checks(r).find((c) => c.name.startsWith('RSS'))!;
    expect(rss.ok).toBe(true);
    expect(rss.detail).toMatch(/not judged/);
  });
});
