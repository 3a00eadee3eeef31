// The journal pruning job body: rows every reader has passed go; rows older than the horizon go
// too, even unread, and that loss is logged.

import { describe, expect, it } from 'vitest';
import { pruneJournal } from '../../src/entities/index.js';
import { createFixedClock, type Logger } from '../../src/lib/index.js';
import { openStore } from '../../src/store/index.js';
import { silentLogger } from '../../src/lib/index.js';

function recordingLogger(): { log: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const log: Logger = { ...silentLogger, warn: (msg: string) => warnings.push(msg), child: () => log };
  return { log, warnings };
}

describe('pruneJournal', () => {
  const entry = (at: number) => ({ tenant: '', kind: 'entityUpdated' as const, id: `urn:x:${at}`, at, written: [], deleted: [], instances: [] });

  it('drops what the readers passed, then what is older than the horizon, and says so when that was unread', async () => {
    const store = openStore({ path: ':memory:', historyBucket: 'month', log: silentLogger, clock: createFixedClock(0) });
    store.transaction(() => [10, 20, 30, 40].forEach((at) => store.journal.append(entry(at))));
    store.journal.setCursor('notifier', 1);
    store.journal.setCursor('federation', 0);
    const { log, warnings } = recordingLogger();
    // Nobody passed row 2; the horizon (25) takes rows 1 and 2 anyway.
    expect(await pruneJournal({ store, log, horizon: (now) => now - 75 }, 100)).toEqual({ passed: 0, aged: 2, more: false });
    expect(warnings).toEqual(['changes dropped from the journal before every reader read them']);
    expect(store.journal.readAfter(0, 10).map((r) => r.seq)).toEqual([3, 4]);
    store.close();
    expect(await pruneJournal({ store, log, horizon: () => 0 }, 100)).toBeUndefined();
  });

  it('prunes a long journal in chunks, letting the event loop run between them', async () => {
    const store = openStore({ path: ':memory:', historyBucket: 'month', log: silentLogger, clock: createFixedClock(0) });
    store.transaction(() => Array.from({ length: 25 }, (_, i) => store.journal.append(entry(i + 1))));
    store.journal.setCursor('notifier', 20);
    const { log, warnings } = recordingLogger();
    // An immediate that queues itself again counts the turns of the event loop; each chunk notes how
    // many it saw before it.
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const seen: number[] = [];
    const journal = { ...store.journal, prune: (h: number, limit?: number) => (seen.push(turns), store.journal.prune(h, limit)) };
    // Rows 1-20 passed, 21-22 older than the horizon (23), 23-25 kept.
    const report = await pruneJournal({ store: { isOpen: () => store.isOpen(), journal, write: (fn) => store.write(fn) }, log, horizon: () => 23, chunk: 4 }, 100);
    ticking = false;
    expect(report).toEqual({ passed: 20, aged: 2, more: false });
    expect(store.journal.readAfter(0, 30).map((r) => r.seq)).toEqual([23, 24, 25]);
    // Six chunks (4+4+4+4+4 passed, then 2 aged), the event loop turning between any two.
    expect(seen).toHaveLength(6);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]!);
    expect(warnings).toHaveLength(1);
    store.close();
  });

  it('stops between chunks when its signal aborts (shutdown), saying that rows were left', async () => {
    const store = openStore({ path: ':memory:', historyBucket: 'month', log: silentLogger, clock: createFixedClock(0) });
    store.transaction(() => Array.from({ length: 10 }, (_, i) => store.journal.append(entry(i + 1))));
    const shutdown = new AbortController();
    const running = pruneJournal({ store, log: silentLogger, horizon: () => 0, chunk: 3, signal: shutdown.signal }, 100);
    shutdown.abort();
    expect(await running).toEqual({ passed: 3, aged: 0, more: true });
    expect(store.journal.readAfter(0, 20)).toHaveLength(7);
    // The next run goes on from there.
    expect(await pruneJournal({ store, log: silentLogger, horizon: () => 0, chunk: 3 }, 100)).toEqual({ passed: 6, aged: 0, more: false });
    store.close();
  });

  it('stops between chunks when the store closes, saying that rows were left', async () => {
    const store = openStore({ path: ':memory:', historyBucket: 'month', log: silentLogger, clock: createFixedClock(0) });
    store.transaction(() => Array.from({ length: 10 }, (_, i) => store.journal.append(entry(i + 1))));
    const running = pruneJournal({ store, log: silentLogger, horizon: () => 0, chunk: 3 }, 100);
    // close() commits the first chunk (queued); the second finds the store closed.
    store.close();
    expect(await running).toEqual({ passed: 3, aged: 0, more: true });
  });
});
