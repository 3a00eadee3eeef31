#!/usr/bin/env node
// Enforces the dependency rules of STYLE.md "Shape" over src/ (the broker, and nothing else) by reading
// each file's imports: layers point down, modules are entered through their index.ts, each library has
// one home, and nothing in src/ imports the tools beside it (bench/, ui/, scripts/).

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Modules from bottom to top. A module may import modules of lower layers only. */
export const LAYERS = [
  ['lib'],
  ['ngsi', 'events'],
  ['store', 'jsonld', 'auth', 'config'],
  ['entities', 'temporal', 'subscriptions', 'registrations', 'federation', 'permissions', 'devices', 'commands', 'home-assistant'],
  ['http', 'mqtt', 'jobs'],
  ['server'],
  ['main'],
];

/** Imports allowed inside one layer, as [importer, imported]: change events carry domain types. */
export const SAME_LAYER_ALLOWED = [['events', 'ngsi']];

/** Packages that only some modules may import (any import form, type-only included). */
export const LIBRARY_HOMES = {
  hono: ['http'],
  '@hono/node-server': ['http'],
  aedes: ['mqtt'],
  'aedes-persistence': ['mqtt'],
  ws: ['mqtt'],
  // The mqtt client sends notifications to outside brokers and receives the federation downlink; the embedded broker is Aedes.
  mqtt: ['subscriptions', 'federation'],
  'better-sqlite3': ['store'],
  jsonld: ['jsonld'],
  jose: ['auth'],
  'node-cron': ['jobs'],
  'prom-client': ['http'],
  jsts: ['ngsi'],
  re2js: ['ngsi'],
  zod: ['config', 'http', 'mqtt', 'federation'],
};

/**
 * Modules that may only read the store: every write goes through the write core (entities/), which
 * journals it. They import from store only these read contracts (types, and the read scope).
 */
export const STORE_READERS = ['temporal'];
export const STORE_READ_CONTRACTS = [
  'ReadScope', 'readScopeOf', 'StoreReader', 'HistoryReader', 'HistorySeries', 'HistoryWindow', 'HistoryReadOptions',
  'HistoryAggregateOptions', 'TimedInstance', 'TimeOrder', 'TimeProperty', 'PeriodGrid', 'PeriodStats', 'HistoryInstance',
  'EntityListQuery',
  // Retention drops whole buckets of old history: housekeeping, not a change of any entity.
  'HistoryRetention', 'SeriesFilter',
  // Rollups summarize history already written (derived data, read back by aggregations): no change of any entity.
  'RollupRepository', 'RollupTier', 'ROLLUP_TIERS', 'TIER_MS',
  // The disk budget measures the database and drops whole history tables, as retention does; its daily
  // figures and its hold on writes are the store's housekeeping, not a change of any entity.
  'StorageUsage', 'DailyWritten', 'TierBytes',
];

const FEATURES = new Set(LAYERS[3]);
const EDGES = new Set(['http', 'mqtt']);
// Rule 4 of ARCHITECTURE.md: other modules import only the types of config.
const CONFIG_VALUE_IMPORTERS = new Set(['server', 'main']);
const LAYER_OF = new Map(LAYERS.flatMap((mods, layer) => mods.map((m) => [m, layer])));
const SOURCE_EXT = new Set(['.ts', '.mts', '.cts']);
const JS_TO_TS = { '.js': '.ts', '.mjs': '.mts', '.cjs': '.cts' };

const CLAUSE = String.raw`(?:[\w$]+\s*,\s*)?(?:\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+)`;
const STATIC_IMPORT = new RegExp(
  String.raw`(?:^|[;\n}])[ \t]*(import|export)\s+(type\s+)?(${CLAUSE})\s*from\s*(['"])([^'"\n]+)\4`,
  'g',
);
const SIDE_EFFECT_IMPORT = /(?:^|[;\n}])[ \t]*(import)\s*(['"])([^'"\n]+)\2/g;
const DYNAMIC_IMPORT = /\b(import)\s*\(\s*(['"])([^'"\n]+)\2\s*\)/g;

/**
 * Blanks out comments, keeping every newline so offsets still map to the same lines. Strings are kept
 * (import specifiers live in them); a quote string never spans lines, which bounds the damage of a
 * quote inside a regular expression literal.
 */
export function stripComments(text) {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      while (i < text.length && text[i] !== '\n') {
        out += ' ';
        i++;
      }
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < text.length && text[j] !== c && (c === '`' || text[j] !== '\n')) j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

function isTypeOnlyClause(typeKeyword, clause) {
  if (typeKeyword) return true;
  const braces = /^\{([^}]*)\}$/.exec(clause.trim());
  if (!braces) return false;
  const specifiers = braces[1].split(',').map((s) => s.trim()).filter(Boolean);
  return specifiers.length > 0 && specifiers.every((s) => /^type\s/.test(s));
}

function lineAt(text, offset) {
  let line = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Every import and re-export in a source text: `{ specifier, line, typeOnly }`. */
export function findImports(source) {
  const text = stripComments(source);
  const found = [];
  const keywordOffset = (m, keyword) => m.index + m[0].indexOf(keyword);
  for (const m of text.matchAll(STATIC_IMPORT)) {
    found.push({ specifier: m[5], line: lineAt(text, keywordOffset(m, m[1])), typeOnly: isTypeOnlyClause(m[2], m[3]) });
  }
  for (const re of [SIDE_EFFECT_IMPORT, DYNAMIC_IMPORT]) {
    for (const m of text.matchAll(re)) found.push({ specifier: m[3], line: lineAt(text, keywordOffset(m, m[1])), typeOnly: false });
  }
  return found.sort((a, b) => a.line - b.line);
}

/** The names a static import or re-export brings in (`*` for a namespace or `export *`). */
export function importedNames(source) {
  const text = stripComments(source);
  const out = [];
  for (const m of text.matchAll(STATIC_IMPORT)) {
    const clause = m[3].trim();
    const braces = /\{([^}]*)\}/.exec(clause);
    const names = braces
      ? braces[1].split(',').map((x) => x.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0].trim()).filter(Boolean)
      : ['*'];
    out.push({ specifier: m[5], line: lineAt(text, m.index + m[0].indexOf(m[1])), names });
  }
  return out;
}

function checkStoreReads(srcDir, file, from, source) {
  if (!STORE_READERS.includes(from)) return [];
  const found = [];
  for (const imp of importedNames(source)) {
    if (!imp.specifier.startsWith('.')) continue;
    const target = toSourcePath(file, imp.specifier);
    const rel = relative(srcDir, target);
    if (rel.startsWith('..') || moduleOf(srcDir, target) !== 'store') continue;
    for (const name of imp.names) {
      if (!STORE_READ_CONTRACTS.includes(name)) {
        found.push({ line: imp.line, message: `${from} imports ${name} from store; it only reads the store (writes go through the write core)` });
      }
    }
  }
  return found;
}

function listSources(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...listSources(path));
    else if (SOURCE_EXT.has(extname(entry.name)) && !entry.name.endsWith('.d.ts')) files.push(path);
  }
  return files.sort();
}

/** `src/http/app.ts` → `http`; `src/server.ts` → `server`. */
function moduleOf(srcDir, file) {
  const parts = relative(srcDir, file).split(sep);
  return parts.length === 1 ? parts[0].slice(0, -extname(parts[0]).length) : parts[0];
}

function isFileModule(srcDir, file) {
  return relative(srcDir, file).split(sep).length === 1;
}

function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function toSourcePath(fromFile, specifier) {
  const abs = resolve(dirname(fromFile), specifier);
  const ext = extname(abs);
  return ext in JS_TO_TS ? abs.slice(0, -ext.length) + JS_TO_TS[ext] : abs;
}

function checkPackageImport(from, imp) {
  if (imp.specifier.startsWith('node:')) return undefined;
  const name = packageName(imp.specifier);
  const homes = LIBRARY_HOMES[name];
  if (!homes || homes.includes(from)) return undefined;
  return `${from} imports ${name}, whose only home is ${homes.join(', ')}`;
}

function checkLayers(from, to, imp) {
  if (from === 'lib') return `lib imports ${to}; lib imports nothing of ours`;
  if (to === 'config') {
    if (imp.typeOnly || CONFIG_VALUE_IMPORTERS.has(from)) return undefined;
    return `${from} imports values from config; other modules import only its types (use \`import type\`)`;
  }
  if (EDGES.has(from) && to === 'store') return `${from} is an edge and edges never import store`;
  const fromLayer = LAYER_OF.get(from);
  const toLayer = LAYER_OF.get(to);
  if (toLayer < fromLayer) return undefined;
  if (toLayer > fromLayer) return `${from} imports ${to}, which sits above it; dependencies point down`;
  if (SAME_LAYER_ALLOWED.some(([a, b]) => a === from && b === to)) return undefined;
  if (FEATURES.has(from)) return `${from} imports ${to}; features never import each other (listen to ChangeEvents)`;
  if (EDGES.has(from) && EDGES.has(to)) return `${from} imports ${to}; http and mqtt never import each other`;
  return `${from} imports ${to}, which sits in the same layer; dependencies point down`;
}

function checkModuleImport(srcDir, file, from, imp) {
  const target = toSourcePath(file, imp.specifier);
  const rel = relative(srcDir, target);
  if (rel.startsWith('..') || rel === '') {
    // src/ is the broker alone: code outside it (bench/, ui/, scripts/) is tools, never imported.
    // Data files outside it (bundled contexts) are fine.
    if (!SOURCE_EXT.has(extname(target))) return undefined;
    return `${from} imports ${relative(dirname(srcDir), target)}, which is outside src/; the broker imports no tool code`;
  }
  const to = moduleOf(srcDir, target);
  const entry = isFileModule(srcDir, target) ? target : join(srcDir, to, 'index.ts');
  if (to === from) {
    if (!isFileModule(srcDir, file) && target === entry && file !== entry) {
      return `imports its own module's index.ts; files inside a module import each other directly`;
    }
    return undefined;
  }
  if (!LAYER_OF.has(to)) return undefined; // reported once as an unknown module
  if (target !== entry) {
    return `${from} imports ${relative(srcDir, target)} directly; import from ${relative(srcDir, entry)}`;
  }
  return checkLayers(from, to, imp);
}

/**
 * Checks every source file under `srcDir`. Returns the violations, each `{ file, line, message }` with
 * `file` relative to the parent of `srcDir` (so it reads `src/http/app.ts`).
 */
export function checkDeps(srcDir) {
  const root = resolve(srcDir);
  const base = dirname(root);
  const violations = [];
  const reportedUnknown = new Set();
  for (const file of listSources(root)) {
    const from = moduleOf(root, file);
    const shown = relative(base, file);
    if (!LAYER_OF.has(from)) {
      if (!reportedUnknown.has(from)) {
        violations.push({ file: shown, line: 1, message: `module ${from} is not in the layer table of scripts/check-deps.mjs` });
        reportedUnknown.add(from);
      }
      continue;
    }
    const source = readFileSync(file, 'utf8');
    for (const v of checkStoreReads(root, file, from, source)) violations.push({ file: shown, ...v });
    for (const imp of findImports(source)) {
      const isRelative = imp.specifier.startsWith('.') || imp.specifier.startsWith('/');
      const message = isRelative ? checkModuleImport(root, file, from, imp) : checkPackageImport(from, imp);
      if (message) violations.push({ file: shown, line: imp.line, message });
    }
  }
  return violations;
}

/** `src/http/app.ts:9: message` */
export function formatViolation(v) {
  return `${v.file}:${v.line}: ${v.message}`;
}

function main() {
  const here = dirname(fileURLToPath(import.meta.url));
  const srcDir = process.argv[2] ?? join(here, '..', 'src');
  const violations = checkDeps(srcDir);
  for (const v of violations) process.stdout.write(formatViolation(v) + '\n');
  if (violations.length > 0) {
    process.stdout.write(`check-deps: ${violations.length} violation${violations.length === 1 ? '' : 's'}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write('check-deps: no violations\n');
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
