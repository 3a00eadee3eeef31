// The documentation holds together: every relative link of README.md and docs/*.md names a file that
// exists and every #anchor a heading of its page (GitHub's slugs), the README stays one page
// (at most 300 lines) and each docs page readable in one sitting (at most 500 lines).

import { existsSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, anchors, links, markdownPages, readPage, slug } from './markdown.js';

const README_MAX_LINES = 300;
const PAGE_MAX_LINES = 500;
/** Pages allowed past PAGE_MAX_LINES, each with the reason. None today. */
const LONG_PAGES: Record<string, string> = {};

const fileExists = (path: string): boolean => existsSync(join(ROOT, path));

describe('markdown anchors', () => {
  it('follow GitHub slug rules', () => {
    expect(slug('Shutdown, exit codes, logs')).toBe('shutdown-exit-codes-logs');
    expect(slug('Outside `src/`')).toBe('outside-src');
    expect(slug('Queries (q, type selection, scopeQ)')).toBe('queries-q-type-selection-scopeq');
    expect(slug('Install, back up, restore')).toBe('install-back-up-restore');
    expect([...anchors('# A\n## A\n```sh\n# not a heading\n```\n## B c')]).toEqual(['a', 'a-1', 'b-c']);
  });
});

describe('documentation links', () => {
  const pages = markdownPages();

  it('finds the README and the docs pages', () => {
    expect(pages).toContain('README.md');
    expect(pages).toContain('docs/api.md');
    expect(pages.length).toBeGreaterThan(10);
  });

  it.each(pages)('%s: every relative link names an existing file, and every anchor a heading', (page) => {
    const broken: string[] = [];
    for (const { target, line } of links(readPage(page))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
      const file = pathPart === '' ? page : relative(ROOT, join(ROOT, dirname(page), decodeURIComponent(pathPart)));
      if (file.startsWith('..')) {
        broken.push(`${page}:${line}: ${target} points outside the repository`);
        continue;
      }
      if (!fileExists(normalize(file))) {
        broken.push(`${page}:${line}: ${target}: no file ${file}`);
        continue;
      }
      if (anchor !== undefined && file.endsWith('.md') && !anchors(readPage(file)).has(anchor)) {
        broken.push(`${page}:${line}: ${target}: no heading with anchor #${anchor} in ${file}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('keeps the README to one page', () => {
    const lines = readPage('README.md').split('\n').length;
    expect(lines, `README.md has ${lines} lines`).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it.each(pages.filter((p) => p.startsWith('docs/')))('%s stays under the page length', (page) => {
    const lines = readPage(page).split('\n').length;
    const limit = LONG_PAGES[page] === undefined ? PAGE_MAX_LINES : Infinity;
    expect(lines, `${page} has ${lines} lines: split it by reader`).toBeLessThanOrEqual(limit);
  });
});
