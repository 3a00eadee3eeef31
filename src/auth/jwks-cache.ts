// The identity provider's keys as last fetched: refetched at most once per interval (concurrent
// callers share one fetch), kept when a fetch fails or returns garbage, persisted for offline restarts.

import type { Clock, Logger } from '../lib/index.js';
import { readJwksCache, writeJwksCache } from './jwks-cache-file.js';
import { fetchJwks } from './jwks-fetch.js';
import type { JwkSet } from './jwk-set.js';

export interface JwksCacheOptions {
  /** '' when there is no identity provider to fetch from. */
  uri: string;
  cacheFile: string | undefined;
  refreshIntervalMs: number;
  timeoutMs: number;
  fetch: typeof fetch;
  clock: Clock;
  log: Logger;
}

export interface JwksCache {
  /** The newest good key set (fetched, else read from the cache file); empty before either. */
  current(): JwkSet;
  /** Whether it holds any key (fetched, or read from the cache file). */
  hasKeys(): boolean;
  /** Reads the cache file unless keys were fetched already. Never rejects. */
  loadCacheFile(): Promise<void>;
  /**
   * Fetches the JWKS unless a fetch started less than the refresh interval ago; a fetch under way is
   * shared. Resolves once it ended, whatever the outcome. Never rejects.
   */
  refresh(): Promise<void>;
  /** Starts a refresh in the background when the keys are old or were never fetched. */
  refreshIfStale(): void;
  close(): void;
}

/** The largest JWKS accepted; real ones hold a few keys in a few KiB. */
const MAX_JWKS_BYTES = 1024 * 1024;
/** Keys older than this are refetched in the background, so keys the provider withdrew stop verifying. */
const STALE_AFTER_MS = 10 * 60_000;
const EMPTY: JwkSet = { keys: [] };
const DONE = Promise.resolve();

export function createJwksCache(opts: JwksCacheOptions): JwksCache {
  const { uri, cacheFile, clock, log } = opts;
  const closing = new AbortController();
  let set = EMPTY;
  let fetchedAt: number | undefined;
  let lastAttemptAt: number | undefined;
  let inFlight: Promise<void> | undefined;
  let writing = DONE;

  const isRateLimited = (now: number): boolean =>
    // NOTE: a clock set back must not hold fetches off until it catches up.
    lastAttemptAt !== undefined && now >= lastAttemptAt && now - lastAttemptAt < opts.refreshIntervalMs;

  const persist = (cached: { set: JwkSet; fetchedAt: number }): void => {
    if (cacheFile === undefined || cacheFile === '') return;
    writing = writing.then(() => writeJwksCache(cacheFile, uri, cached)).catch((err: unknown) => {
      log.warn('could not write the JWKS cache file; keys fetched now will not survive a restart offline', {
        file: cacheFile, err,
      });
    });
  };

  const fetchAndKeep = async (): Promise<void> => {
    try {
      const fetched = await fetchJwks(uri, { fetch: opts.fetch, timeoutMs: opts.timeoutMs, maxBytes: MAX_JWKS_BYTES, signal: closing.signal });
      set = fetched;
      fetchedAt = clock.now();
      log.debug('fetched the JWKS', { uri: redactUri(uri), keys: set.keys.length });
      persist({ set, fetchedAt });
    } catch (err) {
      if (closing.signal.aborted) return;
      log.warn('could not fetch the JWKS; the previous keys stay in use', {
        uri: redactUri(uri), reason: err instanceof Error ? err.message : String(err), keys: set.keys.length,
      });
    }
  };

  const refresh = (): Promise<void> => {
    if (inFlight !== undefined) return inFlight;
    const now = clock.now();
    if (uri === '' || closing.signal.aborted || isRateLimited(now)) return DONE;
    lastAttemptAt = now;
    inFlight = fetchAndKeep().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };

  return {
    current: () => set,
    hasKeys: () => set.keys.length > 0,
    async loadCacheFile() {
      if (uri === '' || cacheFile === undefined || cacheFile === '') return;
      try {
        const cached = await readJwksCache(cacheFile, uri);
        if (cached === undefined || fetchedAt !== undefined) return;
        set = cached.set;
        log.info('loaded the cached JWKS', { file: cacheFile, keys: set.keys.length, fetchedAt: new Date(cached.fetchedAt).toISOString() });
      } catch (err) {
        log.warn('ignored the JWKS cache file', { file: cacheFile, err });
      }
    },
    refresh,
    refreshIfStale() {
      const now = clock.now();
      if (fetchedAt === undefined || now - fetchedAt >= Math.max(STALE_AFTER_MS, opts.refreshIntervalMs)) void refresh();
    },
    close() {
      closing.abort();
    },
  };
}

/** The URI without credentials or query, which may carry secrets and have no place in a log. */
function redactUri(uri: string): string {
  try {
    const url = new URL(uri);
    return url.origin + url.pathname;
  } catch {
    return '(not a URL)';
  }
}
