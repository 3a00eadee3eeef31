// Free space on the file system of the database, checked cheaply: one statfs at start, then at most
// one asynchronous statfs every few seconds, started by a check that finds the figure stale. Writes
// are refused below a threshold, before SQLite runs out of space in the middle of a transaction.

import { statfs, statfsSync } from 'node:fs';
import type { Clock, Logger } from '../lib/index.js';

/** How old a free-space figure may be before a check refreshes it. */
const DISK_SPACE_MAX_AGE_MS = 5_000;

export interface DiskSpace {
  /** Whether at least the threshold is free, by the latest figure; refreshes a stale one in the background. */
  hasRoom(): boolean;
  /** Bytes available to the broker by the latest figure (refreshed in the background when stale); undefined when unknown (statfs failed). */
  freeBytes(): number | undefined;
}

export interface DiskSpaceOptions {
  /** A path on the file system to watch (the database's directory). */
  dir: string;
  /** Writes are refused below this many free bytes; 0 never refuses. */
  minFreeBytes: number;
  clock: Clock;
  log: Logger;
}

export function watchDiskSpace({ dir, minFreeBytes, clock, log }: DiskSpaceOptions): DiskSpace {
  let free: number | undefined;
  let checkedAt = -Infinity;
  let refreshing = false;
  let wasLow = false;

  const take = (stats: { bavail: number; bsize: number }): void => {
    free = stats.bavail * stats.bsize;
    const low = free < minFreeBytes;
    if (low !== wasLow) {
      if (low) log.error('disk nearly full: writes are refused until space is freed', { dir, freeBytes: free, minFreeBytes });
      else log.warn('disk space recovered: writes are accepted again', { dir, freeBytes: free, minFreeBytes });
      wasLow = low;
    }
  };
  const failed = (err: unknown): void => {
    // NOTE: an unknown figure never refuses writes: a failing statfs must not stop the broker.
    if (free !== undefined) log.warn('cannot read the free disk space', { dir, err });
    free = undefined;
    wasLow = false;
  };

  const takeNow = (): void => {
    try {
      take(statfsSync(dir));
    } catch (err) {
      failed(err);
    }
    checkedAt = clock.now();
  };
  if (minFreeBytes > 0) takeNow();

  const refresh = (): void => {
    if (refreshing) return;
    refreshing = true;
    statfs(dir, (err, stats) => {
      refreshing = false;
      checkedAt = clock.now();
      if (err) failed(err);
      else take(stats);
    });
  };

  return {
    hasRoom() {
      if (minFreeBytes <= 0) return true;
      if (clock.now() - checkedAt >= DISK_SPACE_MAX_AGE_MS) refresh();
      return free === undefined || free >= minFreeBytes;
    },
    freeBytes() {
      // Without a threshold nothing took a figure at start: the first ask takes one.
      if (checkedAt === -Infinity) takeNow();
      else if (clock.now() - checkedAt >= DISK_SPACE_MAX_AGE_MS) refresh();
      return free;
    },
  };
}
