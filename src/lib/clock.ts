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
