// The number of runs of a property-based (fast-check) suite: FUZZ_RUNS when set (`FUZZ_RUNS=10000
// npm run fuzz`), else the suite's own default, so `npm test` keeps its running time.

/**
 * `FUZZ_RUNS` (or the suite's own variable `specific`, which wins) as a positive integer, else
 * `defaultRuns`; throws on a value that is no positive integer rather than fuzzing with a wrong count.
 */
export function fuzzRuns(defaultRuns: number, opts: { env?: NodeJS.ProcessEnv; specific?: string } = {}): number {
  const env = opts.env ?? process.env;
  const name = opts.specific !== undefined && (env[opts.specific] ?? '') !== '' ? opts.specific : 'FUZZ_RUNS';
  const text = env[name];
  if (text === undefined || text === '') return defaultRuns;
  const runs = Number(text);
  if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`${name}: '${text}' is not a positive integer`);
  return runs;
}
