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
  it('drops what the readers passed, then what is older than the horizon, and says so when that was unread', () => {
    const store = openStore({ path: ':memory:', historyBucket: 'month', log: silentLogger, clock: createFixedClock(0) });
    const entry = (at: number) => ({ tenant: '', kind: 'entityUpdated' as const, id: `urn:x:${at}`, at, written: [], deleted: [], instances: [] });
    store.transaction(() => [10, 20, 30, 40].forEach((at) => store.journal.append(entry(at))));
    store.journal.setCursor('notifier', 1);
    store.journal.setCursor('federation', 0);
    const { log, warnings } = recordingLogger();
    // Nobody passed row 2; the horizon (25) takes rows 1 and 2 anyway.
    expect(pruneJournal({ store, log, horizon: (now) => now - 75 }, 100)).toEqual({ passed: 0, aged: 2 });
    expect(warnings).toEqual(['changes dropped from the journal before every reader read them']);
    expect(store.journal.readAfter(0, 10).map((r) => r.seq)).toEqual([3, 4]);
    store.close();
    expect(pruneJournal({ store, log, horizon: () => 0 }, 100)).toBeUndefined();
  });
});
