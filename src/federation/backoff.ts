// Exponential backoff with jitter between upstream attempts.

/** The wait before attempt `failures + 1`: base·2^(failures−1), at most max, drawn in its upper half. */
/** The retry state of something kept upstream (the gateway's registration, the downlink's subscription). */
export interface RetryState {
  nextAttemptAt: number;
  /** Failures since the last success. */
  failures: number;
  failuresTotal: number;
  lastError: { at: number; message: string } | undefined;
}

/** Records a failed attempt at `now`: the next one waits for the backoff. Returns the error's text and that wait. */
export function recordFailure(
  state: RetryState, err: unknown, now: number, opts: { retryBaseMs: number; retryMaxMs: number }, random: () => number,
): { message: string; delay: number } {
  state.failures += 1;
  state.failuresTotal += 1;
  const delay = backoffDelay(state.failures, opts.retryBaseMs, opts.retryMaxMs, random);
  state.nextAttemptAt = now + delay;
  const message = (err instanceof Error ? err.message : String(err)).slice(0, 1_000);
  state.lastError = { at: now, message };
  return { message, delay };
}

export function backoffDelay(failures: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}
