// No function of src/ spans more than 100 lines: every function, method, arrow and function
// expression, nested or not, is measured from its first to its last line.

import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from '@babel/parser';
import { describe, expect, it } from 'vitest';
import { typeScriptSources } from '../helpers/sources.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const MAX_LINES = 100;

const FUNCTION_TYPES = new Set([
  'FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression',
  'ObjectMethod', 'ClassMethod', 'ClassPrivateMethod',
]);

/** The parts of a Babel node this test reads. */
interface Node {
  type: string;
  loc?: { start: { line: number }; end: { line: number } } | null;
  [key: string]: unknown;
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/** A readable name for a key or a target: `name`, `#name`, `a.b`, or `[computed]`. */
function nameOf(node: unknown): string | undefined {
  if (!isNode(node)) return undefined;
  switch (node.type) {
    case 'Identifier': return node.name as string;
    case 'PrivateName': return `#${nameOf(node.id) ?? ''}`;
    case 'StringLiteral': case 'NumericLiteral': return String(node.value);
    case 'MemberExpression': return `${nameOf(node.object) ?? '?'}.${nameOf(node.property) ?? '?'}`;
    case 'ThisExpression': return 'this';
    default: return undefined;
  }
}

/** The function's own name, else the name of what it is assigned to or passed to. */
function functionName(fn: Node, parent: Node | undefined): string {
  const own = nameOf(fn.id) ?? (fn.type.endsWith('Method') ? nameOf(fn.key) : undefined);
  if (own !== undefined) return own;
  if (parent === undefined) return '<anonymous>';
  switch (parent.type) {
    case 'VariableDeclarator': return nameOf(parent.id) ?? '<anonymous>';
    case 'ObjectProperty': case 'ClassProperty': case 'ClassPrivateProperty':
      return nameOf(parent.key) ?? '<anonymous>';
    case 'AssignmentExpression': return nameOf(parent.left) ?? '<anonymous>';
    case 'CallExpression': case 'NewExpression': return `<callback of ${nameOf(parent.callee) ?? 'call'}>`;
    default: return '<anonymous>';
  }
}

/** `file:line name (N lines)` for every function of `source` longer than `max` lines. */
function longFunctions(source: string, file: string, max = MAX_LINES): string[] {
  const ast = parse(source, { sourceType: 'module', plugins: ['typescript'] });
  const found: string[] = [];
  const visit = (node: Node, parent: Node | undefined): void => {
    if (FUNCTION_TYPES.has(node.type) && node.loc) {
      const lines = node.loc.end.line - node.loc.start.line + 1;
      if (lines > max) found.push(`${file}:${node.loc.start.line} ${functionName(node, parent)} (${lines} lines)`);
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'loc' || key === 'leadingComments' || key === 'trailingComments' || key === 'innerComments') continue;
      if (Array.isArray(value)) {
        for (const child of value) if (isNode(child)) visit(child, node);
      } else if (isNode(value)) {
        visit(value, node);
      }
    }
  };
  visit(ast.program as unknown as Node, undefined); // NOTE: Babel's File/Program types are wider than Node.
  return found;
}

/** `lines` numbered filler statements. */
function body(lines: number): string {
  return Array.from({ length: lines }, (_, i) => `    const v${i} = ${i};`).join('\n');
}

describe('function size', () => {
  it(`finds a long arrow nested in an object literal and a long method`, () => {
    const source = [
      'export function make() {',                        // 1
      '  return {',                                       // 2
      '    handler: (x: number): number => {',            // 3
      body(MAX_LINES),                                    // 4 .. 103
      '      return x;',                                  // 104
      '    },',                                           // 105
      '  };',
      '}',
      'export class Box {',                               // 108
      '  open(): void {',                                 // 109
      body(MAX_LINES - 1),                                // 110 .. 208
      '  }',                                              // 209
      '  close(): void {',
      body(MAX_LINES - 2),
      '  }',
      '}',
    ].join('\n');
    expect(longFunctions(source, 'x.ts')).toEqual([
      'x.ts:1 make (107 lines)',
      'x.ts:3 handler (103 lines)',
      'x.ts:109 open (101 lines)',
    ]);
  });

  it(`keeps every function in src/ within ${MAX_LINES} lines`, () => {
    const found = typeScriptSources(SRC).flatMap((file) => longFunctions(readFileSync(file, 'utf8'), relative(SRC, file)));
    expect(found, `functions over ${MAX_LINES} lines:\n${found.join('\n')}`).toEqual([]);
  });
});
