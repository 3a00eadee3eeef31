// src/ is the broker alone: the benchmark (bench/) and the dashboard page (ui/) live beside it with
// builds of their own, and the broker's build (tsconfig.build.json, what dist/ holds) has none of them.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const outDir = mkdtempSync(join(tmpdir(), 'edgeld-build-'));

afterAll(() => {
  rmSync(outDir, { recursive: true, force: true });
});

/** Every file under `dir`, relative to it, with `/` separators. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split('\\').join('/'))
    .sort();
}

describe('source layout', () => {
  it('keeps the benchmark and the dashboard page out of src/', () => {
    expect(existsSync(join(ROOT, 'src', 'bench'))).toBe(false);
    expect(existsSync(join(ROOT, 'src', 'ui'))).toBe(false);
    expect(existsSync(join(ROOT, 'bench', 'run.ts'))).toBe(true);
    expect(existsSync(join(ROOT, 'ui', 'main.ts'))).toBe(true);
  });

  it('builds dist/ from src/ alone: one script per broker source, no benchmark file', () => {
    // The broker's build into a fresh folder, so files a former layout left in dist/ do not count.
    const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
    const run = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', outDir, '--pretty', 'false'], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000,
    });
    expect(`${run.stdout}${run.stderr}`.trim()).toBe('');
    expect(run.status).toBe(0);
    const scripts = filesUnder(outDir).filter((f) => f.endsWith('.js'));
    const sources = filesUnder(join(ROOT, 'src'))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
      .map((f) => f.replace(/\.ts$/, '.js'));
    expect(scripts).toContain('main.js');
    expect(scripts).toEqual(sources);
    expect(scripts.filter((f) => /^(bench|ui)\//.test(f))).toEqual([]);
  });
});
