// The journal's one reader: consumers registered on the feed, each with its own persisted cursor,
// handed the changes after it in order and in batches, at least once (a crash repeats changes, a
// failure retries them), and handed changes as announced without reading them back.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../../../src/events.js';
import { silentLogger } from '../../../src/lib/index.js';
import { createJournalFeed, type JournalConsumer, type JournalFeed, type JournalFollower, type JournalEntry, type Store } from '../../../src/store/index.js';
import { fileStore, tempDir } from '../helpers.js';

let tmp: ReturnType<typeof tempDir>;
let store: Store;
let followers: JournalFollower[] = [];

const entry = (n: number): JournalEntry => ({
  tenant: '', kind: 'entityUpdated', id: `urn:x:${n}`, at: 1_000 + n, written: ['urn:a'], deleted: [], instances: [],
});
const append = (s: Store, ...ns: number[]): number[] => ns.map((n) => s.transaction(() => s.journal.append(entry(n))));
const seqs = (batches: ChangeEvent[][]): number[][] => batches.map((b) => b.map((c) => c.seq));

beforeEach(() => {
  tmp = tempDir();
  store = fileStore(tmp.file);
});

afterEach(async () => {
  for (const f of followers) await f.stop();
  followers = [];
  if (store.isOpen()) store.close();
  tmp.cleanup();
});

/** Registers a consumer that records what it is handed (batches of 2, retried after 1 ms). */
function follow(feed: JournalFeed, reader: string, handled: ChangeEvent[][], extra: Partial<JournalConsumer> = {}): JournalFollower {
  const f = feed.register({
    reader, batch: 2, retryDelay: () => 1,
    handle: (changes) => {
      handled.push(changes);
    },
    ...extra,
  });
  followers.push(f);
  return f;
}

const feedOf = (s: Store): JournalFeed => createJournalFeed({ journal: s.journal, log: silentLogger });

describe('the journal feed and its followers', () => {
  it('a new reader starts at the end of the journal, then is handed new changes in order and in batches', async () => {
    append(store, 1, 2);
    const feed = feedOf(store);
    const handled: ChangeEvent[][] = [];
    const f = follow(feed, 'test', handled);
    f.start();
    await f.idle();
    expect(handled).toEqual([]);
    append(store, 3, 4, 5);
    f.wake();
    await f.idle();
    expect(seqs(handled)).toEqual([[3, 4], [5]]);
    expect(store.journal.cursor('test')).toBe(5);
  });

  it('two consumers at different cursors are each handed exactly their changes', async () => {
    const feed = feedOf(store);
    store.journal.setCursor('behind', 0);
    append(store, 1, 2, 3);
    store.journal.setCursor('ahead', 2);
    const behind: ChangeEvent[][] = [];
    const ahead: ChangeEvent[][] = [];
    const b = follow(feed, 'behind', behind);
    const a = follow(feed, 'ahead', ahead, { batch: 10 });
    b.start();
    a.start();
    await Promise.all([a.idle(), b.idle()]);
    expect(seqs(behind)).toEqual([[1, 2], [3]]);
    expect(seqs(ahead)).toEqual([[3]]);
    append(store, 4);
    a.wake();
    b.wake();
    await Promise.all([a.idle(), b.idle()]);
    expect(behind.flat().map((c) => c.seq)).toEqual([1, 2, 3, 4]);
    expect(ahead.flat().map((c) => c.seq)).toEqual([3, 4]);
    expect([store.journal.cursor('behind'), store.journal.cursor('ahead')]).toEqual([4, 4]);
  });

  it('hands announced changes without reading them back, and reads back what it was not announced', async () => {
    const feed = feedOf(store);
    const handled: ChangeEvent[][] = [];
    const f = follow(feed, 'test', handled, { batch: 10 });
    f.start();
    await f.idle();
    append(store, 1, 2, 3);
    // Changes 2 and 3 announced (as objects the journal would not give back); 1 was not.
    const read = store.journal.readAfter(0, 10);
    for (const c of read.slice(1)) feed.announce({ ...c, id: `announced:${c.seq}` });
    await f.idle();
    expect(handled.flat().map((c) => c.id)).toEqual(['urn:x:1', 'announced:2', 'announced:3']);
    append(store, 4);
    feed.announce({ ...store.journal.readAfter(3, 1)[0]!, id: 'announced:4' });
    await f.idle();
    expect(handled.flat().map((c) => c.id)).toEqual(['urn:x:1', 'announced:2', 'announced:3', 'announced:4']);
    expect(store.journal.cursor('test')).toBe(4);
  });

  it('a crash between handling and saving the cursor hands those changes again to the next follower', async () => {
    const feed = feedOf(store);
    const first: ChangeEvent[][] = [];
    // Saves its cursor at most once a minute: the batch below is handled, its cursor not saved.
    const f = feed.register({ reader: 'test', saveEveryMs: 60_000, handle: (changes) => void first.push(changes) });
    f.start();
    await f.idle();
    append(store, 1, 2);
    f.wake();
    await f.idle();
    expect(seqs(first)).toEqual([[1, 2]]);
    expect(store.journal.cursor('test')).toBe(0);
    // The crash: the database file is closed under the follower, which never stops.
    store.close();
    store = fileStore(tmp.file);
    const second: ChangeEvent[][] = [];
    const g = follow(feedOf(store), 'test', second, { batch: 10 });
    g.start();
    await g.idle();
    expect(seqs(second)).toEqual([[1, 2]]);
    expect(store.journal.cursor('test')).toBe(2);
  });

  it('a consumer that throws is retried later, its cursor stays before the failed batch, and another consumer goes on', async () => {
    const feed = feedOf(store);
    let down = true;
    const failures: number[] = [];
    let failedOnce!: () => void;
    const failedOnceP = new Promise<void>((resolve) => {
      failedOnce = resolve;
    });
    const failing: ChangeEvent[][] = [];
    const healthy: ChangeEvent[][] = [];
    const bad = follow(feed, 'bad', failing, {
      handle: (changes) => {
        if (down) throw new Error('receiver down');
        failing.push(changes);
      },
      failed: (_err, retry) => {
        failures.push(retry.failures);
        failedOnce();
      },
    });
    const good = follow(feed, 'good', healthy);
    bad.start();
    good.start();
    append(store, 1, 2, 3);
    for (const c of store.journal.readAfter(0, 10)) feed.announce(c);
    await failedOnceP;
    await good.idle();
    expect(seqs(healthy)).toEqual([[1, 2], [3]]);
    expect(store.journal.cursor('good')).toBe(3);
    expect(store.journal.cursor('bad')).toBe(0);
    expect(failing).toEqual([]);
    down = false;
    await bad.idle();
    expect(seqs(failing)).toEqual([[1, 2], [3]]);
    expect(store.journal.cursor('bad')).toBe(3);
    expect(failures[0]).toBe(1);
  });

  it('a consumer that takes part of a batch is handed the rest next; one that saves its cursor itself is never saved for', async () => {
    const feed = feedOf(store);
    const handled: number[][] = [];
    const f = feed.register({
      reader: 'part', batch: 3, savesCursor: true,
      handle: (changes) => {
        handled.push(changes.map((c) => c.seq));
        // Consumes one change per batch, and saves its cursor with what it writes.
        const upTo = changes[0]!.seq;
        store.transaction(() => store.journal.setCursor('part', upTo));
        return upTo;
      },
    });
    followers.push(f);
    f.start();
    append(store, 1, 2, 3);
    f.wake();
    await f.idle();
    expect(handled).toEqual([[1, 2, 3], [2, 3], [3]]);
    expect(store.journal.cursor('part')).toBe(3);
  });

  it('moves past what its bounds no longer allow, and past every change while none can concern it', async () => {
    const feed = feedOf(store);
    const handled: ChangeEvent[][] = [];
    let ignoring = false;
    const f = follow(feed, 'bounded', handled, {
      batch: 10, bounds: (cursor) => Math.max(cursor, 1), ignoresAll: () => ignoring,
    });
    f.start();
    append(store, 1, 2);
    f.wake();
    await f.idle();
    expect(seqs(handled)).toEqual([[2]]);
    ignoring = true;
    append(store, 3);
    for (const c of store.journal.readAfter(2, 10)) feed.announce(c);
    await f.idle();
    expect(f.position()).toBe(3);
    expect(seqs(handled)).toEqual([[2]]);
  });

  it('keeps no announced changes for a consumer further behind than it allows: it reads them back', async () => {
    const feed = feedOf(store);
    const handled: ChangeEvent[][] = [];
    const f = follow(feed, 'far', handled, { batch: 10, keepsBehind: 1 });
    append(store, 1, 2, 3);
    for (const c of store.journal.readAfter(0, 10)) feed.announce({ ...c, id: `announced:${c.seq}` });
    // The feed wakes its followers and trims what it keeps in the microtask after the announcements.
    await Promise.resolve();
    f.start();
    await f.idle();
    expect(handled.flat().map((c) => c.id)).toEqual(['urn:x:1', 'urn:x:2', 'urn:x:3']);
  });

  it('reads a far-behind batch back a slice at a time, with other work running between two slices', async () => {
    const reads: number[] = [];
    let turns = 0;
    // The real journal, the size of each read recorded.
    const journal = { ...store.journal, readAfter: (...args: Parameters<Store['journal']['readAfter']>) => {
      const out = store.journal.readAfter(...args);
      reads.push(out.length);
      return out;
    } };
    const feed = createJournalFeed({ journal, log: silentLogger });
    const handled: ChangeEvent[][] = [];
    let turnsBeforeHandle = -1;
    const f = follow(feed, 'far', handled, {
      batch: 300,
      handle: async (changes, batch) => {
        turnsBeforeHandle = turns;
        handled.push(changes, await batch.more(100));
      },
    });
    f.start();
    await f.idle();
    append(store, ...Array.from({ length: 450 }, (_, i) => i + 1));
    reads.length = 0;
    // Another task: counts the turns of the event loop while the batch is read.
    const ticker = setInterval(() => (turns += 1), 0);
    f.wake();
    await f.idle();
    clearInterval(ticker);
    expect(handled[0]!.map((c) => c.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(handled[1]!.map((c) => c.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 301));
    // Slices of at most 16 changes, and the ticker ran while the first 300 were read.
    expect(Math.max(...reads)).toBeLessThanOrEqual(16);
    expect(reads.slice(0, 19)).toEqual([...Array.from({ length: 18 }, () => 16), 12]);
    expect(turnsBeforeHandle).toBeGreaterThan(0);
    expect(handled.flat().map((c) => c.seq)).toEqual(Array.from({ length: 450 }, (_, i) => i + 1));
  });

  it('reads nothing back from the journal for changes announced in sequence', async () => {
    let reads = 0;
    // The real journal, its reads counted.
    const journal = { ...store.journal, readAfter: (...args: Parameters<Store['journal']['readAfter']>) => {
      reads += 1;
      return store.journal.readAfter(...args);
    } };
    const feed = createJournalFeed({ journal, log: silentLogger });
    const handled: ChangeEvent[][] = [];
    const f = follow(feed, 'close', handled, { batch: 10 });
    f.start();
    await f.idle();
    const before = reads;
    for (let n = 1; n <= 20; n++) {
      const [seq] = append(store, n);
      feed.announce({ ...entry(n), seq: seq! });
      await Promise.resolve();
    }
    await f.idle();
    expect(handled.flat().map((c) => c.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    // idle() itself looks once for what is pending; no read per change.
    expect(reads - before).toBeLessThanOrEqual(1);
  });
});
