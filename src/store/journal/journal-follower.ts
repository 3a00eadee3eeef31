// The journal's one reader: every reaction to a change (notifications, federation upstream, and the
// readers to come) is a consumer registered on the feed, with its own persisted cursor. The feed
// keeps the changes announced after their commit, so a consumer that follows closely is handed them
// without reading the journal back; each consumer's follower hands the changes after its cursor to
// `handle` in order and moves the cursor only past what was handled, so a crash repeats changes and
// never skips one (at least once). Woken after each commit.

import type { ChangeEvent } from '../../events.js';
import type { Logger } from '../../lib/index.js';
import type { ChangeJournal, ReadOptions } from './journal.js';

/** What a consumer is handed beside the changes. */
export interface ConsumerBatch {
  /** The consumer's cursor: the changes handed follow it (a gap: rows pruned before they were read). */
  after: number;
  /** Up to `limit` more changes after those handed so far (as announced, or read back a slice at a time). */
  more(limit: number): Promise<ChangeEvent[]>;
}

/** Why the retry of a failed batch waits, and how long. */
export interface ConsumerRetry {
  /** Failures in a row, this one included. */
  failures: number;
  delayMs: number;
}

/** One reader of the journal: registered once on the feed, with its reader name as its cursor's key. */
export interface JournalConsumer {
  /** The reader's name, the key of its cursor. */
  reader: string;
  /**
   * Handles changes in sequence order; returns the sequence up to which it consumed them (default:
   * all of them, and those `more` gave). The rest is handed again next.
   */
  handle(changes: ChangeEvent[], batch: ConsumerBatch): Promise<number | void> | number | void;
  /** Changes per batch (default 500). */
  batch?: number;
  /** What each change read back carries (see ChangeJournal.readAfter). */
  read?: ReadOptions;
  /** Milliseconds before a failed batch is tried again (default 1,000 whatever the failures). */
  retryDelay?(failures: number): number;
  /** A batch failed and is tried again after `retry.delayMs` (default: logged as an error). */
  failed?(err: unknown, retry: ConsumerRetry): void;
  /** The consumer saves its cursor itself, in the transaction of what it writes: the follower never does. */
  savesCursor?: boolean;
  /**
   * Save the cursor at most this often (ms) instead of after every batch: for a reader that saves it
   * itself in some of its transactions, and would otherwise commit once per batch for nothing.
   * After a crash it reads again from the last save; it must then be idempotent.
   */
  saveEveryMs?: number;
  /**
   * The highest sequence the saved cursor may reach, for a reader that has handled changes whose
   * effects are not durable yet (kept in memory): after a crash it reads those again.
   */
  savable?(): number;
  /** Milliseconds after a batch that took all that was pending before the next one starts (default 0). */
  lingerMs?: number;
  /** Moves the cursor past changes the consumer's bounds no longer allow (before each batch); returns the new cursor. */
  bounds?(cursor: number): Promise<number> | number;
  /** While true, no change can concern the consumer: the follower moves past them without reading them. */
  ignoresAll?(): boolean;
  /** Changes pruned from the journal are not handed even when still announced (their loss is counted). */
  onlyJournaled?: boolean;
  /**
   * Most changes the consumer may be behind the newest announced one with the feed keeping the
   * announced changes for it (default: the feed's maxRecent); further behind, it reads them back.
   */
  keepsBehind?: number;
}

export interface JournalFollower {
  /** Starts reading what is pending after the cursor, then what is committed. */
  start(): void;
  /** New changes were committed, up to `seq`. */
  wake(seq?: number): void;
  /** The sequence up to which every change is handled. */
  position(): number;
  /** Resolves once every change committed so far is handled (or the follower stops). */
  idle(): Promise<void>;
  /** Saves the cursor now (as far as `savable` allows). */
  save(): void;
  /** Stops taking batches; resolves once the batch in progress ended, with the cursor saved. */
  stop(): Promise<void>;
}

export interface JournalFeed {
  /**
   * Registers a consumer: a new reader's cursor is created at the journal's end (every change
   * committed from now on is for it). One registration per reader at a time.
   */
  register(consumer: JournalConsumer): JournalFollower;
  /** A change was committed (the event emitted after commit): kept, and the followers woken. */
  announce(change: ChangeEvent): void;
}

export interface JournalFeedOptions {
  journal: ChangeJournal;
  log: Logger;
  /** Most announced changes kept for the followers behind (beyond, the oldest are read back). */
  maxRecent?: number;
}

/** What a follower reads through: the journal, and the announced changes the feed keeps. */
interface Source {
  journal: ChangeJournal;
  log: Logger;
  /** Up to `limit` announced changes right after `after`, undefined when `after + 1` is not kept. */
  recentAfter(after: number, limit: number): ChangeEvent[] | undefined;
  /** Changes read back from the journal, each replaced by its announced event when kept. */
  readBack(after: number, limit: number, opts: ReadOptions | undefined): ChangeEvent[];
  /** The follower stopped. */
  forget(follower: FollowerState): void;
}

/** A follower as the feed sees it. */
interface FollowerState extends JournalFollower {
  /** Whether its changes should stay kept: it follows (not failing, not stopped, not too far behind `newest`). */
  holdsRecent(newest: number): boolean;
}

export function createJournalFeed(opts: JournalFeedOptions): JournalFeed {
  const { journal, log } = opts;
  const maxRecent = opts.maxRecent ?? 50_000;
  const followers = new Set<FollowerState>();
  /** Announced changes by sequence, oldest first (a Map keeps insertion order; they come in order). */
  const recent = new Map<number, ChangeEvent>();
  let lastAnnounced = 0;
  let flushScheduled = false;

  /** Drops the changes every follower that holds them has passed. */
  const trim = (): void => {
    let min = Number.MAX_SAFE_INTEGER;
    for (const f of followers) if (f.holdsRecent(lastAnnounced)) min = Math.min(min, f.position());
    for (const seq of recent.keys()) {
      if (seq > min && recent.size <= maxRecent) break;
      recent.delete(seq);
    }
  };

  // NOTE: the events of one commit are emitted one after the other: followers are woken once all of
  // them are here (a microtask runs after the commit's hooks).
  const flush = (): void => {
    flushScheduled = false;
    for (const f of followers) f.wake(lastAnnounced);
    trim();
  };

  const source: Source = {
    journal,
    log,
    recentAfter(after, limit) {
      let change = recent.get(after + 1);
      if (change === undefined) return undefined;
      const out = [change];
      for (let seq = after + 2; out.length < limit; seq++) {
        change = recent.get(seq);
        if (change === undefined) break;
        out.push(change);
      }
      return out;
    },
    // NOTE: a change read back has the entity as it is now; the event emitted after its commit has
    // the entity as that change left it, which is what a consumer must see when it is still kept.
    readBack: (after, limit, read) => journal.readAfter(after, limit, read).map((c) => recent.get(c.seq) ?? c),
    forget: (follower) => void followers.delete(follower),
  };

  return {
    register(consumer) {
      const follower = createJournalFollower(consumer, source);
      followers.add(follower);
      return follower;
    },
    announce(change) {
      recent.set(change.seq, change);
      lastAnnounced = Math.max(lastAnnounced, change.seq);
      if (flushScheduled) return;
      flushScheduled = true;
      queueMicrotask(flush);
    },
  };
}

/** What a step did: nothing to handle, a batch with more pending, or the rest of what was pending. */
type StepResult = 'idle' | 'full' | 'partial';

/** The changes of one take: `exhausted` when fewer than asked were there (nothing more is pending). */
type Take = { changes: ChangeEvent[]; exhausted: boolean };

/** A reader's cursor: where it is in memory, and what of it is saved. */
interface CursorKeeper {
  value: number;
  /** Saves the cursor now (as far as `savable` allows; never for a consumer that saves it itself). */
  save(): void;
  /** Saves the cursor unless it was saved less than saveEveryMs ago. */
  saveDue(): void;
}

/** The cursor of `consumer`; a reader never seen starts at the journal's end (its row is created now). */
function createCursorKeeper(consumer: JournalConsumer, journal: ChangeJournal): CursorKeeper {
  const { reader } = consumer;
  const known = journal.cursor(reader);
  const start = known ?? journal.lastSeq();
  if (known === undefined) journal.setCursor(reader, start);
  let saved = start;
  let savedAt = performance.now();
  const keeper: CursorKeeper = {
    value: start,
    save() {
      if (consumer.savesCursor === true) return;
      const to = consumer.savable === undefined ? keeper.value : Math.min(keeper.value, consumer.savable());
      if (to <= saved) return;
      journal.setCursor(reader, to);
      saved = to;
      savedAt = performance.now();
    },
    saveDue() {
      if (consumer.saveEveryMs === undefined || performance.now() - savedAt >= consumer.saveEveryMs) keeper.save();
    },
  };
  return keeper;
}

/**
 * Changes read back per slice, with a turn of the event loop between two: reading a change back looks
 * its entity and instances up (25-40 µs each, about 110 µs a change of three attributes on a
 * database larger than the page cache), and a far-behind reader (the federation after an outage)
 * reading a batch of hundreds at once held everything else, PUBACKs included, for 100-500 ms. A turn
 * of the loop also runs the other immediates (a write batch, the rollups' next chunk): a slice of 16
 * (about 2 ms) keeps the turn short.
 */
const READ_SLICE = 16;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Up to `limit` changes after `after` read back from the journal, a slice at a time. */
async function readBackSliced(source: Source, after: number, limit: number, read: ReadOptions | undefined): Promise<ChangeEvent[]> {
  const out: ChangeEvent[] = [];
  for (let from = after; out.length < limit;) {
    if (out.length > 0) await nextTurn();
    const want = Math.min(READ_SLICE, limit - out.length);
    const slice = source.readBack(from, want, read);
    for (const c of slice) out.push(c);
    if (slice.length < want) break;
    from = slice[slice.length - 1]!.seq;
  }
  return out;
}

/** One step of a follower: hands the changes after the cursor to the consumer, and moves the cursor past what it consumed. */
function createStep(consumer: JournalConsumer, source: Source, cursor: CursorKeeper): () => Promise<StepResult> {
  const { journal } = source;
  const batch = consumer.batch ?? 500;

  /** Up to `limit` changes after `after`: as announced when kept, else read back. */
  const take = async (after: number, limit: number, isFirst: boolean): Promise<Take> => {
    let changes = source.recentAfter(after, limit);
    // What the journal no longer holds is not handed (it was pruned, and counted, as lost to this reader).
    if (changes !== undefined && isFirst && consumer.onlyJournaled === true && journal.seqAt(after, 0) !== after + 1) changes = undefined;
    changes ??= await readBackSliced(source, after, limit, consumer.read);
    return { changes, exhausted: changes.length < limit };
  };

  return async () => {
    if (consumer.bounds !== undefined) cursor.value = Math.max(cursor.value, await consumer.bounds(cursor.value));
    if (consumer.ignoresAll?.() === true) {
      cursor.value = Math.max(cursor.value, journal.lastSeq());
      cursor.saveDue();
      return 'idle';
    }
    const after = cursor.value;
    const first = await take(after, batch, true);
    if (first.changes.length === 0) return 'idle';
    let last = first.changes[first.changes.length - 1]!.seq;
    let { exhausted } = first;
    const more = async (limit: number): Promise<ChangeEvent[]> => {
      const next = await take(last, limit, false);
      if (next.changes.length > 0) last = next.changes[next.changes.length - 1]!.seq;
      exhausted = next.exhausted;
      return next.changes;
    };
    const upTo = await consumer.handle(first.changes, { after, more });
    // `last` is read after handle: the changes `more` gave count as handed.
    const consumed = Math.min(last, upTo ?? last);
    if (consumed <= after) return 'idle';
    cursor.value = consumed;
    cursor.saveDue();
    return consumed < last || !exhausted ? 'full' : 'partial';
  };
}

/** What a follower's runs share. */
interface RunState {
  started: boolean;
  stopped: boolean;
  /** Changes were announced during a run: it goes on. */
  again: boolean;
  /** Failed runs in a row. */
  failures: number;
  /** When the last batch that took all that was pending ended (performance.now()). */
  partialAt: number;
}

/** Steps until nothing is pending, or a batch took all that was pending (the linger then waits). */
async function drainSteps(step: () => Promise<StepResult>, state: RunState): Promise<void> {
  for (;;) {
    if (state.stopped) return;
    // A read covers every change announced before it.
    state.again = false;
    const result = await step();
    if (result !== 'idle') state.failures = 0;
    if (result === 'partial') {
      state.partialAt = performance.now();
      return;
    }
    if (result === 'idle' && !state.again) return;
  }
}

/** A timer that does not keep the process alive. */
function later(ms: number, fn: () => void): NodeJS.Timeout {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return timer;
}

function createJournalFollower(consumer: JournalConsumer, source: Source): FollowerState {
  const { journal, log } = source;
  const cursor = createCursorKeeper(consumer, journal);
  const step = createStep(consumer, source, cursor);
  const state: RunState = { started: false, stopped: false, again: false, failures: 0, partialAt: Number.NEGATIVE_INFINITY };
  let running: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let linger: NodeJS.Timeout | undefined;
  let idleWaiters: Array<() => void> = [];

  const settleIdle = (): void => {
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const w of waiters) w();
  };

  const failed = (err: unknown): void => {
    state.failures += 1;
    if (state.stopped) {
      settleIdle();
      return;
    }
    const delayMs = consumer.retryDelay?.(state.failures) ?? 1_000;
    if (consumer.failed !== undefined) consumer.failed(err, { failures: state.failures, delayMs });
    else log.error('journal reader failed; retrying', { reader: consumer.reader, after: cursor.value, err });
    retry = later(delayMs, () => {
      retry = undefined;
      run();
    });
  };

  /** Runs a drain unless one runs (then it goes on), a retry or a linger waits, or the follower is not started. */
  const run = (): void => {
    if (!state.started || state.stopped || retry !== undefined || linger !== undefined) return;
    if (running) {
      state.again = true;
      return;
    }
    const wait = state.partialAt + (consumer.lingerMs ?? 0) - performance.now();
    if (wait > 0) {
      linger = later(wait, () => {
        linger = undefined;
        run();
      });
      return;
    }
    running = drainSteps(step, state).then(() => {
      running = undefined;
      if (!state.stopped && state.again) run();
      else settleIdle();
    }, (err: unknown) => {
      running = undefined;
      failed(err);
    });
  };

  const follower: FollowerState = {
    start() {
      state.started = true;
      run();
    },
    wake(seq) {
      // NOTE: no change can concern the consumer: it moves past them without reading them (the
      // common case of a gateway without subscriptions costs nothing).
      if (seq !== undefined && state.started && !state.stopped && !running && retry === undefined && consumer.ignoresAll?.() === true) {
        cursor.value = Math.max(cursor.value, seq);
        cursor.saveDue();
        return settleIdle();
      }
      return run();
    },
    position: () => cursor.value,
    holdsRecent: (newest) => !state.stopped && retry === undefined && newest - cursor.value <= (consumer.keepsBehind ?? Number.MAX_SAFE_INTEGER),
    save: cursor.save,
    idle() {
      const isPending = running !== undefined || retry !== undefined || linger !== undefined
        || journal.readAfter(cursor.value, 1, { entities: false }).length > 0;
      if (state.stopped || !isPending) return Promise.resolve();
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
        run();
      });
    },
    async stop() {
      state.stopped = true;
      clearTimeout(retry);
      clearTimeout(linger);
      retry = undefined;
      linger = undefined;
      source.forget(follower);
      await running;
      cursor.save();
      settleIdle();
    },
  };
  return follower;
}
