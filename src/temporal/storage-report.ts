// What GET /edgeld/v1/storage and the storage gauges of /metrics show: the pages in use against the
// budget, the free disk space, the bytes of each level of history (cached, with their age), the
// bytes written per day over the last week and the days left at that rate.

import type { DailyWritten, StorageUsage, TierBytes } from '../store/index.js';
import { BUDGET_HIGH, BUDGET_LOW, type BudgetStats, type DiskBudget } from './disk-budget.js';

export interface StorageReport {
  /** Bytes of the pages in use ((page_count − freelist_count) × page_size), what the budget counts. */
  usedBytes: number;
  /** Bytes of the database file (pages in use and free pages). */
  fileBytes: number;
  /** Bytes of the WAL file (not counted by the budget). */
  walBytes: number;
  /** storage.max-bytes; undefined when there is no budget. */
  maxBytes: number | undefined;
  /** The pages in use above which history is dropped, and down to which. */
  watermarks: { high: number; low: number } | undefined;
  /** Free bytes of the database's file system; undefined when unknown. */
  freeDiskBytes: number | undefined;
  /** The bytes of each tier by the latest measurement, and when it ended; undefined before the first. */
  tiers: { bytes: TierBytes; at: number } | undefined;
  /** Bytes written on each of the last seven UTC days with a figure, oldest first. */
  written: DailyWritten[];
  /** Bytes written per day over that week. */
  bytesPerDay: number;
  /** Days until the budget (or, without one, the disk) is full at that rate; undefined when the rate is 0 or the room unknown. */
  daysLeft: number | undefined;
  budget: BudgetStats;
}

export interface StorageReportDeps {
  budget: DiskBudget;
  store: { readonly usage: StorageUsage; freeDiskBytes(): number | undefined; diskStats(): { walBytes: number } };
}

/** The report as of `now`: the pages in use read now, the bytes per tier from the cache. */
export function reportStorage({ budget, store }: StorageReportDeps, now: number): StorageReport {
  const { figures, maxBytes } = budget;
  const usedBytes = store.usage.usedBytes();
  const freeDiskBytes = store.freeDiskBytes();
  const bytesPerDay = figures.rate(now);
  const room = maxBytes > 0 ? Math.max(0, maxBytes - usedBytes) : freeDiskBytes;
  return {
    usedBytes,
    fileBytes: store.usage.fileBytes(),
    walBytes: store.diskStats().walBytes,
    maxBytes: maxBytes > 0 ? maxBytes : undefined,
    watermarks: maxBytes > 0 ? { high: Math.floor(maxBytes * BUDGET_HIGH), low: Math.floor(maxBytes * BUDGET_LOW) } : undefined,
    freeDiskBytes,
    tiers: figures.tiers(),
    written: figures.written(now),
    bytesPerDay: Math.round(bytesPerDay),
    daysLeft: bytesPerDay > 0 && room !== undefined ? Math.round((room / bytesPerDay) * 10) / 10 : undefined,
    budget: budget.stats(),
  };
}

/** The age of the bytes per tier in seconds; undefined before the first measurement. */
export const tiersAgeSeconds = (r: StorageReport, now: number): number | undefined => (r.tiers === undefined ? undefined : Math.max(0, (now - r.tiers.at) / 1000));
