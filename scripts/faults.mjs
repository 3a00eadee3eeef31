#!/usr/bin/env node
// Runs the fault tests: kill -9 rounds and SIGTERM under mixed write load, HTTP and MQTT fuzzing, and
// backup and restore under load. Without options, at the sizes CI runs them; --long at soak sizes
// (50 kill -9 rounds, 1,000,000 fuzzed HTTP requests, 100,000 fuzzed MQTT publishes), which takes
// about a quarter of an hour at the rates the CI sizes run at.
//
// Usage: node scripts/faults.mjs [--long] [--cycles <n>] [--fuzz-runs <n>] [--mqtt-fuzz-runs <n>]

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const VITEST = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const TESTS = [
  'test/e2e/kill-cycles.test.ts',
  'test/e2e/sigterm-under-load.test.ts',
  'test/api/errors/fuzz.test.ts',
  'test/mqtt/fuzz.test.ts',
  'test/ops/backup-restore.test.ts',
];

const env = { ...process.env };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const value = () => {
    const v = argv[++i];
    if (!/^[1-9]\d*$/.test(v ?? '')) {
      process.stderr.write(`faults: ${a} needs a positive integer\n`);
      process.exit(2);
    }
    return v;
  };
  if (a === '--long') Object.assign(env, { FAULT_CYCLES: '50', FUZZ_RUNS: '1000000', FUZZ_MQTT_RUNS: '100000' });
  else if (a === '--cycles') env.FAULT_CYCLES = value();
  else if (a === '--fuzz-runs') env.FUZZ_RUNS = value();
  else if (a === '--mqtt-fuzz-runs') env.FUZZ_MQTT_RUNS = value();
  else {
    process.stderr.write(`faults: unknown argument ${a}\nusage: node scripts/faults.mjs [--long] [--cycles <n>] [--fuzz-runs <n>] [--mqtt-fuzz-runs <n>]\n`);
    process.exit(2);
  }
}
const res = spawnSync(process.execPath, [VITEST, 'run', ...TESTS], { cwd: ROOT, env, stdio: 'inherit' });
process.exitCode = res.status ?? 1;
