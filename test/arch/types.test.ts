// The whole project (src, bench, test as tsconfig.json includes them) type-checks: vitest strips
// types without checking them, so a test or a module that no longer type-checks would otherwise pass.

import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('type check', () => {
  it('tsc --noEmit reports no error', () => {
    const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
    const run = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.json'), '--noEmit', '--pretty', 'false'], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000,
    });
    expect(run.error).toBeUndefined();
    expect(`${run.stdout}${run.stderr}`.trim()).toBe('');
    expect(run.status).toBe(0);
  });
});
