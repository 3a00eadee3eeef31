// The README's error table is the one rendered from the error catalogue, so the two cannot drift.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, renderErrorsMarkdown } from '../../src/ngsi/index.js';

describe('README error table', () => {
  it('lists every error type of the catalogue with its status', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const start = readme.indexOf('<!-- errors:start -->');
    const end = readme.indexOf('<!-- errors:end -->');
    expect(start).toBeGreaterThanOrEqual(0);
    const table = readme.slice(start + '<!-- errors:start -->'.length, end).trim();
    expect(table, `paste between the markers in README.md:\n${renderErrorsMarkdown()}\n`).toBe(renderErrorsMarkdown());
    for (const e of ERROR_CATALOGUE) expect(table).toContain(`| \`${e.type}\` | ${e.status} |`);
    expect(ERROR_CATALOGUE.every((e) => e.when !== '')).toBe(true);
  });
});
