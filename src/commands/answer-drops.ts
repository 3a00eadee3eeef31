// Answers on `cmdexe` that are dropped, counted by reason and logged at most once a second per
// reason (a device flooding bad answers fills neither the log nor the disk).

import type { Clock, Logger } from '../lib/index.js';

/** invalid: not a valid answer; unknown: no open command has its id; foreign: another device's; expired; duplicate: one is being recorded. */
export type AnswerDrop = 'invalid' | 'unknown' | 'foreign' | 'expired' | 'duplicate';
export const ANSWER_DROPS: readonly AnswerDrop[] = ['invalid', 'unknown', 'foreign', 'expired', 'duplicate'];

export interface AnswerDrops {
  drop(reason: AnswerDrop, fields: Record<string, unknown>): void;
  counts(): Record<AnswerDrop, number>;
}

const LOG_EVERY_MS = 1_000;

export function createAnswerDrops(log: Logger, clock: Clock): AnswerDrops {
  const counts: Record<AnswerDrop, number> = { invalid: 0, unknown: 0, foreign: 0, expired: 0, duplicate: 0 };
  const loggedAt: Record<AnswerDrop, number> = { invalid: -Infinity, unknown: -Infinity, foreign: -Infinity, expired: -Infinity, duplicate: -Infinity };
  const unlogged: Record<AnswerDrop, number> = { invalid: 0, unknown: 0, foreign: 0, expired: 0, duplicate: 0 };
  return {
    drop(reason, fields) {
      counts[reason] += 1;
      const now = clock.now();
      if (now - loggedAt[reason] < LOG_EVERY_MS) {
        unlogged[reason] += 1;
        return;
      }
      log.warn('command answer dropped', { reason, ...fields, ...(unlogged[reason] > 0 ? { alsoDropped: unlogged[reason] } : {}) });
      loggedAt[reason] = now;
      unlogged[reason] = 0;
    },
    counts: () => ({ ...counts }),
  };
}
