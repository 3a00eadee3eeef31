// The journal changes whose notifications are held only in memory: the notifier's saved cursor
// stays before the oldest of them until each is delivered, given up or queued.

import type { PendingNotification } from './delivery-types.js';

export interface HeldChanges {
  /** A notification handed over in memory only: its change waits for it. */
  hold(n: PendingNotification): void;
  /** The notification is delivered, given up or queued: its change no longer waits for it. */
  release(n: PendingNotification): void;
  /** The highest journal sequence before every change with a notification only in memory; undefined: none. */
  before(): number | undefined;
  /** Notifications held only in memory. */
  count(): number;
}

export function createHeldChanges(): HeldChanges {
  /**
   * The journal changes with notifications only in memory, and how many each, oldest first (a Map
   * keeps the order of insertion, and changes are handed over in order).
   */
  const held = new Map<number, number>();
  let heldCount = 0;
  return {
    hold(n) {
      if (n.isQueued || n.seq === undefined) return;
      held.set(n.seq, (held.get(n.seq) ?? 0) + 1);
      heldCount += 1;
    },
    release(n) {
      const { seq } = n;
      if (seq === undefined) return;
      delete n.seq;
      heldCount -= 1;
      const left = (held.get(seq) ?? 1) - 1;
      if (left > 0) held.set(seq, left);
      else held.delete(seq);
    },
    before() {
      for (const seq of held.keys()) return seq - 1;
      return undefined;
    },
    count: () => heldCount,
  };
}
