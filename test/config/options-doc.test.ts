// The option table of docs/configuration.md is the one rendered from the config schema, so the two
// cannot drift (scripts/update-docs.mjs renders it).

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderOptionsMarkdown } from '../../src/config/index.js';

const START = '<!-- options:start -->';
const END = '<!-- options:end -->';

describe('docs/configuration.md option table', () => {
  it('lists every option with its env name, default and description, as rendered from the schema', () => {
    const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const start = page.indexOf(START);
    const end = page.indexOf(END);
    expect(start, `docs/configuration.md needs ${START} … ${END}`).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    const table = page.slice(start + START.length, end).trim();
    const expected = renderOptionsMarkdown();
    expect(table, `run npm run build && node scripts/update-docs.mjs, or paste between the markers:\n${expected}\n`).toBe(expected);
  });
});
