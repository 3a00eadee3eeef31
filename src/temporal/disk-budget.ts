// The disk budget (storage.max-bytes): the bytes of the database's pages in use are checked every
// few seconds (two pragmas) and after each drop. Above the high watermark, whole history tables go,
// oldest first, until the low watermark: raw buckets whose summaries exist (with rollups off, raw
// buckets all the same: the operator chose a size over the history), then minute summaries whose
// hours exist. Hour summaries never go: they are the long record, a row per series and hour, bounded
// by history.hour-retention. When nothing can go and the budget is reached, writes are refused (the
// path of storage.min-free-bytes: 507, MQTT measurements dropped) until the pages in use are back
// under the high watermark.

import type { Clock, Logger } from '../lib/index.js';
import type { HistoryRetention, RollupRepository, StorageUsage } from '../store/index.js';
import { ROLLUP_GRACE_MS } from './rollups.js';
import { createStorageFigures, type StorageFigures } from './storage-figures.js';

/** Above this share of the budget, history is dropped... */
export const BUDGET_HIGH = 0.95;
/** ...until the pages in use are back at this share. */
export const BUDGET_LOW = 0.9;
const CHECK_EVERY_MS = 5_000;

export type BudgetLevel = 'raw' | 'minute';

export interface DiskBudgetDeps {
  store: {
    isOpen(): boolean;
    transaction<T>(fn: () => T): T;
    readonly usage: StorageUsage;
    readonly history: HistoryRetention & { readonly rollups: RollupRepository };
  };
  clock: Clock;
  log: Logger;
  /** storage.max-bytes; 0: no budget (the figures are still kept). */
  maxBytes: number;
  /** history.rollups: raw buckets then go only once summarized. */
  rollups: boolean;
}

export interface BudgetStats {
  /** Tables dropped by the budget, by level. */
  dropped: Record<BudgetLevel, number>;
  /** Times writes were stopped for the budget. */
  holds: number;
  /** Whether writes are refused now. */
  refusing: boolean;
}

export interface DiskBudget {
  /** One check: pages in use, drops while above the high watermark, writes held or released; resolves with the pages in use. */
  check(): Promise<number>;
  readonly figures: StorageFigures;
  readonly maxBytes: number;
  stats(): BudgetStats;
  /** Starts the periodic check (a timer that keeps no process alive). */
  start(): void;
  /** Stops them and writes the day's figures. */
  stop(): void;
}

interface Drop {
  level: BudgetLevel;
  name: string;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Drops the oldest table that may go; undefined when none may. */
function dropOldest(deps: DiskBudgetDeps, now: number): Drop | undefined {
  const { history } = deps.store;
  const { rollups } = history;
  const rawHorizon = deps.rollups ? Math.min(rollups.completeBefore('minute'), rollups.completeBefore('hour'), now - ROLLUP_GRACE_MS) : now;
  const raw = history.dropBucketBefore(rawHorizon);
  if (raw !== undefined) return { level: 'raw', name: raw };
  const hourBefore = rollups.completeBefore('hour');
  const minute = rollups.tables('minute').find((t) => t.endMs <= hourBefore);
  if (minute === undefined || rollups.dropTableBefore('minute', minute.endMs) === undefined) return undefined;
  deps.store.transaction(() => rollups.noteDropped('minute', minute.endMs));
  return { level: 'minute', name: minute.name };
}

export function createDiskBudget(deps: DiskBudgetDeps): DiskBudget {
  const { store, log, clock, maxBytes } = deps;
  const figures = createStorageFigures(deps);
  const stats: BudgetStats = { dropped: { raw: 0, minute: 0 }, holds: 0, refusing: false };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;

  const hold = (refuse: boolean, used: number): void => {
    if (refuse === stats.refusing) return;
    stats.refusing = refuse;
    store.usage.setOverBudget(refuse);
    if (refuse) {
      stats.holds += 1;
      log.error('disk budget reached and no history left to drop: writes are refused', { usedBytes: used, maxBytes });
    } else {
      log.warn('back under the disk budget: writes are accepted again', { usedBytes: used, maxBytes });
    }
  };

  const enforce = async (): Promise<number> => {
    let used = figures.sample();
    if (maxBytes <= 0) return used;
    let stuck = false;
    if (used > maxBytes * BUDGET_HIGH) {
      while (used > maxBytes * BUDGET_LOW && store.isOpen()) {
        const drop = dropOldest(deps, clock.now());
        if (drop === undefined) {
          stuck = true;
          break;
        }
        const before = used;
        used = figures.sample();
        stats.dropped[drop.level] += 1;
        const fields = { table: drop.name, tier: drop.level, bytesBefore: before, bytesAfter: used, maxBytes };
        if (drop.level === 'raw' && !deps.rollups) log.warn('disk budget: raw history dropped without summaries (history.rollups is off)', fields);
        else log.info('disk budget: history dropped', fields);
        await nextTurn();
      }
    }
    if (stuck && used >= maxBytes) hold(true, used);
    else if (stats.refusing && used <= maxBytes * BUDGET_HIGH) hold(false, used);
    return used;
  };

  const check = (): Promise<number> => {
    if (!store.isOpen()) return Promise.resolve(0);
    running ??= enforce().finally(() => {
      running = undefined;
    });
    return running;
  };

  const failed = (what: string) => (err: unknown): void => {
    if (store.isOpen()) log.error(what, { err });
  };

  return {
    check,
    figures,
    maxBytes,
    stats: () => ({ ...stats, dropped: { ...stats.dropped } }),
    start() {
      if (timer !== undefined) return;
      void check().catch(failed('disk budget check failed'));
      timer = setInterval(() => void check().catch(failed('disk budget check failed')), CHECK_EVERY_MS);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
      figures.flush(true);
    },
  };
}
