#!/usr/bin/env node
// Builds the benchmark (bench/) into dist-bench/: one esbuild bundle per script it runs as a process,
// with the broker code it uses in-process (the store, the subscription matcher) bundled in and the
// packages left to node_modules. dist/ stays the broker alone; bench/tsconfig.json type-checks.
//
// Usage: node scripts/build-bench.mjs [outDir]   (default dist-bench; npm run bench runs it)

import { rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'bench');
export const DEFAULT_OUT_DIR = join(ROOT, 'dist-bench');

/**
 * The scripts the benchmark starts with node: the runner, and the targets it spawns next to itself
 * (`new URL('./x.js', import.meta.url)`), so each must land in the same folder as run.js.
 */
export const ENTRY_POINTS = ['run', 'ceiling', 'ceiling-mqtt', 'cloud-sink'];

/** Bundles the benchmark into `outDir` (emptied first); resolves with the names of the scripts written. */
export async function buildBench({ outDir = DEFAULT_OUT_DIR } = {}) {
  rmSync(outDir, { recursive: true, force: true });
  await build({
    entryPoints: ENTRY_POINTS.map((name) => join(SRC, `${name}.ts`)),
    bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external',
    outdir: outDir, sourcemap: true, logLevel: 'warning',
    tsconfig: join(SRC, 'tsconfig.json'),
  });
  return ENTRY_POINTS.map((name) => `${name}.js`);
}

async function main() {
  const outDir = resolve(process.argv[2] ?? DEFAULT_OUT_DIR);
  const scripts = await buildBench({ outDir });
  process.stdout.write(`benchmark: ${scripts.join(', ')} in ${outDir}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
