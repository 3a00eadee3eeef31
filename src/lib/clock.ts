// Time and identity sources, injected so domain code stays pure and tests stay deterministic.

import { randomFillSync } from 'node:crypto';

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

/** Random bytes for POOL_IDS uuids, refilled from the system's CSPRNG when used up. */
const POOL_IDS = 256;
const pool = Buffer.alloc(16 * POOL_IDS);
let pooled = 0;
const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** Where each of a uuid's 16 bytes goes among its 36 characters. */
const BYTE_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
const UUID_TEXT = Buffer.from('00000000-0000-4000-8000-000000000000', 'latin1');

/**
 * A random UUID version 4 (RFC 9562), as crypto.randomUUID makes. NOTE: formatted into one buffer and
 * read back as one flat string: randomUUID joins 20 pieces into a chain of strings, about 600 bytes
 * of garbage per id, and one id is made per history row written.
 */
export const uuid: IdGenerator = () => {
  if (pooled === 0) randomFillSync(pool);
  const at = pooled * 16;
  pooled = (pooled + 1) % POOL_IDS;
  for (let i = 0; i < 16; i++) {
    let byte = pool[at + i]!;
    if (i === 6) byte = (byte & 0x0f) | 0x40; // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80; // RFC 9562 variant
    const c = BYTE_AT[i]!;
    UUID_TEXT[c] = HEX[byte >> 4]!;
    UUID_TEXT[c + 1] = HEX[byte & 15]!;
  }
  return UUID_TEXT.toString('latin1');
};

/**
 * A UUID version 7 (RFC 9562): the milliseconds since the epoch, then random bits. Ids made one after
 * the other sort one after the other, so an index on them grows at its end: an insert dirties the
 * last page, not a random one (a random UUID key wrote a distinct index page per row in each commit).
 */
export const timeOrderedUuid: IdGenerator = () => {
  const time = Date.now().toString(16).padStart(12, '0');
  // randomUUID's: xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx; its variant bits (y) are kept.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${uuid().slice(15)}`;
};
