// The figures of the database on disk that the disk budget and GET /edgeld/v1/storage show: the
// bytes written per UTC day (the increase of the pages in use seen from one check to the next,
// decreases not subtracted, kept in a small table so that a restart keeps them), the rate of the last
// week, and the bytes of each level of history (SQLite's dbstat reads every page it counts: measured
// in the background, off the event loop, and served from a cache with its age).

import type { Clock, Logger } from '../lib/index.js';
import type { DailyWritten, StorageUsage, TierBytes } from '../store/index.js';

const DAY_MS = 86_400_000;
/** The days the rate is taken over: today and the six before. */
const RATE_DAYS = 7;
/** How often the day's figure is written to its table at most (one small write). */
const FLUSH_EVERY_MS = 60_000;
/** How old the bytes per tier may get before a look at them measures them again (dbstat reads every page)... */
const TIERS_MAX_AGE_MS = 5 * 60_000;
/** ...and at least this many times the last measurement's duration apart: a large database on a slow card is read less often. */
const TIERS_DUTY = 20;

export interface StorageFiguresDeps {
  store: { isOpen(): boolean; transaction<T>(fn: () => T): T; readonly usage: StorageUsage };
  clock: Clock;
  log: Logger;
}

/** The bytes of each tier, as last measured. */
export interface TierFigures {
  bytes: TierBytes;
  /** When the measurement ended (epoch ms). */
  at: number;
}

export interface StorageFigures {
  /** Reads the pages in use (two pragmas) and adds their increase since the last sample to today's figure; returns them. */
  sample(): number;
  /** Writes the days' figures not written yet (at most every minute unless forced). */
  flush(force?: boolean): void;
  /** Measures the bytes of every table and index by tier (in the background); resolves with the figures. */
  measureTiers(): Promise<TierFigures | undefined>;
  /**
   * The latest measurement by tier (undefined before the first); a stale one (or none) starts a
   * measurement in the background, for the next look.
   */
  tiers(): TierFigures | undefined;
  /** The bytes written on each of the last RATE_DAYS UTC days that has a figure (today included), oldest first. */
  written(now: number): DailyWritten[];
  /** Bytes written per day over the last RATE_DAYS days: their total over the time they span (at least a day). */
  rate(now: number): number;
}

const dayOf = (t: number): number => Math.floor(t / DAY_MS) * DAY_MS;

type TierCache = Pick<StorageFigures, 'measureTiers' | 'tiers'>;

/** The bytes per tier: measured off the event loop, cached, measured again when looked at and stale. */
function createTierCache({ store, clock, log }: StorageFiguresDeps): TierCache {
  let measured: TierFigures | undefined;
  let measuring: Promise<TierFigures | undefined> | undefined;
  let tookMs = 0;
  const measure = async (): Promise<TierFigures | undefined> => {
    if (!store.isOpen()) return undefined;
    const started = performance.now();
    try {
      measured = { bytes: await store.usage.measureTiers(), at: clock.now() };
      return measured;
    } finally {
      tookMs = performance.now() - started;
    }
  };
  const measureTiers = (): Promise<TierFigures | undefined> => {
    measuring ??= measure().finally(() => {
      measuring = undefined;
    });
    return measuring;
  };
  return {
    measureTiers,
    tiers() {
      const age = measured === undefined ? Infinity : clock.now() - measured.at;
      if (measuring === undefined && store.isOpen() && age >= Math.max(TIERS_MAX_AGE_MS, TIERS_DUTY * tookMs)) {
        measureTiers().catch((err: unknown) => {
          if (store.isOpen()) log.warn('storage measurement failed', { err });
        });
      }
      return measured;
    },
  };
}

export function createStorageFigures(deps: StorageFiguresDeps): StorageFigures {
  const { store, clock, log } = deps;
  const { usage } = store;
  let last: number | undefined;
  /** Days whose figure grew since it was last written; a day seen for the first time gets a row even at 0. */
  const pending = new Map<number, number>();
  const known = new Set<number>();
  let flushedAt = clock.now();

  const flush = (force = false): void => {
    const now = clock.now();
    if (pending.size === 0 || !store.isOpen() || (!force && now - flushedAt < FLUSH_EVERY_MS)) return;
    flushedAt = now;
    try {
      store.transaction(() => {
        for (const [day, bytes] of pending) usage.addWritten(day, bytes);
        usage.forgetWritten(dayOf(now) - (RATE_DAYS + 1) * DAY_MS);
      });
      for (const day of pending.keys()) known.add(day);
      pending.clear();
    } catch (err) {
      log.warn('storage figures not written', { err });
    }
  };

  const written = (now: number): DailyWritten[] => {
    const from = dayOf(now) - (RATE_DAYS - 1) * DAY_MS;
    const days = new Map(store.isOpen() ? usage.written(from).map((d) => [d.day, d.bytes]) : []);
    for (const [day, bytes] of pending) if (day >= from) days.set(day, (days.get(day) ?? 0) + bytes);
    return [...days].map(([day, bytes]) => ({ day, bytes })).sort((a, b) => a.day - b.day);
  };

  return {
    sample() {
      const used = usage.usedBytes();
      const day = dayOf(clock.now());
      const grown = last === undefined ? 0 : Math.max(0, used - last);
      last = used;
      if (grown > 0 || (!known.has(day) && !pending.has(day))) pending.set(day, (pending.get(day) ?? 0) + grown);
      flush();
      return used;
    },
    flush,
    ...createTierCache(deps),
    written,
    rate(now) {
      const days = written(now);
      const first = days[0];
      if (first === undefined) return 0;
      const total = days.reduce((n, d) => n + d.bytes, 0);
      return total / Math.max(1, (now - first.day) / DAY_MS);
    },
  };
}
