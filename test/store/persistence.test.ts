// File-backed store: data survives close and reopen; WAL, checkpoint and disk stats.

import { existsSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import type { HistoryInstance } from '../../src/store/index.js';
import { entity, fileStore, memoryStore, NS, property, rawRead, T0, tempDir } from './helpers.js';

const E = 'urn:ngsi-ld:Sensor:1';
const inst = (n: number, observedAt: number): HistoryInstance => ({
  entityId: E,
  attr: NS + 'temperature',
  instanceId: `urn:ngsi-ld:Instance:00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  observedAt,
  createdAt: T0,
  modifiedAt: T0,
  attribute: property(n, { observedAt }),
});

describe('store file persistence', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
    return tmp.cleanup;
  });

  it('keeps entities, history, buckets and contexts across close and reopen', async () => {
    const first = fileStore(tmp.file);
    await first.write(() => {
      first.entities.insert('', entity(E, [NS + 'Sensor']));
      first.history.append('', [inst(1, T0), inst(2, Date.UTC(2024, 1, 3))]);
    });
    first.contexts.put({ id: 'c1', url: 'https://example.org/c.jsonld', body: '{}', kind: 'Cached', createdAt: T0 });
    first.close();

    const second = fileStore(tmp.file);
    expect(second.entities.get({ tenant: '' }, E)?.types).toEqual([NS + 'Sensor']);
    expect(second.history.buckets()).toEqual(['history_202401', 'history_202402']);
    second.history.append('', [inst(3, T0 + 1)]);
    expect(second.history.listForEntity({ tenant: '' }, E).map((i) => i.attribute)).toEqual([
      property(1, { observedAt: T0 }), property(3, { observedAt: T0 + 1 }), property(2, { observedAt: Date.UTC(2024, 1, 3) }),
    ]);
    expect(second.contexts.getById('c1')?.url).toBe('https://example.org/c.jsonld');
    second.close();
    expect(rawRead(tmp.file, (db) => db.prepare('SELECT count(*) FROM series').pluck().get())).toBe(1);
  });

  it('uses WAL, and close() checkpoints so the WAL is emptied', () => {
    const store = fileStore(tmp.file);
    store.entities.insert('', entity(E, [NS + 'Sensor']));
    const before = store.diskStats();
    expect(before.dbBytes).toBeGreaterThan(0);
    expect(before.walBytes).toBeGreaterThan(0);
    store.checkpoint();
    expect(store.diskStats().walBytes).toBe(0);
    store.close();
    expect(existsSync(`${tmp.file}-wal`)).toBe(false);
    expect(rawRead(tmp.file, (db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
  });

  it('reports disk usage for an in-memory database without a WAL', () => {
    const store = memoryStore();
    expect(store.diskStats()).toEqual({ dbBytes: expect.any(Number), walBytes: 0 });
    store.close();
  });
});
