#!/usr/bin/env node
// Builds the dashboard page (ui/) into dist/ui: one esbuild bundle of its script and one of its
// styles under assets/ with content-hashed names, index.html naming them, and a gzip copy of each
// file next to it, which the broker serves to clients that take gzip.
//
// Usage: node scripts/build-ui.mjs [outDir]   (default dist/ui; npm run build runs it after tsc)

import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'ui');
export const DEFAULT_OUT_DIR = join(ROOT, 'dist', 'ui');

/** Browsers from 2022 on: the mqtt package's browser bundle uses ES2022 syntax esbuild cannot lower. */
const TARGET = ['es2022', 'chrome100', 'firefox100', 'safari15.4', 'edge100'];

function gzipFile(path) {
  const gz = gzipSync(readFileSync(path), { level: 9 });
  writeFileSync(`${path}.gz`, gz);
  return gz.length;
}

/**
 * Bundles the page into `outDir` (emptied first). Resolves with every file written but the gzip
 * copies: its name under outDir, its size and its gzipped size; and the gzipped total.
 */
export async function buildUi({ outDir = DEFAULT_OUT_DIR, minify = true } = {}) {
  rmSync(outDir, { recursive: true, force: true });
  const assets = join(outDir, 'assets');
  mkdirSync(assets, { recursive: true });
  const result = await build({
    entryPoints: [join(SRC, 'main.ts')],
    bundle: true, format: 'esm', platform: 'browser', target: TARGET, minify, sourcemap: false,
    outdir: assets, entryNames: '[name]-[hash]', assetNames: '[name]-[hash]', metafile: true,
    legalComments: 'eof', charset: 'utf8', logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
    tsconfig: join(SRC, 'tsconfig.json'),
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const js = outputs.find((n) => n.endsWith('.js'));
  const css = outputs.find((n) => n.endsWith('.css'));
  if (!js || !css) throw new Error(`esbuild wrote no script or no stylesheet: ${outputs.join(', ')}`);
  const html = readFileSync(join(SRC, 'index.html'), 'utf8').replace('{{js}}', js).replace('{{css}}', css);
  writeFileSync(join(outDir, 'index.html'), html);
  const files = [join(outDir, 'index.html'), ...readdirSync(assets).map((n) => join(assets, n))].map((path) => ({
    name: path.slice(outDir.length + 1), bytes: statSync(path).size, gzipBytes: gzipFile(path),
  }));
  return { outDir, files, gzipTotal: files.reduce((sum, f) => sum + f.gzipBytes, 0) };
}

async function main() {
  const outDir = resolve(process.argv[2] ?? DEFAULT_OUT_DIR);
  const { files, gzipTotal } = await buildUi({ outDir });
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  process.stdout.write(`dashboard: ${files.length} files in ${outDir}, ${kib(gzipTotal)} gzipped\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
