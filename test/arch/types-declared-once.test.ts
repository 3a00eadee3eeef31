// Each exported interface and type alias is declared once in src/: a contract shared by two modules
// lives in the lower one (or in lib, when neither may import the other) and is imported where needed.

import { parse } from '@babel/parser';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { typeScriptSources, writeTree } from '../helpers/sources.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** The interfaces and type aliases a file declares and exports, with their lines. */
function exportedTypes(text: string): Array<{ name: string; line: number }> {
  const body = parse(text, { sourceType: 'module', plugins: ['typescript'] }).program.body;
  const local = new Map<string, number>();
  const found: Array<{ name: string; line: number }> = [];
  for (const node of body) {
    if (node.type === 'TSInterfaceDeclaration' || node.type === 'TSTypeAliasDeclaration') {
      local.set(node.id.name, node.loc?.start.line ?? 0);
    }
    if (node.type !== 'ExportNamedDeclaration') continue;
    const d = node.declaration;
    if (d && (d.type === 'TSInterfaceDeclaration' || d.type === 'TSTypeAliasDeclaration')) {
      found.push({ name: d.id.name, line: d.loc?.start.line ?? 0 });
    }
  }
  // `interface X {}` then `export type { X }` (no source): declared here too.
  for (const node of body) {
    if (node.type !== 'ExportNamedDeclaration' || node.source) continue;
    for (const s of node.specifiers) {
      if (s.type !== 'ExportSpecifier' || s.local.type !== 'Identifier') continue;
      const line = local.get(s.local.name);
      if (line !== undefined) found.push({ name: s.exported.type === 'Identifier' ? s.exported.name : s.exported.value, line });
    }
  }
  return found;
}

/** Names exported as interfaces or type aliases by more than one file under `srcDir`, with where. */
function duplicateTypes(srcDir: string): string[] {
  const where = new Map<string, string[]>();
  for (const file of typeScriptSources(srcDir)) {
    for (const { name, line } of exportedTypes(readFileSync(file, 'utf8'))) {
      where.set(name, [...(where.get(name) ?? []), `${relative(srcDir, file).split(sep).join('/')}:${line}`]);
    }
  }
  return [...where].filter(([, at]) => at.length > 1).map(([name, at]) => `${name}: ${at.join(', ')}`).sort();
}

describe('exported types declared once', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'edgeld-types-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  function tree(files: Record<string, string>): string {
    return writeTree(join(root, 'src'), files);
  }

  it('reports an interface or type alias exported by two files, however it is exported', () => {
    const src = tree({
      'jsonld/types.ts': 'export interface PersistedContext {\n  id: string;\n}\nexport type Kind = string;\n',
      'store/types.ts': '// store\ninterface PersistedContext {\n  id: string;\n}\nexport type { PersistedContext };\n',
      'store/kinds.ts': "export type Kind = 'a' | 'b';\n",
      'auth/user.ts': 'interface Kind {}\nexport interface User {}\n',
      'auth/index.ts': "export type { User } from './user.js';\nexport type { PersistedContext } from '../store/types.js';\n",
    });
    expect(duplicateTypes(src)).toEqual([
      'Kind: jsonld/types.ts:4, store/kinds.ts:1',
      'PersistedContext: jsonld/types.ts:1, store/types.ts:2',
    ]);
  });

  it('accepts one declaration imported and re-exported elsewhere', () => {
    const src = tree({
      'lib/records.ts': 'export interface Rec {\n  id: string;\n}\n',
      'store/types.ts': "import type { Rec } from '../lib/records.js';\nexport type { Rec };\nexport type Recs = Rec[];\n",
      'mqtt/index.ts': "export type { Rec } from '../lib/records.js';\n",
    });
    expect(duplicateTypes(src)).toEqual([]);
  });

  it('holds for src/', () => {
    expect(duplicateTypes(SRC)).toEqual([]);
  });
});
