// Lockout of repeated failed logins (the token endpoint, MQTT CONNECT): failures are counted per
// client address and per user name; past a threshold every further attempt must wait, the wait
// doubling at each failure up to a ceiling. Memory is bounded: one LRU of a fixed number of
// entries, so an attacker rotating addresses only evicts the least recently failed ones.

import type { Clock } from './clock.js';
import type { Logger } from './log.js';
import { createLru } from './lru.js';

/** Where a login is attempted: HTTP (token endpoint) or MQTT CONNECT. */
export type LoginChannel = 'http' | 'mqtt';

export interface LoginLimits {
  /** Failures for one user name (or client id) before each further attempt waits. */
  nameFailures: number;
  /** Failures from one address (an IPv6 /64) before each further attempt waits. */
  addressFailures: number;
  /** The first wait, doubled at each further failure. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** An address or name whose last failure is this old starts afresh. */
  forgetAfterMs: number;
  /** Addresses and names tracked at most (the least recently seen are forgotten). */
  maxEntries: number;
  /** Longest the answer to a refused attempt is held back (default 5 s; 0: answered at once). */
  maxAnswerDelayMs?: number;
}

export interface LoginAttempt {
  channel: LoginChannel;
  /** The client's network address; undefined when unknown. */
  address: string | undefined;
  /** The user name or client id the attempt names; undefined when none. */
  name: string | undefined;
}

export interface LoginLimiterStats {
  /** Failed logins, by channel. */
  failures: Record<LoginChannel, number>;
  /** Attempts refused unheard because their address or name had to wait, by channel. */
  refused: Record<LoginChannel, number>;
  /** Addresses and names tracked now (at most `maxEntries`). */
  entries: number;
}

/**
 * Every attempt starts with `begin`; an admitted one ends with exactly one of `failed`, `succeeded`
 * or `released`, so that attempts still being checked count too: a burst of parallel guesses gets
 * no more than the threshold through.
 */
export interface LoginLimiter {
  /** Milliseconds the attempt must wait before its credentials are checked; 0: admitted. A refusal is counted. */
  begin(attempt: LoginAttempt): number;
  /** An admitted attempt failed; returns the wait now in force for its address or name (0: none). */
  failed(attempt: LoginAttempt): number;
  /** An admitted attempt succeeded: the failures of its name are forgotten (not those of its address). */
  succeeded(attempt: LoginAttempt): void;
  /** An admitted attempt ended without checking credentials (a malformed request, an internal error). */
  released(attempt: LoginAttempt): void;
  /**
   * How long to hold back the answer to an attempt that must wait `waitMs` (at most the limits'
   * maxAnswerDelayMs): a client guessing passwords then gets one answer per wait, and its
   * connections sit idle instead of asking again and again.
   */
  answerDelay(waitMs: number): number;
  stats(): LoginLimiterStats;
}

interface Entry {
  failures: number;
  /** Admitted attempts not yet ended. */
  pending: number;
  /** The last failure (or the first attempt, for an entry without failures). */
  last: number;
  /** Until when attempts wait; 0 below the threshold. */
  until: number;
}

/** The longest hold of an answer when the limits do not say. */
const DEFAULT_MAX_ANSWER_DELAY_MS = 5_000;
/** Beyond this, doubling the wait again changes nothing (and 2 ** n stays finite). */
const MAX_DOUBLINGS = 40;
/** Longest user name written to a log line. */
const LOG_NAME_MAX = 100;
/** Keys of addresses and of names in the one LRU: a name can never pass for an address. */
const ADDRESS_KEY = 'a ';
const NAME_KEY = 'n ';

/**
 * The key an address is counted under: an IPv4 address (IPv4-mapped IPv6 included) as is, an IPv6
 * address by its /64, the block one host or LAN segment is usually given.
 */
export function addressGroup(address: string): string {
  const bare = address.split('%')[0] ?? address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(bare);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (!bare.includes(':')) return bare;
  const [head = '', tail] = bare.split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

export function createLoginLimiter(deps: { limits: LoginLimits; clock: Clock; log: Logger }): LoginLimiter {
  const { limits, clock, log } = deps;
  const entries = createLru<string, Entry>(limits.maxEntries);
  const failures: Record<LoginChannel, number> = { http: 0, mqtt: 0 };
  const refused: Record<LoginChannel, number> = { http: 0, mqtt: 0 };

  const keysOf = (a: LoginAttempt): Array<[key: string, threshold: number]> => {
    const keys: Array<[string, number]> = [];
    if (a.address !== undefined && a.address !== '') keys.push([ADDRESS_KEY + addressGroup(a.address), limits.addressFailures]);
    if (a.name !== undefined && a.name !== '') keys.push([NAME_KEY + a.name, limits.nameFailures]);
    return keys;
  };
  /** The entry of a key, unless forgotten for its age. */
  const current = (key: string, now: number): Entry | undefined => {
    const e = entries.get(key);
    if (e === undefined || now - e.last <= limits.forgetAfterMs) return e;
    entries.delete(key);
    return undefined;
  };

  /** One admitted attempt of the key has ended; an entry left with nothing to remember goes. */
  const settle = (key: string, now: number): void => {
    const e = current(key, now);
    if (e === undefined) return;
    e.pending = Math.max(0, e.pending - 1);
    if (e.failures === 0 && e.pending === 0) entries.delete(key);
  };

  return {
    begin(attempt) {
      const now = clock.now();
      const keys = keysOf(attempt);
      let wait = 0;
      for (const [key, threshold] of keys) {
        const e = current(key, now);
        if (e === undefined) continue;
        wait = Math.max(wait, e.until - now);
        // Attempts in flight count as failures to come: past the threshold, one at a time.
        if (e.pending > 0 && e.failures + e.pending >= threshold) wait = Math.max(wait, limits.baseDelayMs);
      }
      if (wait > 0) {
        refused[attempt.channel] += 1;
        return wait;
      }
      for (const [key] of keys) {
        const e = current(key, now);
        if (e === undefined) entries.set(key, { failures: 0, pending: 1, last: now, until: 0 });
        else e.pending += 1;
      }
      return 0;
    },
    failed(attempt) {
      const now = clock.now();
      failures[attempt.channel] += 1;
      let wait = 0;
      for (const [key, threshold] of keysOf(attempt)) {
        const e = current(key, now);
        const count = (e?.failures ?? 0) + 1;
        const delay = count < threshold ? 0 : Math.min(limits.maxDelayMs, limits.baseDelayMs * 2 ** Math.min(count - threshold, MAX_DOUBLINGS));
        entries.set(key, { failures: count, pending: Math.max(0, (e?.pending ?? 0) - 1), last: now, until: delay === 0 ? 0 : now + delay });
        wait = Math.max(wait, delay);
      }
      if (wait > 0) {
        log.warn('login locked out after repeated failures', {
          channel: attempt.channel, address: attempt.address ?? null, user: attempt.name?.slice(0, LOG_NAME_MAX) ?? null, retryAfterMs: wait,
        });
      }
      return wait;
    },
    succeeded(attempt) {
      const now = clock.now();
      for (const [key] of keysOf(attempt)) {
        if (key.startsWith(NAME_KEY)) entries.delete(key);
        else settle(key, now);
      }
    },
    released(attempt) {
      const now = clock.now();
      for (const [key] of keysOf(attempt)) settle(key, now);
    },
    answerDelay: (waitMs) => Math.max(0, Math.min(waitMs, limits.maxAnswerDelayMs ?? DEFAULT_MAX_ANSWER_DELAY_MS)),
    stats: () => ({ failures: { ...failures }, refused: { ...refused }, entries: entries.size }),
  };
}
