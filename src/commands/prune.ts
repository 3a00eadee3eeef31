// Housekeeping of the commands table: a finished command (OK, ERROR, EXPIRED) stays as a row for
// commands.retention after it finished, then goes; its `_status` and `_info` stay in the history like
// any attribute's. A gateway issuing ten commands a minute finishes five million a year: they go in
// bounded chunks, each a queued write of the store (committed with the writes of its turn), yielding
// to the event loop in between, so that requests and the dispatcher never wait for one long DELETE.

import type { Logger } from '../lib/index.js';
import type { Store } from '../store/index.js';

/** Rows removed per transaction. */
const COMMANDS_PRUNE_CHUNK = 1_000;

export interface CommandPruneDeps {
  store: Pick<Store, 'commands' | 'isOpen' | 'write'>;
  log: Logger;
  chunk?: number;
  /** Aborted at shutdown: the run stops after the chunk in progress (the next run goes on). */
  signal?: AbortSignal;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Removes the commands that finished before `before`; returns how many, and whether it stopped early. */
export async function pruneFinishedCommands({ store, log, chunk, signal }: CommandPruneDeps, before: number): Promise<{ removed: number; more: boolean }> {
  const limit = chunk ?? COMMANDS_PRUNE_CHUNK;
  let removed = 0;
  let more = false;
  while (store.isOpen()) {
    const n = await store.write(() => store.commands.pruneFinished(before, limit));
    removed += n;
    if (n < limit) break;
    await nextTurn();
    if (signal?.aborted === true) {
      more = true;
      break;
    }
  }
  if (removed > 0) log.info('finished commands removed', { count: removed, finishedBefore: new Date(before).toISOString(), more });
  return { removed, more };
}
