// A reader of the change journal with its own persisted cursor: it hands the changes after its
// cursor to `handle` in order, in batches, and moves the cursor only once a batch is handled, so a
// crash repeats a batch and never skips one (at-least-once). Woken after each commit.

import type { ChangeEvent } from '../events.js';
import type { Logger } from '../lib/index.js';
import type { ChangeJournal, ReadOptions } from './journal.js';

export interface JournalFollowerOptions {
  journal: ChangeJournal;
  /** The reader's name, the key of its cursor. */
  reader: string;
  /** Handles changes in sequence order; the cursor moves past them when it resolves. */
  handle(changes: ChangeEvent[]): Promise<void> | void;
  log: Logger;
  /** Changes per batch (default 500). */
  batch?: number;
  /** Milliseconds before a batch whose handling failed is tried again (default 1,000). */
  retryMs?: number;
  /**
   * Save the cursor at most this often (ms) instead of after every batch: for a reader that saves it
   * itself in the transaction of what it writes, and would otherwise commit once per write for
   * nothing. After a crash it reads again from the last save; it must then be idempotent.
   */
  saveEveryMs?: number;
  /** What each change read back carries (see ChangeJournal.readAfter). */
  read?: ReadOptions;
}

export interface JournalFollower {
  /** Registers the reader (a new one starts at the journal's end) and reads what is pending. */
  start(): void;
  /** New changes were committed. */
  wake(): void;
  /**
   * New changes, as committed: handled without reading the journal when they follow the cursor with
   * no gap and nothing is being handled; false otherwise (then call wake).
   */
  offer(changes: readonly ChangeEvent[]): boolean;
  /**
   * Moves past every change committed so far without reading them (the reader knows none can
   * concern it); only while no batch is being handled.
   */
  skipToEnd(seq?: number): void;
  /** The sequence up to which every change is handled. */
  position(): number;
  /** Resolves once every change committed so far is handled (or the follower stops). */
  idle(): Promise<void>;
  /** Stops after the batch in progress, saving the cursor. */
  stop(): Promise<void>;
}

export function createJournalFollower(opts: JournalFollowerOptions): JournalFollower {
  const { journal, reader, handle, log } = opts;
  const batch = opts.batch ?? 500;
  const retryMs = opts.retryMs ?? 1_000;
  let cursor = 0;
  let saved = 0;
  let savedAt = 0;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let idleWaiters: Array<() => void> = [];

  const settleIdle = (): void => {
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const w of waiters) w();
  };

  const save = (): void => {
    if (cursor === saved) return;
    journal.setCursor(reader, cursor);
    saved = cursor;
    savedAt = performance.now();
  };

  /** Hands over `offered` (the changes right after the cursor), then what the journal holds after it. */
  const drain = async (offered?: ChangeEvent[]): Promise<void> => {
    let next = offered;
    for (;;) {
      again = false;
      const changes = next ?? journal.readAfter(cursor, batch, opts.read);
      next = undefined;
      if (changes.length === 0) {
        if (again && !stopped) continue;
        return;
      }
      await handle(changes);
      cursor = changes[changes.length - 1]!.seq;
      if (opts.saveEveryMs === undefined || performance.now() - savedAt >= opts.saveEveryMs) save();
      if (stopped) return;
      // An offered batch is all there is unless more was announced meanwhile.
      if (offered !== undefined && !again) return;
    }
  };

  const run = (offered?: ChangeEvent[]): void => {
    if (stopped || retry) return;
    if (running) {
      again = true;
      return;
    }
    running = drain(offered).then(
      () => {
        running = undefined;
        if (again && !stopped) run();
        else settleIdle();
      },
      (err: unknown) => {
        running = undefined;
        log.error('journal reader failed; retrying', { reader, after: cursor, err });
        if (stopped) return settleIdle();
        retry = setTimeout(() => {
          retry = undefined;
          run();
        }, retryMs);
        retry.unref();
      },
    );
  };

  return {
    start() {
      const known = journal.cursor(reader);
      if (known === undefined) {
        cursor = journal.lastSeq();
        journal.setCursor(reader, cursor);
      } else {
        cursor = known;
      }
      saved = cursor;
      savedAt = performance.now();
      run();
    },
    wake: () => run(),
    offer(changes) {
      if (stopped || running || retry || changes.length === 0 || changes[0]!.seq !== cursor + 1) return false;
      for (let i = 1; i < changes.length; i++) if (changes[i]!.seq !== changes[i - 1]!.seq + 1) return false;
      run([...changes]);
      return true;
    },
    skipToEnd(seq) {
      if (stopped || running || retry) return run();
      cursor = Math.max(cursor, seq ?? journal.lastSeq());
      if (opts.saveEveryMs === undefined || performance.now() - savedAt >= opts.saveEveryMs) save();
      settleIdle();
    },
    position: () => cursor,
    idle() {
      if (stopped || (!running && !retry && journal.readAfter(cursor, 1).length === 0)) return Promise.resolve();
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
        if (!running && !retry) run();
      });
    },
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      retry = undefined;
      await running;
      save();
      settleIdle();
    },
  };
}
