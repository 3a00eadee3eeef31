// store.write group commit: per-write savepoints, hook timing, batch limits, flush and close.

import { describe, expect, it } from 'vitest';
import { MAX_BATCH } from '../../src/store/transactions.js';
import { entity, memoryStore, NS } from './helpers.js';

const T = NS + 'Thing';
const id = (n: number): string => `urn:ngsi-ld:Thing:${n}`;

describe('store.write (group commit)', () => {
  it('commits the others when one of N concurrent writes throws, and rejects only that one', async () => {
    const store = memoryStore();
    const events: string[] = [];
    const writes = [1, 2, 3, 4].map((n) => store.write((tx) => {
      store.entities.insert('', entity(id(n), [T]));
      events.push(`fn${n}`);
      tx.onCommit(() => events.push(`hook${n}`));
      if (n === 3) throw new Error('three fails');
      return n;
    }));
    const settled = await Promise.allSettled(writes);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: 1 });
    expect(settled[2]).toMatchObject({ reason: new Error('three fails') });
    // The batch first runs whole, until fn3 throws; it is then run again write by write, each in a
    // savepoint. One COMMIT: every fn ran before the first hook, and the failed one has no hook.
    expect(events).toEqual(['fn1', 'fn2', 'fn3', 'fn1', 'fn2', 'fn3', 'fn4', 'hook1', 'hook2', 'hook4']);
    expect([1, 2, 3, 4].map((n) => store.entities.exists({ tenant: '' }, id(n)))).toEqual([true, true, false, true]);
    store.close();
  });

  it('waits a few loop turns for late writers while fewer are queued than the last batch held, and never for a lone writer', async () => {
    const store = memoryStore();
    const events: string[] = [];
    const write = (n: number): Promise<void> => store.write((tx) => {
      store.entities.insert('', entity(id(n), [T]));
      events.push(`fn${n}`);
      tx.onCommit(() => events.push(`hook${n}`));
    });
    await Promise.all([1, 2, 3, 4].map(write));
    events.length = 0;
    // Last batch: 4. Two writers now, two more on the next turn: one batch, one COMMIT.
    const early = [5, 6].map(write);
    const late = new Promise<void>((resolve) => setImmediate(() => resolve(Promise.all([7, 8].map(write)).then(() => undefined))));
    await Promise.all([...early, late]);
    expect(events).toEqual(['fn5', 'fn6', 'fn7', 'fn8', 'hook5', 'hook6', 'hook7', 'hook8']);
    // Writers arriving one per turn keep the flush waiting (up to four turns): still one COMMIT.
    events.length = 0;
    const turn = (n: number, more: () => Promise<void>): Promise<void> =>
      new Promise<void>((resolve) => setImmediate(() => resolve(Promise.all([write(n), more()]).then(() => undefined))));
    await Promise.all([write(20), turn(21, () => turn(22, () => turn(23, () => Promise.resolve())))]);
    expect(events).toEqual(['fn20', 'fn21', 'fn22', 'fn23', 'hook20', 'hook21', 'hook22', 'hook23']);
    // A turn that brings no writer ends the waiting: a writer two turns later is the next batch.
    events.length = 0;
    const afterTwoTurns = new Promise<void>((resolve) => setImmediate(() => setImmediate(() => setImmediate(() => resolve(write(31))))));
    await Promise.all([write(30), afterTwoTurns]);
    expect(events).toEqual(['fn30', 'hook30', 'fn31', 'hook31']);
    // Last batch: 1 now; a lone write never waits.
    await write(9);
    events.length = 0;
    const first = write(10);
    const second = new Promise<void>((resolve) => setImmediate(() => resolve(write(11))));
    await Promise.all([first, second]);
    expect(events).toEqual(['fn10', 'hook10', 'fn11', 'hook11']);
    store.close();
  });

  it('runs each write once when none throws', async () => {
    const store = memoryStore();
    const runs: number[] = [];
    await Promise.all([1, 2, 3].map((n) => store.write(() => {
      runs.push(n);
      store.entities.insert('', entity(id(n), [T]));
    })));
    expect(runs).toEqual([1, 2, 3]);
    store.close();
  });

  it('keeps dictionary caches right when a savepoint rolls back a new IRI', async () => {
    const store = memoryStore();
    const fresh = NS + 'Fresh';
    const results = await Promise.allSettled([
      store.write(() => store.entities.insert('', entity(id(1), [NS + 'Other']))),
      store.write(() => {
        store.entities.insert('', entity(id(2), [fresh]));
        throw new Error('rolled back');
      }),
      store.write(() => store.entities.insert('', entity(id(3), [fresh]))),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    await store.write(() => store.entities.insert('', entity(id(4), [fresh])));
    expect(store.entities.list({ tenant: '' }, { types: [fresh], limit: 10, offset: 0, count: false }).entities.map((e) => e.id)).toEqual([id(3), id(4)]);
    store.close();
  });

  it('resolves promises after COMMIT and sends a write issued from onCommit to the next batch', async () => {
    const store = memoryStore();
    const events: string[] = [];
    let late: Promise<void> | undefined;
    const first = store.write((tx) => {
      events.push('fn1');
      tx.onCommit(() => {
        events.push('hook1');
        late = store.write((tx2) => {
          events.push('late fn');
          tx2.onCommit(() => events.push('late hook'));
        });
      });
    });
    const second = store.write((tx) => {
      events.push('fn2');
      tx.onCommit(() => events.push('hook2'));
    });
    await Promise.all([first, second]);
    events.push('resolved');
    await late;
    expect(events).toEqual(['fn1', 'fn2', 'hook1', 'hook2', 'resolved', 'late fn', 'late hook']);
    store.close();
  });

  it('commits at most MAX_BATCH writes per transaction, in order', async () => {
    const store = memoryStore();
    const events: string[] = [];
    const n = 2 * MAX_BATCH + 50;
    const all = Array.from({ length: n }, (_, i) => store.write((tx) => {
      events.push(`fn${i}`);
      tx.onCommit(() => events.push(`hook${i}`));
      return i;
    }));
    expect(await Promise.all(all)).toEqual(Array.from({ length: n }, (_, i) => i));
    // Batch boundaries: the hooks of a batch run between its last fn and the next batch's first fn.
    const last = MAX_BATCH - 1;
    expect(events.indexOf(`hook${last}`)).toBeLessThan(events.indexOf(`fn${MAX_BATCH}`));
    expect(events.indexOf(`fn${last}`)).toBeLessThan(events.indexOf('hook0'));
    expect(events.indexOf(`hook${2 * MAX_BATCH - 1}`)).toBeLessThan(events.indexOf(`fn${2 * MAX_BATCH}`));
    expect(events.indexOf(`fn${MAX_BATCH}`)).toBe(events.indexOf(`hook${last}`) + 1);
    store.close();
  });

  it('rejects a write whose fn returns a Promise, without touching the others', async () => {
    const store = memoryStore();
    const bad = store.write(async () => {
      store.entities.insert('', entity(id(1), [T]));
    });
    const good = store.write(() => store.entities.insert('', entity(id(2), [T])));
    await expect(bad).rejects.toThrow(/synchronous/);
    await good;
    expect(store.entities.exists({ tenant: '' }, id(1))).toBe(false);
    expect(store.entities.exists({ tenant: '' }, id(2))).toBe(true);
    store.close();
  });

  it('runs a write queued inside a transaction after that transaction', async () => {
    const store = memoryStore();
    const events: string[] = [];
    let queued: Promise<void> | undefined;
    store.transaction(() => {
      queued = store.write(() => {
        events.push('write');
      });
      events.push('transaction');
    });
    await queued;
    expect(events).toEqual(['transaction', 'write']);
    store.close();
  });

  it('flush() commits what is queued', async () => {
    const store = memoryStore();
    const p = store.write(() => store.entities.insert('', entity(id(1), [T])));
    await store.flush();
    expect(store.entities.exists({ tenant: '' }, id(1))).toBe(true);
    await p;
    store.close();
  });

  it('close() commits queued writes synchronously; later writes reject', async () => {
    const store = memoryStore();
    let committed = false;
    const p = store.write((tx) => {
      tx.onCommit(() => {
        committed = true;
      });
      return 'done';
    });
    store.close();
    expect(committed).toBe(true);
    await expect(p).resolves.toBe('done');
    await expect(store.write(() => 1)).rejects.toThrow(/closed/);
    await expect(store.flush()).resolves.toBeUndefined();
  });
});
