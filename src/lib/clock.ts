// Time and identity sources, injected so domain code stays pure and tests stay deterministic.

import { randomUUID } from 'node:crypto';

export interface Clock {
  /** UTC epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export function createFixedClock(start: number): Clock & { set(ms: number): void; advance(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    set: (ms) => {
      t = ms;
    },
    advance: (ms) => {
      t += ms;
    },
  };
}

export type IdGenerator = () => string;
export const uuid: IdGenerator = () => randomUUID();

/**
 * A UUID version 7 (RFC 9562): the milliseconds since the epoch, then random bits. Ids made one after
 * the other sort one after the other, so an index on them grows at its end: an insert dirties the
 * last page, not a random one (a random UUID key wrote a distinct index page per row in each commit).
 */
export const timeOrderedUuid: IdGenerator = () => {
  const time = Date.now().toString(16).padStart(12, '0');
  // randomUUID's: xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx; its variant bits (y) are kept.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
};
