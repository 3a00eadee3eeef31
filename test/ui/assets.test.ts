// The built page itself: what scripts/build-ui.mjs writes (content-hashed names, a gzip copy of each
// file), its weight (under 300 KiB gzipped in total), that it works offline on the LAN (no CDN, font
// or script from elsewhere), and that the browser sources type-check against the DOM library.

import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPage } from './support.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUDGET = 300 * 1024;
let built: Awaited<ReturnType<typeof buildPage>>;

beforeAll(async () => {
  built = await buildPage();
});
afterAll(() => {
  rmSync(dirname(built.dir), { recursive: true, force: true });
});

describe('scripts/build-ui.mjs', () => {
  it('writes index.html and one content-hashed script and stylesheet, each with a gzip copy', () => {
    const names = built.files.map((f) => f.name);
    expect(names).toHaveLength(3);
    expect(names.filter((n) => /^assets\/main-[A-Z0-9]{8}\.css$/.test(n))).toHaveLength(1);
    expect(names.filter((n) => /^assets\/main-[A-Z0-9]{8}\.js$/.test(n))).toHaveLength(1);
    expect(names).toContain('index.html');
    const onDisk = readdirSync(join(built.dir, 'assets')).sort();
    expect(onDisk).toEqual(names.filter((n) => n.startsWith('assets/')).flatMap((n) => [n.slice(7), `${n.slice(7)}.gz`]).sort());
  });

  it(`weighs under ${BUDGET / 1024} KiB gzipped in total`, () => {
    const total = built.files.reduce((sum, f) => sum + f.gzipBytes, 0);
    expect(total).toBe(built.gzipTotal);
    expect(total).toBeLessThan(BUDGET);
  });

  it('loads nothing from elsewhere: no remote script, stylesheet, font or image', () => {
    const html = readFileSync(join(built.dir, 'index.html'), 'utf8');
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const css = readFileSync(join(built.dir, built.files.find((f) => f.name.endsWith('.css'))!.name), 'utf8');
    expect(css).not.toMatch(/url\(\s*['"]?(https?:)?\/\//);
    expect(css).not.toMatch(/@import/);
    const js = readFileSync(join(built.dir, built.files.find((f) => f.name.endsWith('.js'))!.name), 'utf8');
    expect(js).not.toMatch(/fonts\.googleapis|cdn\.jsdelivr|unpkg\.com|cdnjs/);
  });
});

describe('ui type check', () => {
  it('tsc -p ui/tsconfig.json (DOM library) reports no error', () => {
    const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
    const run = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'ui', 'tsconfig.json'), '--noEmit', '--pretty', 'false'], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000,
    });
    expect(`${run.stdout}${run.stderr}`.trim()).toBe('');
    expect(run.status).toBe(0);
  });
});
