// `npm run fuzz` (scripts/fuzz.mjs): it runs the suites that import fast-check, and each of them
// takes its number of runs from FUZZ_RUNS, keeping its own default when that is unset.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fuzzSuites } from '../../scripts/fuzz.mjs';
import { fuzzRuns } from '../helpers/fuzz-runs.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('fuzzRuns', () => {
  it('is the suite\'s default when FUZZ_RUNS is unset or empty', () => {
    expect(fuzzRuns(400, { env: {} })).toBe(400);
    expect(fuzzRuns(400, { env: { FUZZ_RUNS: '' } })).toBe(400);
  });

  it('is FUZZ_RUNS when set, and the suite\'s own variable before it', () => {
    expect(fuzzRuns(400, { env: { FUZZ_RUNS: '10000' } })).toBe(10_000);
    expect(fuzzRuns(1_000, { env: { FUZZ_RUNS: '50', FUZZ_MQTT_RUNS: '7' }, specific: 'FUZZ_MQTT_RUNS' })).toBe(7);
    expect(fuzzRuns(1_000, { env: { FUZZ_RUNS: '50' }, specific: 'FUZZ_MQTT_RUNS' })).toBe(50);
  });

  it('refuses a FUZZ_RUNS that is no positive integer', () => {
    for (const bad of ['0', '-3', '1.5', 'many', '1e400']) expect(() => fuzzRuns(400, { env: { FUZZ_RUNS: bad } })).toThrow(/FUZZ_RUNS/);
  });
});

describe('npm run fuzz', () => {
  const suites = fuzzSuites(ROOT);

  it('runs the suites that import fast-check, and no other test file', () => {
    expect(suites).toEqual(expect.arrayContaining(['test/api/errors/fuzz.test.ts', 'test/mqtt/fuzz.test.ts', 'test/http/uri.test.ts']));
    expect(suites).not.toContain('test/scripts/fuzz.test.ts');
    const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['fuzz']).toBe('node scripts/fuzz.mjs');
  });

  it('finds each of them reading its number of runs through fuzzRuns, with no fixed count left', () => {
    for (const file of suites) {
      const text = readFileSync(`${ROOT}/${file}`, 'utf8');
      expect(text, file).toMatch(/fuzzRuns\(/);
      expect(text, file).not.toMatch(/numRuns: [0-9]/);
      // Every property states its runs (fast-check's own default, 100, would ignore FUZZ_RUNS).
      const asserts = text.match(/fc\.assert\(/g)?.length ?? 0;
      const counted = text.match(/numRuns: /g)?.length ?? 0;
      expect(counted, file).toBeGreaterThanOrEqual(asserts);
    }
  });
});
