// The journal pruning job body: changes every reader has passed go, and so do changes older than
// the horizon that a reader has not read (a reader down that long has lost them: said in the log).

import type { Logger } from '../lib/index.js';
import type { PruneReport, Store } from '../store/index.js';

export interface JournalPruneDeps {
  store: Pick<Store, 'journal' | 'isOpen'>;
  log: Logger;
  /** The instant before which a change goes even when unread (now minus journal.max-age). */
  horizon(now: number): number;
}

export function pruneJournal({ store, log, horizon }: JournalPruneDeps, now: number): PruneReport | undefined {
  if (!store.isOpen()) return undefined;
  const report = store.journal.prune(horizon(now));
  if (report.aged > 0) log.warn('changes dropped from the journal before every reader read them', { count: report.aged });
  return report;
}
