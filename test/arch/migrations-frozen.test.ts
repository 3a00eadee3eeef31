// Migrations are frozen history: a file under src/store/migrations/ imports only node builtins, the
// types of better-sqlite3 and other files of that folder, so no change to live store code can change
// what an old database is migrated into.

import { builtinModules } from 'node:module';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { typeScriptSources, writeTree } from '../helpers/sources.js';
import { findImports } from '../../scripts/check-deps.mjs';

const MIGRATIONS = fileURLToPath(new URL('../../src/store/migrations', import.meta.url));
const BUILTINS = new Set(builtinModules);

function isAllowed(dir: string, file: string, imp: { specifier: string; typeOnly: boolean }): boolean {
  const { specifier } = imp;
  if (specifier.startsWith('node:') || BUILTINS.has(specifier)) return true;
  if (specifier === 'better-sqlite3') return imp.typeOnly;
  if (!specifier.startsWith('.')) return false;
  const inside = relative(dir, resolve(dirname(file), specifier));
  return inside !== '' && !inside.startsWith('..') && !inside.startsWith(sep);
}

/** Every import of a file under `dir` that reaches outside it, as `file:line: specifier`. */
function checkFrozen(dir: string): string[] {
  const found: string[] = [];
  for (const file of typeScriptSources(dir)) {
    for (const imp of findImports(readFileSync(file, 'utf8')) as Array<{ specifier: string; line: number; typeOnly: boolean }>) {
      if (!isAllowed(dir, file, imp)) found.push(`${relative(dir, file)}:${imp.line}: ${imp.specifier}`);
    }
  }
  return found;
}

describe('frozen migrations', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'edgeld-frozen-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  function tree(files: Record<string, string>): string {
    writeTree(root, files);
    return join(root, 'migrations');
  }

  it('reports a migration importing live store code, another module, a package or better-sqlite3 values', () => {
    const dir = tree({
      'migrations/migration-002-geo.ts': [
        "import type BetterSqlite3 from 'better-sqlite3';",
        "import { geoShapeRows } from '../entities/geo-index.js';",
        "import type { Logger } from '../../lib/index.js';",
      ].join('\n'),
      'migrations/migration-003-x.ts': "import Database from 'better-sqlite3';\nimport { z } from 'zod';\n",
      'entities/geo-index.ts': 'export const geoShapeRows = 1;\n',
    });
    expect(checkFrozen(dir)).toEqual([
      'migration-002-geo.ts:2: ../entities/geo-index.js',
      'migration-002-geo.ts:3: ../../lib/index.js',
      'migration-003-x.ts:1: better-sqlite3',
      'migration-003-x.ts:2: zod',
    ]);
  });

  it('accepts node builtins, better-sqlite3 types and files of the migrations folder', () => {
    const dir = tree({
      'migrations/migrations.ts': [
        "import type BetterSqlite3 from 'better-sqlite3';",
        "import { createHash } from 'node:crypto';",
        "import { join } from 'path';",
        "import { up } from './migration-002-geo.js';",
        "import { bounds } from './frozen/bounds.js';",
      ].join('\n'),
      'migrations/frozen/bounds.ts': "import { up } from '../migration-002-geo.js';\n",
      'migrations/migration-002-geo.ts': 'export function up(): void {}\n',
    });
    expect(checkFrozen(dir)).toEqual([]);
  });

  it('holds for src/store/migrations', () => {
    expect(typeScriptSources(MIGRATIONS).length).toBeGreaterThan(16);
    expect(checkFrozen(MIGRATIONS)).toEqual([]);
  });
});
