// The dependency checker (scripts/check-deps.mjs): its rules on small trees, then the real src/ tree.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkDeps, findImports, formatViolation } from '../../scripts/check-deps.mjs';
import { writeTree } from '../helpers/sources.js';

let root: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'edgeld-deps-'));
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Writes `files` (path under src/ → content) and returns the checker's messages as `file:line: message`. */
function check(files: Record<string, string>): string[] {
  return checkDeps(writeTree(join(root, 'src'), files)).map(formatViolation);
}

describe('findImports', () => {
  it('finds static, multi-line, re-export, side-effect and dynamic imports with their lines', () => {
    const source = [
      "import { a } from './a.js';",
      'import {',
      '  type B,',
      '  c,',
      "} from '../c/index.js';",
      "import type { D } from '../d/index.js';",
      "import { type E, type F } from '../e/index.js';",
      "export * from './g.js';",
      "export type { H } from './h.js';",
      "import './side.js';",
      "const m = await import('../dyn/index.js');",
      "import Default, { type X } from 'pkg';",
    ].join('\n');
    expect(findImports(source)).toEqual([
      { specifier: './a.js', line: 1, typeOnly: false },
      { specifier: '../c/index.js', line: 2, typeOnly: false },
      { specifier: '../d/index.js', line: 6, typeOnly: true },
      { specifier: '../e/index.js', line: 7, typeOnly: true },
      { specifier: './g.js', line: 8, typeOnly: false },
      { specifier: './h.js', line: 9, typeOnly: true },
      { specifier: './side.js', line: 10, typeOnly: false },
      { specifier: '../dyn/index.js', line: 11, typeOnly: false },
      { specifier: 'pkg', line: 12, typeOnly: false },
    ]);
  });

  it('ignores imports inside comments and strings that merely mention from', () => {
    const source = [
      "// import { x } from '../http/index.js';",
      '/*',
      " import { y } from '../store/index.js';",
      '*/',
      "const s = 'import nothing from here';",
      "export function f(): string { return g('from'); }",
      "const re = /['\"]/; import { z } from './z.js';",
    ].join('\n');
    expect(findImports(source)).toEqual([{ specifier: './z.js', line: 7, typeOnly: false }]);
  });
});

describe('checkDeps', () => {
  it('accepts a tree that follows the rules', () => {
    expect(
      check({
        'lib/index.ts': "export const x = 1;\n",
        'ngsi/index.ts': "import { x } from '../lib/index.js';\nexport const y = x;\n",
        'events.ts': "import type { y } from './ngsi/index.js';\n",
        'store/index.ts': "import Database from 'better-sqlite3';\nimport { helper } from './helper.js';\n",
        'store/helper.ts': "export const helper = 1;\n",
        'entities/index.ts': "import type { Config } from '../config/index.js';\nimport { s } from '../store/index.js';\n",
        'config/index.ts': "import { z } from 'zod';\n",
        'http/index.ts': "import { Hono } from 'hono';\nimport { z } from 'zod';\nimport { e } from '../entities/index.js';\n",
        'server.ts': "import { loadConfig } from './config/index.js';\nimport { h } from './http/index.js';\n",
        'main.ts': "import { start } from './server.js';\nimport contexts from '../contexts/core.json';\n",
      }),
    ).toEqual([]);
  });

  it('reports each kind of violation with file and line', () => {
    const violations = check({
      'lib/index.ts': "import { y } from '../ngsi/index.js';\n",
      'ngsi/index.ts': "import { s } from '../store/index.js';\n",
      'store/index.ts': "export const s = 1;\n",
      'store/inner.ts': "import { s } from './index.js';\n",
      'config/index.ts': "export const c = 1;\n",
      'entities/index.ts': [
        "import { q } from '../temporal/index.js';",
        "import { c } from '../config/index.js';",
        "import { inner } from '../store/inner.js';",
        "import { Hono } from 'hono';",
      ].join('\n'),
      'temporal/index.ts': "export const q = 1;\n",
      'http/index.ts': "import { s } from '../store/index.js';\nimport { m } from '../mqtt/index.js';\n",
      'mqtt/index.ts': "import cron from 'node-cron';\n",
      'server.ts': "import { run } from '../bench/run.js';\nimport type { View } from '../ui/view.js';\n",
      'metrics/index.ts': "export const m = 1;\n",
      'bench/run.ts': "export const run = 1;\n",
    });
    expect(violations).toEqual([
      // A tool folder under src/ is an unknown module: src/ holds the broker only.
      'src/bench/run.ts:1: module bench is not in the layer table of scripts/check-deps.mjs',
      'src/entities/index.ts:1: entities imports temporal; features never import each other (listen to ChangeEvents)',
      'src/entities/index.ts:2: entities imports values from config; other modules import only its types (use `import type`)',
      'src/entities/index.ts:3: entities imports store/inner.ts directly; import from store/index.ts',
      'src/entities/index.ts:4: entities imports hono, whose only home is http',
      'src/http/index.ts:1: http is an edge and edges never import store',
      'src/http/index.ts:2: http imports mqtt; http and mqtt never import each other',
      'src/lib/index.ts:1: lib imports ngsi; lib imports nothing of ours',
      'src/metrics/index.ts:1: module metrics is not in the layer table of scripts/check-deps.mjs',
      'src/mqtt/index.ts:1: mqtt imports node-cron, whose only home is jobs',
      'src/ngsi/index.ts:1: ngsi imports store, which sits above it; dependencies point down',
      'src/server.ts:1: server imports bench/run.ts, which is outside src/; the broker imports no tool code',
      'src/server.ts:2: server imports ui/view.ts, which is outside src/; the broker imports no tool code',
      "src/store/inner.ts:1: imports its own module's index.ts; files inside a module import each other directly",
    ]);
  });

  it('allows type-only imports of config outside lib, and value imports only in server.ts and main.ts', () => {
    expect(
      check({
        'config/index.ts': "export const c = 1;\n",
        'ngsi/index.ts': "import type { Config } from '../config/index.js';\n",
        'http/index.ts': "import { type Config } from '../config/index.js';\n",
        'main.ts': "import { loadConfig } from './config/index.js';\n",
      }),
    ).toEqual([]);
  });
});

describe('store readers', () => {
  it('lets temporal/ import only the read contracts of store/, so it cannot write past the write core', () => {
    const violations = check({
      'store/index.ts': "export const s = 1;\n",
      'temporal/read.ts': "import { readScopeOf, type HistoryReader, type StoreReader } from '../store/index.js';\n",
      'temporal/write.ts': [
        "import type { Store } from '../store/index.js';",
        "import { type HistoryRepository as H, type ReadScope } from '../store/index.js';",
        "export type { EntityRepository } from '../store/index.js';",
      ].join('\n'),
    });
    expect(violations).toEqual([
      'src/temporal/write.ts:1: temporal imports Store from store; it only reads the store (writes go through the write core)',
      'src/temporal/write.ts:2: temporal imports HistoryRepository from store; it only reads the store (writes go through the write core)',
      'src/temporal/write.ts:3: temporal imports EntityRepository from store; it only reads the store (writes go through the write core)',
    ]);
  });

  it('entities/ (the write core) may import the store whole', () => {
    expect(check({
      'store/index.ts': "export const s = 1;\n",
      'entities/write-core.ts': "import type { Store } from '../store/index.js';\n",
    })).toEqual([]);
  });
});

describe('src/', () => {
  it('has no dependency violations', () => {
    const src = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');
    expect(checkDeps(src).map(formatViolation)).toEqual([]);
  });
});
