// The notification queue: order per subscription, reading past a given id, and ids never given
// twice (the sender reads past the last one it handed over before its removal is committed).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFixedClock, silentLogger } from '../../../src/lib/index.js';
import { openStore, type Store } from '../../../src/store/index.js';

let store: Store;
beforeEach(() => {
  store = openStore({ path: ':memory:', historyBucket: 'month', log: silentLogger, clock: createFixedClock(0) });
});
afterEach(() => store.close());

const item = (sub: string, n: number) => ({ tenant: '', subscriptionId: sub, queuedAt: n, message: `{"n":${n}}`, body: '{}' });

describe('the notification queue', () => {
  it('gives the oldest pending notification of a subscription, or the next after an id', () => {
    store.notifications.enqueue([item('a', 1), item('b', 2), item('a', 3)]);
    const first = store.notifications.next('', 'a')!;
    expect(first.message).toBe('{"n":1}');
    expect(store.notifications.next('', 'a', first.id)!.message).toBe('{"n":3}');
    expect(store.notifications.subscriptionsWithPending().map((s) => s.subscriptionId).sort()).toEqual(['a', 'b']);
  });

  it('never gives an id twice, even once the queue has emptied', () => {
    store.notifications.enqueue([item('a', 1)]);
    const first = store.notifications.next('', 'a')!;
    store.notifications.remove(first.id);
    expect(store.notifications.size()).toBe(0);
    store.notifications.enqueue([item('a', 2)]);
    expect(store.notifications.next('', 'a', first.id)?.message).toBe('{"n":2}');
  });

  it('keeps at most max notifications, dropping the oldest', () => {
    store.notifications.enqueue([item('a', 1), item('a', 2), item('a', 3)]);
    expect(store.notifications.trimTo(2)).toBe(1);
    expect(store.notifications.next('', 'a')!.message).toBe('{"n":2}');
  });
});
