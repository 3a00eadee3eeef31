// Exponential backoff with jitter between upstream attempts.

/** The wait before attempt `failures + 1`: base·2^(failures−1), at most max, drawn in its upper half. */
export function backoffDelay(failures: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}
