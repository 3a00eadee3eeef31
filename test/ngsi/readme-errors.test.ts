// The error table of docs/api.md is the one rendered from the error catalogue, so the two cannot
// drift (scripts/update-docs.mjs renders it).

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, renderErrorsMarkdown } from '../../src/ngsi/index.js';

describe('docs/api.md error table', () => {
  it('lists every error type of the catalogue with its status', () => {
    const page = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const start = page.indexOf('<!-- errors:start -->');
    const end = page.indexOf('<!-- errors:end -->');
    expect(start, 'docs/api.md needs <!-- errors:start --> … <!-- errors:end -->').toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    const table = page.slice(start + '<!-- errors:start -->'.length, end).trim();
    expect(table, `run npm run build && node scripts/update-docs.mjs, or paste between the markers:\n${renderErrorsMarkdown()}\n`).toBe(renderErrorsMarkdown());
    for (const e of ERROR_CATALOGUE) expect(table).toContain(`| \`${e.type}\` | ${e.status} |`);
    expect(ERROR_CATALOGUE.every((e) => e.when !== '')).toBe(true);
  });
});
