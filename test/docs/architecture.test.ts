// docs/architecture.md stays true where a test can tell: its module table names every top-level
// folder of src/ and only folders that exist, its store subfolders are the ones src/store has, the
// tool folders it names outside src/ exist, and its layers are those scripts/check-deps.mjs enforces.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as checkDeps from '../../scripts/check-deps.mjs';
import { ROOT, proseLines, readPage } from './markdown.js';

const PAGE = 'docs/architecture.md';
const { LAYERS } = checkDeps;
// NOTE: folders of src/ the checker leaves out (tools that live in src/ until they move to the top
// level); read defensively, since the list empties and may go once they have moved.
const EXEMPT_MODULES: readonly string[] = (checkDeps as { EXEMPT_MODULES?: readonly string[] }).EXEMPT_MODULES ?? []; // an optional export


/** The first cells of the table rows under `## <heading>` or `### <heading>`, code marks removed. */
function firstCells(text: string, heading: string): string[][] {
  const lines = proseLines(text).map((l) => l.line);
  const start = lines.findIndex((l) => /^#{2,3}\s/.test(l) && l.replace(/^#+\s+/, '').trim() === heading);
  if (start < 0) throw new Error(`${PAGE} has no section "${heading}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^#{1,3}\s/.test(line)) break;
    if (!line.startsWith('|') || /^\|[-\s|:]+\|$/.test(line)) continue;
    rows.push(line.split('|').slice(1, -1).map((c) => c.trim()));
  }
  return rows.slice(1); // the header row
}

const codeNames = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const dirs = (path: string): string[] =>
  readdirSync(join(ROOT, path), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();

describe(PAGE, () => {
  const text = readPage(PAGE);

  it('names every top-level folder of src/ in its module table, and only folders that exist', () => {
    const named = firstCells(text, 'Modules').flatMap((r) => codeNames(r[0]!));
    const namedDirs = named.filter((n) => n.endsWith('/')).map((n) => n.replace(/^src\//, '').replace(/\/$/, ''));
    const brokerDirs = dirs('src').filter((d) => !EXEMPT_MODULES.includes(d));
    expect(brokerDirs.length).toBeGreaterThan(10);
    expect(brokerDirs.filter((d) => !namedDirs.includes(d)), 'folders of src/ missing from the module table').toEqual([]);
    expect(namedDirs.filter((d) => !existsSync(join(ROOT, 'src', d))), 'module table rows with no folder').toEqual([]);
    for (const file of named.filter((n) => n.endsWith('.ts'))) expect(existsSync(join(ROOT, file)), file).toBe(true);
  });

  it('names every subfolder src/store has', () => {
    const named = firstCells(text, 'Store subfolders').flatMap((r) => codeNames(r[0]!)).map((n) => n.replace(/^store\//, '').replace(/\/$/, ''));
    expect(named).toContain('journal');
    // The named ones that exist are checked; a subfolder not yet made is the layout to come.
    expect(dirs('src/store').filter((d) => !named.includes(d)), 'subfolders of src/store missing from the table').toEqual([]);
  });

  it('names the tool folders outside src/, which exist (at the top level, or in src/ before they move)', () => {
    const named = firstCells(text, 'Outside `src/`').flatMap((r) => codeNames(r[0]!)).map((n) => n.replace(/\/$/, ''));
    for (const tool of EXEMPT_MODULES) expect(named, `${tool}/ in "Outside src/"`).toContain(tool);
    for (const folder of named) {
      const here = existsSync(join(ROOT, folder)) || (EXEMPT_MODULES.includes(folder) && existsSync(join(ROOT, 'src', folder)));
      expect(here, `${folder}/ exists`).toBe(true);
    }
  });

  it('states the layers of scripts/check-deps.mjs, bottom to top', () => {
    const rows = firstCells(text, 'Layers').map((r) => ({ layer: Number(r[0]), modules: codeNames(r[1]!) }));
    const stated = [...rows].sort((a, b) => a.layer - b.layer);
    expect(stated.map((r) => r.layer)).toEqual(LAYERS.map((_, i) => i + 1));
    expect(stated.map((r) => [...r.modules].sort())).toEqual(LAYERS.map((mods) => [...mods].sort()));
  });
});
