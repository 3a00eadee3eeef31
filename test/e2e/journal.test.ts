// End-to-end: the change journal of the real process. A kill -9 right after acknowledged writes
// (before any reader could deliver them) loses no journal row, and sequences continue after it.

import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { silentLogger, createFixedClock } from '../../src/lib/index.js';
import { openStore } from '../../src/store/index.js';
import type { ChangeEvent } from '../../src/events.js';
import { tempDir } from '../helpers/broker.js';
import { startBrokerProcess, within } from '../helpers/process.js';

const dir = tempDir('edgeld-e2e-journal-');
afterAll(() => dir.remove());

async function send(base: string, method: string, path: string, body: unknown): Promise<number> {
  const res = await fetch(base + path, { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

function readJournal(storageDir: string): ChangeEvent[] {
  const store = openStore({ path: join(storageDir, 'edgeld.db'), historyBucket: 'month', log: silentLogger, clock: createFixedClock(0) });
  try {
    return store.journal.readAfter(0, 100_000, { instances: true });
  } finally {
    store.close();
  }
}

describe('change journal durability', () => {
  it('keeps a journal row for every acknowledged write across kill -9, and continues the sequence after it', async () => {
    // No pruning during the test: the journal is read as the killed process left it.
    const env = { STORAGE_DIR: `${dir.path}/journal`, JOURNAL_PRUNE_SCHEDULE: '0 0 1 1 *' };
    const p = await startBrokerProcess(env);
    const acknowledged: Array<[string, string]> = [];
    await Promise.all(Array.from({ length: 6 }, async (_, worker) => {
      for (let i = 0; i < 20; i++) {
        const id = `urn:ngsi-ld:Sensor:j${worker}-${i}`;
        expect(await send(p.base, 'POST', '/ngsi-ld/v1/entities', { id, type: 'Sensor', temperature: { type: 'Property', value: i } })).toBe(201);
        acknowledged.push([id, 'entityCreated']);
        expect(await send(p.base, 'PATCH', `/ngsi-ld/v1/entities/${id}/attrs/temperature`, { value: i + 1 })).toBe(204);
        acknowledged.push([id, 'entityUpdated']);
        // A temporal back-fill older than the current state: history only.
        expect(await send(p.base, 'POST', `/ngsi-ld/v1/temporal/entities/${id}/attrs`, {
          temperature: [{ type: 'Property', value: -1, observedAt: '2020-01-01T00:00:00Z' }],
        })).toBe(204);
        acknowledged.push([id, 'historyChanged']);
      }
    }));
    p.child.kill('SIGKILL');
    expect(await within(p.exited, 5000, 'kill -9')).toBe('SIGKILL');

    const rows = readJournal(env.STORAGE_DIR);
    expect(rows).toHaveLength(acknowledged.length);
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    const sorted = (xs: Array<[string, string]>): string[] => xs.map((x) => x.join(' ')).sort();
    expect(sorted(rows.map((r) => [r.id, r.kind]))).toEqual(sorted(acknowledged));
    const backfill = rows.find((r) => r.kind === 'historyChanged');
    expect(backfill?.instances[0]).toMatchObject({ observedAt: Date.parse('2020-01-01T00:00:00Z') });

    const q = await startBrokerProcess(env);
    expect(await send(q.base, 'POST', '/ngsi-ld/v1/entities', { id: 'urn:ngsi-ld:Sensor:after', type: 'Sensor' })).toBe(201);
    q.child.kill('SIGTERM');
    expect(await within(q.exited, 10_000, 'SIGTERM')).toBe(0);
    const after = readJournal(env.STORAGE_DIR);
    expect(after.at(-1)).toMatchObject({ seq: acknowledged.length + 1, id: 'urn:ngsi-ld:Sensor:after', kind: 'entityCreated' });
  });
});
