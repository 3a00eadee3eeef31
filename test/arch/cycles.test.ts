// No import cycles between the files of src/ (type-only imports included): each module's files
// form a tree of contracts and implementations, and the modules a layered graph.

import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { typeScriptSources } from '../helpers/sources.js';
import { findImports } from '../../scripts/check-deps.mjs';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** Every cycle found by a depth-first walk, each as the files along it. */
function cycles(): string[] {
  const graph = new Map<string, string[]>();
  for (const file of typeScriptSources(SRC)) {
    const deps = findImports(readFileSync(file, 'utf8'))
      .filter((i: { specifier: string }) => i.specifier.startsWith('.'))
      .map((i: { specifier: string }) => resolve(dirname(file), i.specifier).replace(/\.js$/, '.ts'));
    graph.set(file, deps);
  }
  const found = new Set<string>();
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    stack.push(file);
    for (const dep of graph.get(file) ?? []) {
      if (!graph.has(dep) || done.has(dep)) continue;
      const at = stack.indexOf(dep);
      if (at >= 0) found.add(stack.slice(at).map((f) => relative(SRC, f)).join(' -> '));
      else visit(dep);
    }
    stack.pop();
    done.add(file);
  };
  for (const file of graph.keys()) if (!done.has(file)) visit(file);
  return [...found];
}

describe('src/', () => {
  it('has no import cycle between its files', () => {
    expect(cycles()).toEqual([]);
  });
});
