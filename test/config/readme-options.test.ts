// The README's option table is the one rendered from the config schema, so the two cannot drift.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderOptionsMarkdown } from '../../src/config/index.js';

const START = '<!-- options:start -->';
const END = '<!-- options:end -->';

describe('README configuration table', () => {
  it('lists every option with its env name, default and description, as rendered from the schema', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const start = readme.indexOf(START);
    const end = readme.indexOf(END);
    expect(start, `README.md needs ${START} … ${END}`).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    const table = readme.slice(start + START.length, end).trim();
    const expected = renderOptionsMarkdown();
    expect(table, `paste between the markers in README.md:\n${expected}\n`).toBe(expected);
  });
});
