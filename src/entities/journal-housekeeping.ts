// The journal pruning job body: changes every reader has passed go, and so do changes older than
// the horizon that a reader has not read (a reader down that long has lost them: said in the log).
// A gateway under steady load journals a change per write, hundreds of thousands between two runs:
// they go in short transactions, yielding to the event loop in between, so that requests and
// notifications never wait for one long DELETE. Each chunk is a queued write: it is committed with the
// writes of its turn, and waits like them while the checkpointer holds the queue (a direct
// transaction would keep adding WAL frames under the hold, which then lasts until its time limit).

import type { Logger } from '../lib/index.js';
import type { PruneReport, Store } from '../store/index.js';

/** Rows removed per transaction (a few milliseconds on a Pi's SD card). */
const JOURNAL_PRUNE_CHUNK = 2_000;

export interface JournalPruneDeps {
  store: Pick<Store, 'journal' | 'isOpen' | 'write'>;
  log: Logger;
  /** The instant before which a change goes even when unread (now minus journal.max-age). */
  horizon(now: number): number;
  chunk?: number;
  /** Aborted at shutdown: the run stops after the chunk in progress (the next run goes on). */
  signal?: AbortSignal;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One pruning run as of `now`; undefined when the store is closed before it starts. `more` when it stopped early. */
export async function pruneJournal({ store, log, horizon, chunk, signal }: JournalPruneDeps, now: number): Promise<PruneReport | undefined> {
  if (!store.isOpen()) return undefined;
  const before = horizon(now);
  const total: PruneReport = { passed: 0, aged: 0, more: false };
  for (;;) {
    const report = await store.write(() => store.journal.prune(before, chunk ?? JOURNAL_PRUNE_CHUNK));
    total.passed += report.passed;
    total.aged += report.aged;
    if (!report.more) break;
    await nextTurn();
    if (!store.isOpen() || signal?.aborted === true) {
      total.more = true;
      break;
    }
  }
  if (total.aged > 0) log.warn('changes dropped from the journal before every reader read them', { count: total.aged });
  return total;
}
