#!/usr/bin/env node
// `npm run fuzz`: runs the property-based suites (the test files that import fast-check) alone.
// FUZZ_RUNS sets the number of runs of each property (each suite's own default when unset); a run
// of many takes its time, so no test times out here. Arguments are passed to vitest.

import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const FAST_CHECK_IMPORT = /^import\s[^;]*from\s+['"]fast-check['"]/m;

/** The test files under `<root>/test` that import fast-check, relative to root, sorted. */
export function fuzzSuites(root) {
  const out = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.test.ts') && FAST_CHECK_IMPORT.test(readFileSync(path, 'utf8'))) out.push(relative(root, path));
    }
  };
  walk(join(root, 'test'));
  return out.sort();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const suites = fuzzSuites(root);
  if (suites.length === 0) {
    process.stderr.write('fuzz: no test file imports fast-check\n');
    process.exit(1);
  }
  process.stderr.write(`fuzz: ${suites.length} suites, FUZZ_RUNS=${process.env.FUZZ_RUNS || '(each suite\'s default)'}\n`);
  const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
  const run = spawnSync(process.execPath, [vitest, 'run', '--testTimeout=0', ...suites, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
  process.exit(run.status ?? 1);
}
