// A request budget per key (an authenticated subject): a token bucket holding one minute of requests,
// refilled continuously. Memory is bounded: one LRU of a fixed number of buckets, so a key forgotten
// for want of room starts again with a full bucket.

import type { Clock } from './clock.js';
import { createLru } from './lru.js';

export interface RequestBudgetLimits {
  /** Requests a key may make per minute, and at once after a minute at rest. */
  perMinute: number;
  /** Keys tracked at most (the least recently seen are forgotten). */
  maxKeys: number;
}

export interface RequestBudgetStats {
  /** Requests refused for want of budget, since start. */
  refused: number;
  /** Keys tracked now (at most `maxKeys`). */
  keys: number;
}

export interface RequestBudget {
  /** Takes one request from the key's bucket: 0 when there was one, else the milliseconds until there is (a refusal, counted). */
  take(key: string): number;
  stats(): RequestBudgetStats;
}

interface Bucket {
  /** Requests left, fractional while refilling. */
  tokens: number;
  /** When `tokens` was last brought up to date. */
  at: number;
}

const MINUTE_MS = 60_000;

export function createRequestBudget(deps: { limits: RequestBudgetLimits; clock: Clock }): RequestBudget {
  const { perMinute, maxKeys } = deps.limits;
  const { clock } = deps;
  const perMs = perMinute / MINUTE_MS;
  const buckets = createLru<string, Bucket>(maxKeys);
  let refused = 0;
  return {
    take(key) {
      const now = clock.now();
      const bucket = buckets.get(key);
      if (bucket === undefined) {
        buckets.set(key, { tokens: perMinute - 1, at: now });
        return 0;
      }
      bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.at) * perMs);
      bucket.at = now;
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return 0;
      }
      refused += 1;
      return Math.ceil((1 - bucket.tokens) / perMs);
    },
    stats: () => ({ refused, keys: buckets.size }),
  };
}
