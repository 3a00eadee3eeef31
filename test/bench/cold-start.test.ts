// The cold start benchmark on a small database: it builds the database through the store, starts
// the real broker on it (node dist/main.js) and times GET /ready; the broker must serve what was
// built (it counts them after each start), so a database the broker cannot open fails the run
// instead of timing an empty start.

import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { benchColdStart } from '../../bench/cold-start.js';
import { Cleanup } from '../../bench/cleanup.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

describe('cold start benchmark', () => {
  it('times three starts of the broker on the database it built, and cleans up after itself', async () => {
    const cleanup = new Cleanup();
    const lines: string[] = [];
    try {
      const r = await benchColdStart({ script: MAIN, nodeFlags: [], tmp: undefined, entities: 500, historyRows: 5_000, dropPageCache: false, log: (l) => lines.push(l) }, cleanup);
      const byKey = new Map(r.rows.map((row) => [row.key, row.value]));
      expect(byKey.get('coldstart.first')).toBeGreaterThan(0);
      expect(byKey.get('coldstart.again')).toBeGreaterThan(0);
      expect(byKey.get('coldstart.db')).toBeGreaterThan(0);
      expect(lines.filter((l) => /start \d: ready in \d+ ms/.test(l))).toHaveLength(3);
      expect(r.notes.join('\n')).toContain('500 entities and 5,000 history rows');
    } finally {
      await cleanup.runAll();
    }
  }, 60_000);
});
