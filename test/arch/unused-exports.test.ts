// Every value a src/ file exports is imported by another file of src/, test/, bench/, ui/ or scripts/:
// an export nobody imports is dead code, or a name that should not be exported. Read with
// @babel/parser from each file's import and export declarations; `export *` uses every name.
// Exported types are left out: they name the parameters and results of exported signatures (a
// module's index re-exports its factories' Deps and results), and cost nothing at run time.

import { parse } from '@babel/parser';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');
/** Where imports of src/ names may come from. */
const IMPORTERS = ['src', 'test', 'bench', 'ui', 'scripts'];
const SOURCE = /\.(ts|mts|cts|mjs|js)$/;
const JS_TO_TS: Record<string, string> = { '.js': '.ts', '.mjs': '.mts', '.cjs': '.cts' };

/** Exports no other file imports that stay, as `path under src/: name`, each with its reason. */
const ALLOWED = new Set<string>([
  // TODO: store/, subscriptions/, federation/ and mqtt/ are being reorganised on other branches; these
  // unused exports go once that work has landed, and this list with them.
  'federation/bodies.ts: INSTANCES_PER_REQUEST',
  'federation/index.ts: UpstreamError',
  'mqtt/index.ts: createAnonymousHooks',
  'mqtt/index.ts: deviceSubject',
  'mqtt/index.ts: isPublishTopic',
  'mqtt/index.ts: parseMeasurementTopic',
  'subscriptions/index.ts: DEFAULT_TRIGGERS',
  'subscriptions/index.ts: ENDPOINT_SCHEMES',
  'subscriptions/index.ts: MqttEndpointError',
  'subscriptions/index.ts: MqttSendError',
  'subscriptions/index.ts: NOTIFICATION_ACCEPTS',
  'subscriptions/index.ts: NOTIFICATION_FORMATS',
  'subscriptions/index.ts: NOTIFICATION_TRIGGERS',
  'subscriptions/index.ts: NOTIFIER_READER',
  'subscriptions/index.ts: checkSubscription',
  'subscriptions/index.ts: matchesEntity',
  'subscriptions/index.ts: parseMqttEndpoint',
  'subscriptions/index.ts: patchSubscription',
  'subscriptions/index.ts: renderOptionsOf',
  'subscriptions/index.ts: statusOf',
  'subscriptions/index.ts: triggersOf',
  'subscriptions/index.ts: typeSelectionText',
  'subscriptions/notifier.ts: asWritten',
  'subscriptions/parse-members.ts: parseEndpoint',
  'subscriptions/parse-members.ts: parseName',
  'subscriptions/parse-members.ts: withinMember',
  'subscriptions/triggers.ts: isSameJson',
]);

const TYPE_DECLARATIONS = new Set(['TSInterfaceDeclaration', 'TSTypeAliasDeclaration']);

type Program = ReturnType<typeof parse>['program'];
type Statement = Program['body'][number];

interface Exported {
  readonly line: number;
  /** `type` for interfaces, type aliases and `export type`; classes and enums are values. */
  readonly kind: 'value' | 'type';
}

interface FileFacts {
  /** Names the file exports itself (declarations, `export { a }`, `export { a } from`). */
  readonly exports: Map<string, Exported>;
  /** Per imported file: the names used, or `*` for all of them. */
  readonly uses: Map<string, Set<string>>;
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && SOURCE.test(e.name) && !e.parentPath.split(sep).includes('fixtures'))
    .map((e) => join(e.parentPath, e.name));
}

/** The source file an import specifier names: `.js` → `.ts`, and dist/ (compiled) → src/. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  let target = resolve(dirname(from), specifier);
  const ext = extname(target);
  const ts = JS_TO_TS[ext];
  if (ts !== undefined && !existsSync(target)) target = target.slice(0, -ext.length) + ts;
  if (target.startsWith(DIST + sep)) target = join(SRC, relative(DIST, target)).replace(/\.js$/, '.ts');
  return target;
}

function nameOf(node: { type: string; name?: string; value?: string }): string {
  // An export or import name is an Identifier or, in `export { x as 'y' }`, a StringLiteral.
  return node.type === 'StringLiteral' ? String(node.value) : String(node.name);
}

type Declaration = NonNullable<Extract<Statement, { type: 'ExportNamedDeclaration' }>['declaration']>;

/** The names a declaration after `export` binds; a destructuring export fails the test, to be taught here. */
function declaredNames(decl: Declaration): string[] {
  switch (decl.type) {
    case 'VariableDeclaration':
      return decl.declarations.map((d) => {
        if (d.id.type !== 'Identifier') throw new Error(`export of a ${d.id.type} at line ${d.loc?.start.line}: not read`);
        return d.id.name;
      });
    case 'TSModuleDeclaration':
      return decl.id.type === 'Identifier' ? [decl.id.name] : [];
    default:
      return 'id' in decl && decl.id && 'name' in decl.id ? [String(decl.id.name)] : [];
  }
}

/** Any node of Babel's tree, read by member name: the walk below meets every kind of node. */
type AnyNode = { readonly type: string; readonly [member: string]: unknown };

const isNode = (x: unknown): x is AnyNode => typeof x === 'object' && x !== null && 'type' in x && typeof x.type === 'string';

/** The text of a string literal node. */
const stringOf = (x: unknown): string | undefined =>
  isNode(x) && x.type === 'StringLiteral' && typeof x['value'] === 'string' ? x['value'] : undefined;

/**
 * Visits every node under `node` (dynamic `import()` and `import('x').T` types hide in expressions),
 * but not below a node for which `visit` returns true (it has read that part).
 */
function walk(node: unknown, visit: (n: AnyNode) => boolean): void {
  if (Array.isArray(node)) {
    for (const n of node) walk(n, visit);
    return;
  }
  if (!isNode(node) || visit(node)) return;
  for (const value of Object.values(node)) if (typeof value === 'object' && value !== null) walk(value, visit);
}

/** The specifier of `import('x')`, undefined for any other node or a computed specifier. */
function importedBy(n: unknown): string | undefined {
  if (!isNode(n)) return undefined;
  if (n.type === 'AwaitExpression') return importedBy(n['argument']);
  if (n.type === 'ImportExpression') return stringOf(n['source']);
  if (n.type !== 'CallExpression' || !isNode(n['callee']) || n['callee'].type !== 'Import') return undefined;
  const args = n['arguments'];
  return Array.isArray(args) ? stringOf(args[0]) : undefined;
}

/** The names `const { a, b } = await import('x')` takes; every name (`*`) for any other pattern. */
function destructured(id: unknown): string[] {
  if (!isNode(id) || id.type !== 'ObjectPattern' || !Array.isArray(id['properties'])) return ['*'];
  const names = id['properties'].map((p: unknown) =>
    isNode(p) && p.type === 'ObjectProperty' && isNode(p['key']) && typeof p['key']['name'] === 'string' ? p['key']['name'] : '*');
  return names.includes('*') ? ['*'] : names;
}

/**
 * The specifier and the names a dynamic import or an `import('x').T` type uses, for the node where
 * it is best read: a declarator that destructures the import names what it takes.
 */
function dynamicUse(n: AnyNode): { specifier: string; names: string[] } | undefined {
  if (n.type === 'VariableDeclarator') {
    const specifier = importedBy(n['init']);
    return specifier === undefined ? undefined : { specifier, names: destructured(n['id']) };
  }
  if (n.type === 'TSImportType') {
    const arg = n['argument'];
    const q = n['qualifier'];
    const specifier = stringOf(arg) ?? (isNode(arg) ? stringOf(arg['literal']) : undefined);
    const name = isNode(q) && q.type === 'Identifier' && typeof q['name'] === 'string' ? q['name'] : '*';
    return specifier === undefined ? undefined : { specifier, names: [name] };
  }
  const specifier = importedBy(n);
  return specifier === undefined ? undefined : { specifier, names: ['*'] };
}

function readFacts(file: string): FileFacts {
  const text = readFileSync(file, 'utf8');
  const program = parse(text, {
    sourceType: 'module', plugins: [['typescript', { dts: /\.d\.m?ts$/.test(file) }]], allowAwaitOutsideFunction: true,
    sourceFilename: relative(ROOT, file),
  }).program;
  const exports = new Map<string, Exported>();
  const uses = new Map<string, Set<string>>();
  const use = (specifier: string, names: readonly string[]): void => {
    const target = resolveSpecifier(file, specifier);
    if (target === undefined) return;
    const set = uses.get(target) ?? new Set<string>();
    for (const n of names) set.add(n);
    uses.set(target, set);
  };
  for (const node of program.body) {
    const line = node.loc?.start.line ?? 0;
    switch (node.type) {
      case 'ImportDeclaration':
        use(node.source.value, node.specifiers.map((s) =>
          s.type === 'ImportSpecifier' ? nameOf(s.imported) : s.type === 'ImportDefaultSpecifier' ? 'default' : '*'));
        break;
      case 'ExportAllDeclaration':
        use(node.source.value, ['*']);
        break;
      case 'ExportDefaultDeclaration':
        exports.set('default', { line, kind: 'value' });
        break;
      case 'ExportNamedDeclaration':
        if (node.declaration) {
          const kind = TYPE_DECLARATIONS.has(node.declaration.type) || (node.declaration.type === 'TSModuleDeclaration' && node.declaration.declare === true) ? 'type' : 'value';
          for (const n of declaredNames(node.declaration)) exports.set(n, { line, kind });
        }
        for (const s of node.specifiers) {
          const kind = node.exportKind === 'type' || (s.type === 'ExportSpecifier' && s.exportKind === 'type') ? 'type' : 'value';
          exports.set(nameOf(s.exported), { line, kind });
          if (node.source) use(node.source.value, [s.type === 'ExportSpecifier' ? nameOf(s.local) : '*']);
        }
        break;
      default:
        break;
    }
  }
  // Dynamic imports and `import('x').T` types: walked for only where the text has some.
  if (text.includes('import(')) {
    walk(program.body, (n) => {
      const found = dynamicUse(n);
      if (found !== undefined) use(found.specifier, found.names);
      return found !== undefined;
    });
  }
  return { exports, uses };
}

/** `path: name (line n)` for each value a src/ file exports and no other file imports. */
function unusedExports(): string[] {
  const files = IMPORTERS.flatMap((d) => listFiles(join(ROOT, d)));
  const facts = new Map(files.map((f) => [f, readFacts(f)]));
  const used = new Map<string, Set<string>>();
  for (const [file, f] of facts) {
    for (const [target, names] of f.uses) {
      if (target === file) continue;
      const set = used.get(target) ?? new Set<string>();
      for (const n of names) set.add(n);
      used.set(target, set);
    }
  }
  const found: string[] = [];
  for (const [file, f] of facts) {
    if (!file.startsWith(SRC + sep)) continue;
    const names = used.get(file);
    if (names?.has('*')) continue;
    for (const [name, { line, kind }] of f.exports) {
      const key = `${relative(SRC, file).split(sep).join('/')}: ${name}`;
      if (kind === 'value' && !names?.has(name) && !ALLOWED.has(key)) found.push(`${key} (line ${line})`);
    }
  }
  return found.sort();
}

describe('exports of src/', () => {
  it('are each imported by another file', () => {
    expect(unusedExports()).toEqual([]);
  });
});
