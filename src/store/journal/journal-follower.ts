// A reader of the change journal with its own persisted cursor: it hands the changes after its
// cursor to `handle` in order, in batches, and moves the cursor only once a batch is handled, so a
// crash repeats a batch and never skips one (at-least-once). Woken after each commit.

import type { ChangeEvent } from '../../events.js';
import type { Logger } from '../../lib/index.js';
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
  /**
   * The highest sequence the saved cursor may reach, for a reader that has handled changes whose
   * effects are not durable yet (kept in memory): after a crash it reads those again.
   */
  savable?: () => number;
}

export interface JournalFollower {
  /** Registers the reader (a new one starts at the journal's end) and reads what is pending. */
  start(): void;
  /** New changes were committed. */
  wake(): void;
  /**
   * New changes, as committed: handled without reading the journal when they follow with no gap the
   * cursor, or the changes being handled (then they are handled next); false otherwise (then call
   * wake).
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
  /** Saves the cursor now (as far as `savable` allows). */
  save(): void;
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
  /** The last sequence of the changes being handled or offered after them (while running). */
  let tail = 0;
  /** Changes offered while a batch is handled, right after it: handled next, without a journal read. */
  let offeredNext: ChangeEvent[] = [];
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let idleWaiters: Array<() => void> = [];

  const settleIdle = (): void => {
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const w of waiters) w();
  };

  const save = (): void => {
    const to = opts.savable === undefined ? cursor : Math.min(cursor, opts.savable());
    if (to <= saved) return;
    journal.setCursor(reader, to);
    saved = to;
    savedAt = performance.now();
  };

  /** Hands over `offered` (the changes right after the cursor), then what the journal holds after it. */
  const drain = async (offered?: ChangeEvent[]): Promise<void> => {
    let next = offered;
    for (;;) {
      let changes: ChangeEvent[];
      if (next !== undefined) {
        changes = next;
        next = undefined;
      } else {
        // A read covers every change announced before it.
        again = false;
        changes = journal.readAfter(cursor, batch, opts.read);
        if (changes.length === 0) return;
      }
      const last = changes[changes.length - 1]!.seq;
      tail = last;
      await handle(changes);
      cursor = last;
      if (opts.saveEveryMs === undefined || performance.now() - savedAt >= opts.saveEveryMs) save();
      if (stopped) return;
      if (offeredNext.length > 0) {
        next = offeredNext;
        offeredNext = [];
        continue;
      }
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
        // Offered after the last batch was handled, before this callback.
        const next = offeredNext;
        offeredNext = [];
        if (stopped) settleIdle();
        else if (next.length > 0) run(next);
        else if (again) run();
        else settleIdle();
      },
      (err: unknown) => {
        running = undefined;
        // What was offered is read again from the journal.
        offeredNext = [];
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
      if (stopped || retry || changes.length === 0 || changes[0]!.seq !== (running ? tail : cursor) + 1) return false;
      for (let i = 1; i < changes.length; i++) if (changes[i]!.seq !== changes[i - 1]!.seq + 1) return false;
      if (!running) {
        run([...changes]);
        return true;
      }
      if (offeredNext.length + changes.length > batch) return false;
      offeredNext.push(...changes);
      tail = changes[changes.length - 1]!.seq;
      return true;
    },
    skipToEnd(seq) {
      if (stopped || running || retry) return run();
      cursor = Math.max(cursor, seq ?? journal.lastSeq());
      if (opts.saveEveryMs === undefined || performance.now() - savedAt >= opts.saveEveryMs) save();
      settleIdle();
    },
    position: () => cursor,
    save,
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
