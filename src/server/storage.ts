// The disk budget (storage.max-bytes) and the figures of the database's use of the disk: built from
// the store, shown by GET /edgeld/v1/storage and as gauges in /metrics.

import type { Config } from '../config/index.js';
import type { MetricsSource } from '../http/index.js';
import type { Clock, Logger } from '../lib/index.js';
import type { Store } from '../store/index.js';
import { createDiskBudget, reportStorage, tiersAgeSeconds, type DiskBudget, type StorageReport } from '../temporal/index.js';

export interface StorageWatch {
  budget: DiskBudget;
  report(now: number): StorageReport;
}

export function buildStorageWatch(deps: { config: Config; store: Store; clock: Clock; log: Logger; rollups: boolean }): StorageWatch {
  const { store, clock } = deps;
  const budget = createDiskBudget({ store, clock, log: deps.log.child('storage'), maxBytes: deps.config.storage.maxBytes, rollups: deps.rollups });
  return { budget, report: (now) => reportStorage({ budget, store }, now) };
}

/** The storage gauges: each scrape reads two pragmas, the daily figures and the cached bytes per tier. */
export function storageMetrics(watch: StorageWatch, clock: Clock): MetricsSource[] {
  // NOTE: one report per scrape, shared by the gauges read in the same turn.
  let cached: { at: number; report: StorageReport } | undefined;
  const report = (): StorageReport => {
    const now = clock.now();
    if (cached === undefined || cached.at !== now) cached = { at: now, report: watch.report(now) };
    return cached.report;
  };
  const optional = (v: number | undefined): number | Array<{ value: number }> => (v === undefined ? [] : v);
  return [
    { name: 'edgeld_storage_used_bytes', help: 'Bytes of the database pages in use ((page_count - freelist_count) * page_size), what storage.max-bytes counts', collect: () => report().usedBytes },
    { name: 'edgeld_storage_max_bytes', help: 'The disk budget, storage.max-bytes (0: none)', collect: () => report().maxBytes ?? 0 },
    { name: 'edgeld_storage_free_disk_bytes', help: 'Free bytes of the file system of the database', collect: () => optional(report().freeDiskBytes) },
    {
      name: 'edgeld_storage_tier_bytes', help: 'Bytes of the pages of each level of history (raw, minute, hour) and of the rest (other), measured every few minutes',
      labelNames: ['tier'], collect: () => Object.entries(report().tiers?.bytes ?? {}).map(([tier, value]) => ({ labels: { tier }, value })),
    },
    { name: 'edgeld_storage_tier_bytes_age_seconds', help: 'Age of the edgeld_storage_tier_bytes figures', collect: () => optional(tiersAgeSeconds(report(), clock.now())) },
    { name: 'edgeld_storage_written_bytes_per_day', help: 'Bytes written per day over the last seven UTC days (growth of the pages in use)', collect: () => report().bytesPerDay },
    { name: 'edgeld_storage_days_left', help: 'Days until the budget (or, without one, the disk) is full at that rate; absent when the rate is 0', collect: () => optional(report().daysLeft) },
    { name: 'edgeld_storage_writes_refused', help: '1 while writes are refused because the database is at its disk budget', collect: () => (report().budget.refusing ? 1 : 0) },
    {
      name: 'edgeld_storage_budget_drops_total', type: 'counter', help: 'History tables dropped to stay under storage.max-bytes, by level (raw, minute)',
      labelNames: ['level'], collect: () => Object.entries(report().budget.dropped).map(([level, value]) => ({ labels: { level }, value })),
    },
    { name: 'edgeld_storage_budget_holds_total', type: 'counter', help: 'Times writes were stopped because the database reached storage.max-bytes with nothing left to drop', collect: () => report().budget.holds },
  ];
}
