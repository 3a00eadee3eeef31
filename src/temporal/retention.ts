// The history retention job body (`history.retention`): whole buckets before the horizon are dropped,
// the straddling one is pruned in short chunked transactions, yielding to the event loop in between.

import type { Logger } from '../lib/index.js';
import type { HistoryRetention } from '../store/index.js';
import { addDuration } from './duration.js';
import type { Duration } from './types.js';

/** Rows deleted per transaction in the straddling bucket. */
const RETENTION_CHUNK = 5000;

export interface RetentionDeps {
  /** Retention drops whole buckets of history: housekeeping, not a change of any entity. */
  store: { isOpen(): boolean; readonly history: HistoryRetention };
  log: Logger;
  /** How long history is kept. */
  retention: Duration;
  chunk?: number;
  /** Aborted at shutdown: the run stops between two chunks (the next run goes on). */
  signal?: AbortSignal;
}

export interface RetentionReport {
  horizon: number;
  dropped: string[];
  pruned: number;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The instant before which history goes: `now` minus the retention period (calendar-aware). */
const retentionHorizon = (now: number, retention: Duration): number => addDuration(now, retention, -1);

/** One retention run as of `now`; idempotent (a second run finds nothing left to do). */
export async function runRetention(deps: RetentionDeps, now: number): Promise<RetentionReport> {
  const { store, log } = deps;
  const chunk = deps.chunk ?? RETENTION_CHUNK;
  const horizon = retentionHorizon(now, deps.retention);
  const dropped: string[] = [];
  let pruned = 0;
  for (;;) {
    if (!store.isOpen()) return { horizon, dropped, pruned };
    const name = store.history.dropBucketBefore(horizon);
    if (name === undefined) break;
    dropped.push(name);
    await nextTurn();
    if (deps.signal?.aborted === true) break;
  }
  for (;;) {
    if (!store.isOpen() || deps.signal?.aborted === true) break;
    const n = store.history.pruneBefore(horizon, chunk);
    pruned += n;
    if (n < chunk) break;
    await nextTurn();
  }
  if (dropped.length > 0 || pruned > 0) {
    log.info('history retention', { horizon: new Date(horizon).toISOString(), dropped: dropped.length, pruned });
  }
  return { horizon, dropped, pruned };
}
