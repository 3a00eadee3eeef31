// The temporal use cases behind one handle: reads (retrieve, query), writes (create, add, modify,
// delete) and the retention job body, built from the store, the change emitter and the clock.

import type { Clock, IdGenerator, Logger } from '../lib/index.js';
import type { WriteCore } from '../events.js';
import type { HistoryRetention, StoreReader } from '../store/index.js';
import { createTemporalReader, type TemporalReader } from './read.js';
import { runRetention, type RetentionReport } from './retention.js';
import { createTemporalWriter, type TemporalWriter } from './write.js';
import type { Duration } from './types.js';

export interface TemporalServiceDeps {
  store: StoreReader & { isOpen(): boolean; readonly history: HistoryRetention };
  core: WriteCore;
  clock: Clock;
  newId: IdGenerator;
  log: Logger;
  /** Most instances per attribute in one answer (`temporal.limit`). */
  limit: number;
  /** How long history is kept (`history.retention`); undefined: for ever. */
  retention?: Duration;
}

export interface TemporalService extends TemporalReader, TemporalWriter {
  now(): number;
  /**
   * The retention job body as of `now` (nothing to do without a retention period); `signal`
   * (shutdown) stops it between two chunks.
   */
  applyRetention(now: number, signal?: AbortSignal): Promise<RetentionReport | undefined>;
}

export function createTemporalService(deps: TemporalServiceDeps): TemporalService {
  const { store, clock, log, retention } = deps;
  return {
    ...createTemporalReader({ store, limit: deps.limit }),
    ...createTemporalWriter({ core: deps.core, newId: deps.newId }),
    now: () => clock.now(),
    applyRetention: async (now, signal) => (retention ? runRetention({ store, log, retention, ...(signal ? { signal } : {}) }, now) : undefined),
  };
}
