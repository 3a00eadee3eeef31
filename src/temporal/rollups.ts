// The rollup job body: reads the raw rows written since its last run, then computes again the
// minutes and hours they touched once those have closed, in short transactions with a turn of the
// event loop between two, so that ingestion never waits long for it.

import type { Logger } from '../lib/index.js';
import { ROLLUP_TIERS, TIER_MS, type RollupRepository } from '../store/index.js';

/** Raw rows read per transaction (about 8 ms of work on a loaded gateway: measurements wait no longer). */
const SCAN_CHUNK = 250;
/** Summaries computed per transaction. */
const ROLL_CHUNK = 500;
/**
 * A period is computed once it ended this long ago: a measurement stamped just before the end of a
 * minute may still be on its way. One that arrives later marks its period again (it is late data).
 */
export const ROLLUP_GRACE_MS = 10_000;

export interface RollupDeps {
  store: { isOpen(): boolean; readonly history: { readonly rollups: RollupRepository } };
  log: Logger;
  /**
   * Rows observed before this instant are added to their summaries rather than computed again from
   * the raw rows (retention may have removed their neighbours): now minus the shortest raw retention.
   */
  mergeBefore: number;
  signal?: AbortSignal;
}

export interface RollupReport {
  /** Raw rows read. */
  read: number;
  /** Summaries computed, by tier. */
  rolled: Record<'minute' | 'hour', number>;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One run as of `now`: every raw row written so far is taken into account, every closed period computed. */
export async function runRollups(deps: RollupDeps, now: number): Promise<RollupReport> {
  const { store, signal } = deps;
  const { rollups } = store.history;
  const report: RollupReport = { read: 0, rolled: { minute: 0, hour: 0 } };
  const stopped = (): boolean => !store.isOpen() || signal?.aborted === true;
  // Raw rows may also be gone before what retention says: the disk budget drops whole buckets.
  const mergeBefore = Math.max(deps.mergeBefore, rollups.droppedBefore('raw') ?? Number.NEGATIVE_INFINITY);
  const closedBefore = now - ROLLUP_GRACE_MS;
  for (;;) {
    if (stopped()) return report;
    const read = rollups.scan(SCAN_CHUNK, mergeBefore, closedBefore);
    report.read += read;
    if (read === 0) break;
    await nextTurn();
  }
  for (const tier of ROLLUP_TIERS) {
    for (;;) {
      if (stopped()) return report;
      // Each call stops after a few milliseconds of work: the loop ends when nothing is left.
      const n = rollups.roll(tier, closedBefore, ROLL_CHUNK);
      report.rolled[tier] += n;
      if (n === 0) break;
      await nextTurn();
    }
    rollups.setRolledBefore(tier, Math.floor(closedBefore / TIER_MS[tier]) * TIER_MS[tier]);
  }
  if (report.rolled.minute > 0 || report.rolled.hour > 0) deps.log.debug('history rollups', { ...report });
  return report;
}
