// The pure parts of the plant-room soak (scripts/plant-room.mjs): its options, the schedule of the
// uplink's outages and of the kill, the statistics over time, and the report's checks and summary
// table. Nothing here touches the network, processes or files, so test/ops/plant-room-plan.test.ts
// checks it directly.

/** Each device sends one measurement of 3 attributes every this many seconds. */
export const MEASUREMENT_EVERY_S = 5;
/** p99 PUBACK allowed outside the kill window. */
export const PUBACK_P99_LIMIT_MS = 100;
/** How long after an outage's end the outbox may take to be back to its steady state. */
export const DRAIN_LIMIT_S = 180;
/** RSS slope allowed after warm-up, MiB per 10 minutes (judged on an incarnation of 10 minutes or more). */
export const RSS_SLOPE_LIMIT_MIB_PER_10_MIN = 1;
/**
 * The outbox counts as drained when it is empty or its oldest change is younger than this: under a
 * steady load on a 300 ms round trip it always holds the changes of the last few batches.
 */
export const OUTBOX_STEADY_LAG_S = 10;

export const DEFAULTS = Object.freeze({
  duration: 3600, devices: 1000, json: false, report: '', seed: 0, core: -1, findCapacity: false,
  delayMs: 300, lossPercent: 5, rateKbit: 1000, step: 250, gatewayEnv: Object.freeze({}), gatewayFlags: Object.freeze([]),
});

/** The options of `--profile plant-room` (numbers positive; `--seed 0` draws one). */
export function parsePlantRoomArgs(argv) {
  const opts = { ...DEFAULTS, gatewayEnv: {}, gatewayFlags: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = (min = 1) => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v < min) throw new Error(`${a} needs a number of at least ${min}`);
      return v;
    };
    if (a === '--duration') opts.duration = Math.round(num(30));
    else if (a === '--devices') opts.devices = Math.round(num(20));
    else if (a === '--json') opts.json = true;
    else if (a === '--report') opts.report = argv[++i] ?? '';
    else if (a === '--seed') opts.seed = Math.round(num(0));
    else if (a === '--core') opts.core = Math.round(num(0));
    else if (a === '--find-capacity') opts.findCapacity = true;
    else if (a === '--step') opts.step = Math.round(num(10));
    else if (a === '--delay-ms') opts.delayMs = num(0);
    else if (a === '--loss') opts.lossPercent = num(0);
    else if (a === '--rate-kbit') opts.rateKbit = num(8);
    else if (a === '--gateway-env') {
      // An option of the gateway as its environment variable, e.g. STORAGE_COMMIT_WINDOW=20.
      const m = /^([A-Z][A-Z0-9_]*)=(.*)$/s.exec(argv[++i] ?? '');
      if (!m) throw new Error('--gateway-env needs NAME=value, NAME an environment variable such as STORAGE_COMMIT_WINDOW');
      opts.gatewayEnv[m[1]] = m[2];
    } else if (a === '--gateway-flag') {
      const flag = argv[++i] ?? '';
      if (!/^--[a-z][a-z0-9-]*(=\S+)?$/.test(flag)) throw new Error('--gateway-flag needs a node flag such as --cpu-prof or --cpu-prof-dir=/tmp/prof');
      opts.gatewayFlags.push(flag);
    } else throw new Error(`unknown argument ${a} (plant-room: --duration S --devices N --json --report FILE --seed N --core N --find-capacity --step N --delay-ms MS --loss PCT --rate-kbit K --gateway-env NAME=value --gateway-flag --FLAG[=value])`);
  }
  if (opts.report === '' && argv.includes('--report')) throw new Error('--report needs a file');
  return opts;
}

/**
 * When the uplink is down, as [start, end] seconds from the start of the load: 2 minutes in the
 * middle of every 10 minutes of a run of 20 minutes or more; in a shorter one, one outage of a
 * fifth of the run in the middle of each half.
 */
export function outageSchedule(durationS) {
  const long = durationS >= 1200;
  const period = long ? 600 : durationS / 2;
  const length = long ? 120 : durationS / 5;
  const out = [];
  for (let start = 0; start + period <= durationS + 1e-9; start += period) {
    const from = start + (period - length) / 2;
    out.push({ start: round1(from), end: round1(from + length) });
  }
  return out;
}

/** The moment of the kill -9, uniform in the middle three fifths of the run. */
export function killMoment(durationS, rand) {
  return round1(durationS * (0.2 + 0.6 * rand()));
}

/** A small seeded generator (mulberry32): the same seed, the same run schedule. */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const round1 = (v) => Math.round(v * 10) / 10;

/** The q-quantile (0 to 1) of `values` by nearest rank; null without values. */
export function quantile(values, q) {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
}

/** Least-squares slope of y over x (0 with fewer than two distinct x). */
export function slopeOf(points) {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

/**
 * p50 and p99 of timed values ({t: seconds, v}) per interval of `stepS`, for the report's timeline:
 * [{t: the interval's start, n, p50, p99}], intervals without values left out.
 */
export function percentilesOverTime(events, stepS) {
  const buckets = new Map();
  for (const e of events) {
    const k = Math.floor(e.t / stepS);
    let b = buckets.get(k);
    if (b === undefined) buckets.set(k, (b = []));
    b.push(e.v);
  }
  return [...buckets.keys()].sort((a, b) => a - b).map((k) => {
    const b = buckets.get(k);
    return { t: k * stepS, n: b.length, p50: quantile(b, 0.5), p99: quantile(b, 0.99) };
  });
}

/** Whether instant `t` (s) is inside one of the windows [{start, end}]. */
export const inWindows = (t, windows) => windows.some((w) => t >= w.start && t <= w.end);

/**
 * For each outage, how long after its end the outbox was back to its steady state (a sample with
 * `outbox` 0 or `lagS` at most OUTBOX_STEADY_LAG_S), from samples [{t, outbox, lagS}] in time
 * order; null when no such sample came.
 */
export function drainTimes(samples, outages) {
  return outages.map((o) => {
    const back = samples.find((s) => s.t >= o.end && s.outbox !== null && (s.outbox === 0 || (s.lagS !== null && s.lagS <= OUTBOX_STEADY_LAG_S)));
    return { outageStartS: o.start, outageEndS: o.end, drainedAfterS: back === undefined ? null : round1(back.t - o.end) };
  });
}

/**
 * RSS slope in MiB per 10 minutes after warm-up, over the samples of the incarnation of the gateway
 * with the longest warm part (a kill -9 starts a new process, whose RSS starts again from nothing).
 * Samples: [{t, rss (bytes), incarnation}]. `judged` only when that part spans 10 minutes or more.
 */
export function rssSlope(samples, warmUpS) {
  const byIncarnation = new Map();
  for (const s of samples) {
    let list = byIncarnation.get(s.incarnation);
    if (list === undefined) byIncarnation.set(s.incarnation, (list = []));
    list.push(s);
  }
  let best = [];
  for (const list of byIncarnation.values()) {
    const warm = list.filter((s) => s.t - list[0].t >= warmUpS && s.rss > 0);
    const span = (l) => (l.length < 2 ? 0 : l.at(-1).t - l[0].t);
    if (span(warm) > span(best)) best = warm;
  }
  const spanS = best.length < 2 ? 0 : best.at(-1).t - best[0].t;
  const perS = slopeOf(best.map((s) => ({ x: s.t, y: s.rss / 2 ** 20 })));
  return { mibPer10Min: Number((perS * 600).toFixed(2)), spanS: round1(spanS), judged: spanS >= 600 };
}

/**
 * The gateway's own memory and event-loop figures from its Prometheus exposition (GET /metrics,
 * prom-client's process metrics): {heapTotal, heapUsed, code, old, external} in bytes, {lagP99Ms,
 * lagMaxMs} since the previous scrape; a figure the text does not hold is null.
 */
export function processFigures(text) {
  const value = (name, labels = '') => {
    const m = new RegExp(`^${name}${labels.replace(/[{}]/g, '\\$&')} ([0-9.eE+-]+)$`, 'm').exec(text);
    return m === null ? null : Number(m[1]);
  };
  const ms = (v) => (v === null ? null : Number((v * 1000).toFixed(1)));
  return {
    heapTotal: value('nodejs_heap_size_total_bytes'), heapUsed: value('nodejs_heap_size_used_bytes'),
    code: value('nodejs_heap_space_size_total_bytes', '{space="code"}'), old: value('nodejs_heap_space_size_total_bytes', '{space="old"}'),
    external: value('nodejs_external_memory_bytes'),
    lagP99Ms: ms(value('nodejs_eventloop_lag_p99_seconds')), lagMaxMs: ms(value('nodejs_eventloop_lag_max_seconds')),
  };
}

/**
 * Where the RSS went: the slopes (as rssSlope judges them) of the V8 heap and of the rest of the
 * resident memory (native: SQLite, buffers, the binary's pages), the heap's code space at the start
 * and the end of the judged part, and the event loop's worst lag by sample.
 * Samples: [{t, rss, incarnation, process: processFigures() | null}].
 */
export function memoryReport(samples, warmUpS) {
  const known = samples.filter((s) => s.process?.heapTotal != null);
  const heap = rssSlope(known.map((s) => ({ t: s.t, incarnation: s.incarnation, rss: s.process.heapTotal })), warmUpS);
  const outside = rssSlope(known.map((s) => ({ t: s.t, incarnation: s.incarnation, rss: s.rss - s.process.heapTotal })), warmUpS);
  const figures = (name) => samples.map((s) => s.process?.[name]).filter((v) => v != null);
  const maxOf = (list) => (list.length === 0 ? null : Math.max(...list));
  const lags = figures('lagMaxMs');
  return {
    heapSlope: heap, outsideHeapSlope: outside, heapMaxBytes: maxOf(figures('heapTotal')),
    codeBytes: known.length === 0 ? null : { first: known[0].process.code, last: known.at(-1).process.code },
    eventLoop: { worstP99Ms: maxOf(figures('lagP99Ms')), maxMs: maxOf(lags), samplesOver100Ms: lags.filter((v) => v > 100).length },
  };
}

/** The checks that give the exit status: [{name, ok, detail}]. */
export function checks(r) {
  const out = [];
  const add = (name, ok, detail) => out.push({ name, ok, detail });
  const m = r.measurements;
  add('nothing lost', m.acknowledged > 0 && m.missingLocally === 0 && m.missingInCloud === 0 && m.storedLocally === m.inCloud,
    `${m.acknowledged} acknowledged, ${m.storedLocally} stored locally (${m.missingLocally} acknowledged missing), ${m.inCloud} in the cloud (${m.missingInCloud} missing)`);
  const n = r.notifications;
  add('notifications due = delivered', n.due > 0 && n.missing === 0 && n.throttledOk,
    `${n.due} due, ${n.delivered} delivered (${n.joined} in a later write of their device), ${n.missing} missing; throttled subscriptions ${n.throttledOk ? 'notified, at most once a period' : 'notified more than once a period, or never'}`);
  const unanswered = (r.commands.unanswered ?? []).map((c) => `${c.value} to ${c.valve} at ${c.issuedAtS} s`);
  add('commands issued = answered', r.commands.issued > 0 && r.commands.answered === r.commands.issued,
    `${r.commands.issued} issued, ${r.commands.answered} answered${unanswered.length > 0 ? ` (unanswered: ${unanswered.join(', ')})` : ''}`);
  add('downlink writes applied', r.downlink.written > 0 && r.downlink.applied === r.downlink.written, `${r.downlink.written} written in the cloud, ${r.downlink.applied} applied at the gateway`);
  const p = r.puback.p99OutsideKillMs;
  add(`p99 PUBACK under ${PUBACK_P99_LIMIT_MS} ms outside the kill window`, p !== null && p < PUBACK_P99_LIMIT_MS, `${p} ms`);
  const rss = r.rss.slope;
  add(`RSS slope under ${RSS_SLOPE_LIMIT_MIB_PER_10_MIN} MiB per 10 minutes after warm-up`, !rss.judged || rss.mibPer10Min < RSS_SLOPE_LIMIT_MIB_PER_10_MIN,
    `${rss.mibPer10Min} MiB/10 min over ${rss.spanS} s${rss.judged ? '' : ' (not judged: under 10 minutes of one warm process)'}`);
  const late = r.outbox.drains.filter((d) => d.drainedAfterS === null || d.drainedAfterS > DRAIN_LIMIT_S);
  add(`outbox back to empty within ${DRAIN_LIMIT_S} s of each outage's end`, r.outbox.drains.length > 0 && late.length === 0,
    r.outbox.drains.map((d) => `${d.outageEndS} s: ${d.drainedAfterS === null ? 'never' : `${d.drainedAfterS} s`}`).join(', '));
  add('the gateway came back after the kill -9 and both processes ran to the end', r.kill.restarted && r.processesAlive, r.kill.restarted ? `killed at ${r.kill.atS} s, serving again after ${r.kill.downS} s` : 'not restarted');
  return out;
}

const mib = (b) => (b === null || b === undefined ? '-' : `${(b / 2 ** 20).toFixed(1)} MiB`);

/** The summary table printed after a run (plain text, one figure a line, then the checks). */
export function summaryTable(r) {
  const rows = [
    ['load', `${r.devices} devices, 1 measurement of 3 attributes / ${MEASUREMENT_EVERY_S} s each (${r.devices / MEASUREMENT_EVERY_S} msg/s), ${r.durationS} s`],
    ['machine', `load average ${r.host.loadStart.join(' ')} at the start, ${r.host.loadEnd.join(' ')} at the end; gateway on core ${r.host.core}`],
    ['measurements', `${r.measurements.sent} sent, ${r.measurements.acknowledged} acknowledged, ${r.measurements.storedLocally} stored locally, ${r.measurements.inCloud} in the cloud`],
    ['garbage', `${r.measurements.garbageSent} garbage messages sent`],
    ['notifications', `${r.notifications.due} due, ${r.notifications.delivered} delivered, p50/p99 ${r.notifications.p50Ms}/${r.notifications.p99Ms} ms`],
    ['commands', `${r.commands.issued} issued, ${r.commands.answered} answered, round trip p99 ${r.commands.p99Ms} ms`],
    ['downlink', `${r.downlink.written} written in the cloud, ${r.downlink.applied} applied`],
    ['PUBACK', `p50 ${r.puback.p50Ms} ms, p99 ${r.puback.p99Ms} ms, p99 outside the kill window ${r.puback.p99OutsideKillMs} ms`],
    ['queries', `temporal p99 ${r.queries.temporal.p99Ms} ms (${r.queries.temporal.failed} failed of ${r.queries.temporal.n}), hourly aggregation p99 ${r.queries.aggregation.p99Ms} ms (${r.queries.aggregation.failed}/${r.queries.aggregation.n}), dashboard reads p99 ${r.queries.dashboard.p99Ms} ms (${r.queries.dashboard.failed}/${r.queries.dashboard.n})`],
    ['CPU', `${r.cpu.sharePercent}% of its core (${r.cpu.msPerMeasurement} ms CPU per measurement)`],
    ['RSS', `max ${mib(r.rss.maxBytes)}, slope ${r.rss.slope.mibPer10Min} MiB/10 min`],
    ...(r.memory === undefined ? [] : [
      ['V8 heap', `max ${mib(r.memory.heapMaxBytes)}, slope ${r.memory.heapSlope.mibPer10Min} MiB/10 min (code space ${mib(r.memory.codeBytes?.first)} to ${mib(r.memory.codeBytes?.last)}); the rest of the RSS: slope ${r.memory.outsideHeapSlope.mibPer10Min} MiB/10 min`],
      ['event loop', `lag p99 at most ${r.memory.eventLoop.worstP99Ms} ms in a sample, max ${r.memory.eventLoop.maxMs} ms, ${r.memory.eventLoop.samplesOver100Ms} samples with a lag over 100 ms`],
    ]),
    ['storage', `database ${mib(r.storage.dbBytes)}, WAL max ${mib(r.storage.walMaxBytes)}, ${r.storage.bytesWrittenPerMeasurement} bytes written per measurement`],
    ['outbox', `max ${r.outbox.max}, drained after ${r.outbox.drains.map((d) => (d.drainedAfterS === null ? 'never' : `${d.drainedAfterS} s`)).join(', ')}`],
    ['kill -9', `at ${r.kill.atS} s, serving again after ${r.kill.downS} s`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
  for (const c of r.checks) lines.push(`${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`);
  return `${lines.join('\n')}\n`;
}
