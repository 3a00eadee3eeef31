// The temporal use cases behind one handle: reads (retrieve, query), writes (create, add, modify,
// delete) and the retention job body, built from the store, the change emitter and the clock.

import type { Clock, IdGenerator, Logger } from '../lib/index.js';
import type { WriteCore } from '../events.js';
import type { HistoryRetention, RollupRepository, StoreReader } from '../store/index.js';
import { removesHistory, type HistoryPolicy } from './policy.js';
import { createTemporalReader, type TemporalReader } from './read.js';
import { mergeHorizon, runRetention, type RetentionReport } from './retention.js';
import { runRollups, type RollupReport } from './rollups.js';
import { createTemporalWriter, type TemporalWriter } from './write.js';

export interface TemporalServiceDeps {
  store: StoreReader & {
    isOpen(): boolean;
    readonly history: HistoryRetention & { readonly rollups: RollupRepository; seriesOf(tenant: string, type?: string): number[] };
  };
  core: WriteCore;
  clock: Clock;
  newId: IdGenerator;
  log: Logger;
  /** Most instances per attribute in one answer (`temporal.limit`). */
  limit: number;
  /** Rollups and how long each level of history is kept (`history.*`); absent: no rollups, kept for ever. */
  policy?: HistoryPolicy;
}

export interface TemporalService extends TemporalReader, TemporalWriter {
  now(): number;
  /**
   * The retention job body as of `now` (nothing to do without a retention period); `signal`
   * (shutdown) stops it between two chunks.
   */
  applyRetention(now: number, signal?: AbortSignal): Promise<RetentionReport | undefined>;
  /** The rollup job body as of `now` (nothing to do with rollups off). */
  applyRollups(now: number, signal?: AbortSignal): Promise<RollupReport | undefined>;
}

export function createTemporalService(deps: TemporalServiceDeps): TemporalService {
  const { store, clock, log, policy } = deps;
  const stop = (signal: AbortSignal | undefined): { signal?: AbortSignal } => (signal ? { signal } : {});
  const removes = policy !== undefined && removesHistory(policy);
  return {
    ...createTemporalReader({ store, limit: deps.limit }),
    ...createTemporalWriter({ core: deps.core, newId: deps.newId }),
    now: () => clock.now(),
    applyRetention: async (now, signal) => (policy && removes
      ? runRetention({ store, log, retention: policy.retention, rules: policy.rules, rollups: policy.rollups, ...stop(signal) }, now) : undefined),
    applyRollups: async (now, signal) => (policy?.rollups === true
      ? runRollups({ store, log, mergeBefore: mergeHorizon(now, policy.retention, policy.rules), ...stop(signal) }, now) : undefined),
  };
}
