// docs/history.md "Sizing history" shows the table scripts/history-sizing.mjs prints for the
// command it gives: the test runs that command and compares, so the page cannot drift from the
// script; and the script's arithmetic is checked on one line of the table and on its edge cases.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { daysToFill, sizingRow } from '../../scripts/history-sizing.mjs';
import { ROOT, readPage, shellBlocksOfSection } from './markdown.js';

const PAGE = 'docs/history.md';
const SECTION = 'Sizing history';
const SCRIPT = 'scripts/history-sizing.mjs';

/** The text between the section's markers. */
function shownTable(text: string): string {
  const start = text.indexOf('<!-- sizing:start -->');
  const end = text.indexOf('<!-- sizing:end -->');
  if (start < 0 || end < start) throw new Error(`${PAGE} has no <!-- sizing:start --> … <!-- sizing:end --> block`);
  return text.slice(start + '<!-- sizing:start -->'.length, end).trim();
}

describe(`${PAGE} ${SECTION}`, () => {
  it('shows what the command it gives prints', () => {
    const text = readPage(PAGE);
    const command = shellBlocksOfSection(text, SECTION).flatMap((b) => b.split('\n')).find((l) => l.startsWith(`node ${SCRIPT}`));
    expect(command, `a sh block of "${SECTION}" runs node ${SCRIPT}`).toBeDefined();
    const args = command!.split(/\s+/).slice(2);
    expect(args, 'the command names its inputs: the page does not follow the defaults').toEqual(expect.arrayContaining(['--raw', '--minute', '--hour']));
    const run = spawnSync(process.execPath, [join(ROOT, SCRIPT), ...args], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(shownTable(text)).toBe(run.stdout.trim());
  });
});

describe(SCRIPT, () => {
  it('computes a line from the bytes per row: 500 sensors every 5 s', () => {
    const r = sizingRow({ raw: 100, minute: 200, hour: 300 }, 500, 5, 40e9);
    expect(r.instances).toBe(8_640_000);
    expect(r.perDay).toEqual({ raw: 864_000_000, minute: 500 * 1_440 * 200, hour: 500 * 24 * 300 });
    expect(r.rawOnly).toBeCloseTo(40e9 / 864_000_000, 9);
    // 30 days of all three levels take 30 × 1,011.6 MB; then minutes and hours fill the rest.
    const after30 = 30 * (864e6 + 144e6 + 3.6e6);
    expect(r.tiered).toBeCloseTo(30 + (40e9 - after30) / (144e6 + 3.6e6), 6);
  });

  it('counts no more summaries than instances: one a minute has a minute summary each', () => {
    const r = sizingRow({ raw: 1, minute: 1, hour: 1 }, 10, 60, 1e9);
    expect(r.perDay.minute).toBe(r.perDay.raw);
    expect(r.perDay.hour).toBe(240);
  });

  it('fills by pieces: before, between and after the retentions; never when nothing grows', () => {
    const keep = { raw: 30, minute: 365, hour: Number.POSITIVE_INFINITY };
    expect(daysToFill({ raw: 10, minute: 1, hour: 1 }, keep, 120)).toBe(10);
    expect(daysToFill({ raw: 10, minute: 1, hour: 1 }, keep, 360 + 2 * 35)).toBe(65);
    expect(daysToFill({ raw: 10, minute: 1, hour: 1 }, keep, 360 + 2 * 335 + 10)).toBe(375);
    expect(daysToFill({ raw: 10, minute: 0, hour: 0 }, { raw: 30, minute: 365, hour: 365 }, 1e9)).toBe(Number.POSITIVE_INFINITY);
  });
});
