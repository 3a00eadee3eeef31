// The change journal: sequences never reused, readers' cursors persisted, pruning once every reader
// has passed a row (or by age). Its follower is tested in journal-follower.test.ts.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFixedClock, silentLogger } from '../../../src/lib/index.js';
import { openStore, type JournalEntry, type Store } from '../../../src/store/index.js';
import { instanceIdAt } from '../../../src/ngsi/index.js';

/** A UUID laid out as version 7 with the instant `ms` (what instanceIdAt gives, without its prefix). */
const instanceUuidAt = (ms: number, n = 0): string =>
  instanceIdAt(ms, `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`).replace('urn:ngsi-ld:Instance:', '');

let dir: string;
let store: Store;
const open = (): Store => openStore({ path: join(dir, 'j.db'), historyBucket: 'month', log: silentLogger, clock: createFixedClock(0) });

const entry = (n: number, at = 1_000 + n): JournalEntry => ({
  tenant: '', kind: 'entityUpdated', id: `urn:x:${n}`, at, written: ['urn:a'], deleted: [], instances: [],
  previous: { id: `urn:x:${n}`, types: ['urn:T'], attrs: {}, createdAt: 0, modifiedAt: 0 },
});
const append = (s: Store, ...ns: number[]): number[] => ns.map((n) => s.transaction(() => s.journal.append(entry(n))));

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'edgeld-journal-'));
  store = open();
});

afterEach(() => {
  if (store.isOpen()) store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the change journal', () => {
  it('writes each attribute name once, and reads rows of the earlier payload form', async () => {
    const iri = 'https://uri.etsi.org/ngsi-ld/default-context/temperature';
    const full: JournalEntry = {
      tenant: '', kind: 'entityUpdated', id: 'urn:x:1', at: 5, written: [iri], deleted: ['urn:gone'], instances: [],
      previous: { id: 'urn:x:1', types: ['urn:T'], scope: ['/a'], attrs: { [iri]: [{ kind: 'Property', value: 1, sub: {}, createdAt: 1, modifiedAt: 1 }] }, createdAt: 1, modifiedAt: 2 },
    };
    store.transaction(() => store.journal.append(full));
    expect(store.journal.readAfter(0, 1)[0]).toEqual({ ...full, seq: 1 });
    store.close();
    // The payload names the IRI once; a row of the earlier form (IRIs everywhere) still reads.
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(join(dir, 'j.db'));
    const payload = db.prepare('SELECT payload FROM journal WHERE seq = 1').pluck().get() as string;
    expect(payload.split(iri)).toHaveLength(2);
    db.prepare('INSERT INTO journal (tenant, kind, entity_id, at, subject, payload) VALUES (?, ?, ?, ?, ?, ?)').run(
      '', 1, 'urn:x:2', 6, null, JSON.stringify({ w: [iri], d: [], i: [], p: { ...full.previous, id: 'urn:x:2' } }),
    );
    db.close();
    store = open();
    const legacy = store.journal.readAfter(1, 1)[0];
    expect(legacy).toMatchObject({ seq: 2, id: 'urn:x:2', written: [iri], previous: { id: 'urn:x:2', attrs: full.previous!.attrs } });
  });

  it('reads back a registration change with its states, across a reopen, and no entity of its id', () => {
    const change: JournalEntry = {
      tenant: 't1', kind: 'registrationChanged', id: 'urn:x:reg', at: 7, written: [], deleted: [], instances: [],
      registration: { before: { id: 'urn:x:reg', doc: { v: 1 } }, expired: true },
    };
    store.transaction(() => store.journal.append(change));
    store.close();
    store = open();
    expect(store.journal.readAfter(0, 1)).toEqual([{ ...change, seq: 1 }]);
  });

  it('gives increasing sequences and reads back what was appended', () => {
    expect(store.journal.lastSeq()).toBe(0);
    expect(append(store, 1, 2, 3)).toEqual([1, 2, 3]);
    const rows = store.journal.readAfter(1, 10);
    expect(rows.map((r) => r.seq)).toEqual([2, 3]);
    expect(rows[0]).toEqual({ ...entry(2), seq: 2 });
    expect(store.journal.readAfter(0, 2).map((r) => r.seq)).toEqual([1, 2]);
  });

  it('a row appended in a rolled-back transaction is not there', () => {
    append(store, 1);
    expect(() => store.transaction(() => {
      store.journal.append(entry(2));
      throw new Error('boom');
    })).toThrow('boom');
    expect(store.journal.readAfter(0, 10).map((r) => r.id)).toEqual(['urn:x:1']);
  });

  it('never reuses a sequence: pruning keeps the newest row, across a reopen too', () => {
    append(store, 1, 2);
    expect(store.journal.prune(Number.MAX_SAFE_INTEGER)).toEqual({ passed: 1, aged: 0, more: false });
    expect(store.journal.readAfter(0, 10).map((r) => r.seq)).toEqual([2]);
    store.close();
    store = open();
    expect(store.journal.lastSeq()).toBe(2);
    expect(append(store, 3)).toEqual([3]);
  });

  it('reads a change back with its entity and instances as they are now', () => {
    const id = 'urn:x:live';
    const entity = { id, types: ['urn:T'], attrs: { 'urn:a': [{ kind: 'Property' as const, value: 1, createdAt: 5, modifiedAt: 5, sub: {} }] }, createdAt: 5, modifiedAt: 5 };
    const instance = { entityId: id, attr: 'urn:a', instanceId: 'urn:ngsi-ld:Instance:0000-1', createdAt: 5, modifiedAt: 5, attribute: entity.attrs['urn:a'][0]! };
    store.transaction(() => {
      store.entities.insert('', entity);
      store.history.append('', [instance]);
      store.journal.append({ ...entry(9), id, instances: [instance] });
    });
    const [row] = store.journal.readAfter(0, 10, { instances: true });
    expect(row!.entity).toEqual(entity);
    expect(row!.instances).toEqual([instance]);
    expect(store.journal.readAfter(0, 10)[0]!.instances).toEqual([]);
  });

  it('finds each instance of a change in its own series, datasetIds apart, and after an edit moved its row', () => {
    const id = 'urn:x:ds';
    const at = (ms: number, n = 0) => `urn:ngsi-ld:Instance:${instanceUuidAt(ms, n)}`;
    const attribute = (value: number, observedAt: number) => ({ kind: 'Property' as const, value, observedAt, createdAt: 5, modifiedAt: 5, sub: {} });
    const plain = { entityId: id, attr: 'urn:a', instanceId: at(1_000), observedAt: 1_000, createdAt: 5, modifiedAt: 5, attribute: attribute(1, 1_000) };
    // The same instant in another series (datasetId): each found in its own.
    const other = { ...plain, instanceId: at(1_000, 1), datasetId: 'urn:ds:2', attribute: { ...attribute(2, 1_000), datasetId: 'urn:ds:2' } };
    store.transaction(() => {
      store.history.append('', [plain, other]);
      store.journal.append({ ...entry(9), id, instances: [plain, other] });
    });
    expect(store.journal.readAfter(0, 10, { instances: true })[0]!.instances).toEqual([plain, other]);
    // An observedAt edit files the row under another instant: the instance id no longer leads to it.
    const moved = { ...other, observedAt: 9_000_000_000, attribute: { ...other.attribute, observedAt: 9_000_000_000 } };
    expect(store.history.modifyInstance('', id, 'urn:a', other.instanceId, () => moved)).toBe(true);
    expect(store.journal.readAfter(0, 10, { instances: true })[0]!.instances).toEqual([plain, moved]);
  });

  it('writes instance ids in runs without their prefix, and reads back every id and order, and rows of tuples', async () => {
    const id = 'urn:x:runs';
    const attribute = (value: number) => ({ kind: 'Property' as const, value, createdAt: 5, modifiedAt: 5, sub: {} });
    const ids = [
      `urn:ngsi-ld:Instance:${instanceUuidAt(1_000)}`, 'urn:ngsi-ld:Instance:~marked', '~not-prefixed', 'urn:other:1',
      `urn:ngsi-ld:Instance:${instanceUuidAt(2_000)}`, 'urn:ngsi-ld:Instance:', `urn:ngsi-ld:Instance:${instanceUuidAt(3_000)}`,
    ];
    // Runs change with the attribute and with the datasetId, and an earlier pair comes back.
    const shapes = [['urn:a'], ['urn:a'], ['urn:a', 'urn:ds:1'], ['urn:b'], ['urn:a'], ['urn:a', 'urn:ds:1'], ['urn:a', 'urn:ds:1']] as const;
    const instances = ids.map((instanceId, k) => {
      const [attr, datasetId] = shapes[k]!;
      const base = { entityId: id, attr, instanceId, createdAt: 5, modifiedAt: 5, attribute: attribute(k) };
      return datasetId === undefined ? base : { ...base, datasetId, attribute: { ...base.attribute, datasetId } };
    });
    store.transaction(() => {
      store.history.append('', instances);
      store.journal.append({ ...entry(9), id, instances });
    });
    expect(store.journal.readAfter(0, 10, { instances: true })[0]!.instances).toEqual(instances);
    store.close();
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(join(dir, 'j.db'));
    const payload = db.prepare('SELECT payload FROM journal WHERE seq = 1').pluck().get() as string;
    expect(payload).not.toContain(`"urn:ngsi-ld:Instance:${instanceUuidAt(1_000)}"`);
    expect(payload).toContain(`"${instanceUuidAt(1_000)}"`);
    // A row of the tuple form (before runs) still reads.
    db.prepare('INSERT INTO journal (tenant, kind, entity_id, at, subject, payload) VALUES (?, ?, ?, ?, ?, ?)').run(
      '', 1, id, 6, null, JSON.stringify({ n: ['urn:a', 'urn:b'], w: [0], d: [], i: [[0, ids[0]], [1, ids[3]], [0, ids[2], 'urn:ds:1']] }),
    );
    db.close();
    store = open();
    expect(store.journal.readAfter(1, 1, { instances: true })[0]!.instances).toEqual([instances[0], instances[3], instances[2]]);
  });

  it('keeps rows until every reader has passed them', () => {
    append(store, 1, 2, 3, 4);
    store.journal.setCursor('notifier', 3);
    store.journal.setCursor('federation', 1);
    expect(store.journal.prune(0)).toEqual({ passed: 1, aged: 0, more: false });
    expect(store.journal.backlog('federation')).toBe(3);
    expect(store.journal.backlog('notifier')).toBe(1);
    store.journal.setCursor('federation', 4);
    expect(store.journal.prune(0)).toEqual({ passed: 2, aged: 0, more: false });
    expect(store.journal.readAfter(0, 10).map((r) => r.seq)).toEqual([4]);
  });

  it('a cursor never moves backwards, and persists across a reopen', () => {
    store.journal.setCursor('notifier', 5);
    store.journal.setCursor('notifier', 2);
    expect(store.journal.cursor('notifier')).toBe(5);
    store.close();
    store = open();
    expect(store.journal.cursor('notifier')).toBe(5);
    expect(store.journal.cursor('unknown')).toBeUndefined();
  });

  it('drops rows older than the horizon even when a reader has not read them, and says how many', () => {
    append(store, 1, 2, 3);
    store.journal.setCursor('federation', 0);
    // Rows 1 and 2 were written at 1001 and 1002.
    expect(store.journal.prune(1_003)).toEqual({ passed: 0, aged: 2, more: false });
    expect(store.journal.readAfter(0, 10).map((r) => r.seq)).toEqual([3]);
  });

  it('removes at most `limit` rows a call, oldest first, and says when more are left', () => {
    append(store, 1, 2, 3, 4, 5, 6, 7);
    store.journal.setCursor('notifier', 5);
    expect(store.journal.prune(0, 2)).toEqual({ passed: 2, aged: 0, more: true });
    expect(store.journal.prune(0, 2)).toEqual({ passed: 2, aged: 0, more: true });
    // Row 5 is the last the reader passed: the reader, not the limit, stops this call.
    expect(store.journal.prune(0, 2)).toEqual({ passed: 1, aged: 0, more: false });
    expect(store.journal.readAfter(0, 10).map((r) => r.seq)).toEqual([6, 7]);
  });

  it('a limited prune goes on past the readers to rows older than the horizon, and stops at the first newer one', () => {
    // Written at 1001 ... 1006.
    append(store, 1, 2, 3, 4, 5, 6);
    store.journal.setCursor('notifier', 1);
    expect(store.journal.prune(1_005, 3)).toEqual({ passed: 1, aged: 2, more: true });
    expect(store.journal.prune(1_005, 3)).toEqual({ passed: 0, aged: 1, more: false });
    expect(store.journal.readAfter(0, 10).map((r) => r.seq)).toEqual([5, 6]);
    // Nothing left to do; the newest row stays whatever the horizon.
    expect(store.journal.prune(1_005, 3)).toEqual({ passed: 0, aged: 0, more: false });
    store.journal.setCursor('notifier', 6);
    expect(store.journal.prune(Number.MAX_SAFE_INTEGER, 1)).toEqual({ passed: 1, aged: 0, more: false });
    expect(store.journal.readAfter(0, 10).map((r) => r.seq)).toEqual([6]);
  });

  it('a dropped reader no longer holds rows back', () => {
    append(store, 1, 2);
    store.journal.setCursor('gone', 0);
    expect(store.journal.prune(0).passed).toBe(0);
    store.journal.dropReader('gone');
    expect(store.journal.prune(0).passed).toBe(1);
  });
});
