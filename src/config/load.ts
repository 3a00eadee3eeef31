// Builds the Config from its sources, later wins: defaults ← config file (JSON) ← environment.
// The only place that reads process.env, process.argv or the config file; private key files it
// names are checked for their mode.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, type ConfigIssue } from './errors.js';
import { CONFIG_OPTIONS, toKebab, type ConfigOption } from './options.js';
import { privateFileIssues } from './private-files.js';
import { configSchema, type Config } from './schema.js';

export type Environment = Readonly<Record<string, string | undefined>>;

export interface LoadConfigInput {
  /** Command-line arguments; `--config <path>` names the config file. Defaults to `process.argv`. */
  readonly argv?: readonly string[];
  /** Environment variables; `EDGELD_CONFIG` also names the config file. Defaults to `process.env`. */
  readonly env?: Environment;
}

/** Environment variable naming the config file when `--config` is absent. */
const CONFIG_FILE_ENV = 'EDGELD_CONFIG';

interface SourcedValue {
  readonly value: unknown;
  readonly source: string;
}

type Coerced = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string };

const OPTIONS_BY_NAME = new Map(CONFIG_OPTIONS.map((o) => [o.name, o]));
const OPTIONS_BY_PATH = new Map(CONFIG_OPTIONS.map((o) => [o.path.join('.'), o]));
const GROUPS = new Set(CONFIG_OPTIONS.flatMap((o) => groupsOf(o.name)));
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** `application.authentication.enabled` → `application`, `application.authentication`. */
function groupsOf(name: string): string[] {
  const parts = name.split('.');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('.'));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function findConfigFile(argv: readonly string[], env: Environment, issues: ConfigIssue[]): { path: string; source: string } | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--config') {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) {
        issues.push({ option: 'config file', source: 'argv --config', message: 'expected a path after --config' });
        return undefined;
      }
      return { path: resolve(next), source: 'argv --config' };
    }
    if (arg?.startsWith('--config=')) return { path: resolve(arg.slice('--config='.length)), source: 'argv --config' };
  }
  const fromEnv = env[CONFIG_FILE_ENV];
  if (fromEnv) return { path: resolve(fromEnv), source: `env ${CONFIG_FILE_ENV}` };
  return undefined;
}

function unknownKeyMessage(name: string): string {
  const kebab = name.split('.').map(toKebab).join('.');
  if (kebab !== name && (OPTIONS_BY_NAME.has(kebab) || GROUPS.has(kebab))) return `unknown option; did you mean "${kebab}"?`;
  return 'unknown option';
}

// Accepts nested groups (`{"server":{"port":1}}`), dotted keys (`{"server.port":1}`) and any mix.
function collectFileValues(
  obj: Record<string, unknown>,
  prefix: string,
  source: string,
  values: Map<string, SourcedValue>,
  issues: ConfigIssue[],
): void {
  for (const [key, value] of Object.entries(obj)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (OPTIONS_BY_NAME.has(name)) {
      if (values.has(name)) issues.push({ option: name, source, message: 'set more than once in the file' });
      else values.set(name, { value, source });
    } else if (GROUPS.has(name)) {
      if (isRecord(value)) collectFileValues(value, name, source, values, issues);
      else issues.push({ option: name, source, message: `expected an object holding ${name}.* options` });
    } else {
      issues.push({ option: name, source, message: unknownKeyMessage(name) });
    }
  }
}

function readConfigFile(path: string, pathSource: string, values: Map<string, SourcedValue>, issues: ConfigIssue[]): void {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = err instanceof Error && 'code' in err ? String(err.code) : '';
    const reason = code === 'ENOENT' ? 'file not found' : `cannot read file (${code || String(err)})`;
    issues.push({ option: 'config file', source: pathSource, message: `${path}: ${reason}` });
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    issues.push({ option: 'config file', source: pathSource, message: `${path}: not valid JSON (${reason})` });
    return;
  }
  if (!isRecord(parsed)) {
    issues.push({ option: 'config file', source: pathSource, message: `${path}: expected a JSON object` });
    return;
  }
  collectFileValues(parsed, '', `file ${path}`, values, issues);
}

// Environment values are strings; turn them into what the schema expects before it validates them.
function coerceEnvValue(option: ConfigOption, raw: string): Coerced {
  const text = raw.trim();
  switch (option.kind) {
    case 'integer':
    case 'number':
      return NUMBER_TEXT.test(text) ? { ok: true, value: Number(text) } : { ok: false, message: `expected ${option.kind === 'integer' ? 'an integer' : 'a number'}` };
    case 'boolean': {
      const lower = text.toLowerCase();
      if (lower === 'true' || lower === '1') return { ok: true, value: true };
      if (lower === 'false' || lower === '0') return { ok: true, value: false };
      return { ok: false, message: 'expected true, false, 1 or 0' };
    }
    case 'enum': {
      const lower = text.toLowerCase();
      return { ok: true, value: option.values.includes(lower) ? lower : text };
    }
    case 'string':
      return { ok: true, value: raw };
  }
}

function collectEnvValues(env: Environment, values: Map<string, SourcedValue>, issues: ConfigIssue[]): void {
  for (const option of CONFIG_OPTIONS) {
    const raw = env[option.env];
    // NOTE: an empty variable counts as unset; env files and compose templates often produce `NAME=`.
    if (raw === undefined || raw.trim() === '') continue;
    const source = `env ${option.env}`;
    const coerced = coerceEnvValue(option, raw);
    if (coerced.ok) values.set(option.name, { value: coerced.value, source });
    else {
      values.delete(option.name);
      issues.push({ option: option.name, source, message: coerced.message });
    }
  }
}

function toNestedInput(values: ReadonlyMap<string, SourcedValue>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [name, { value }] of values) {
    const option = OPTIONS_BY_NAME.get(name);
    if (!option) continue;
    let node = root;
    for (const key of option.path.slice(0, -1)) {
      const child = node[key];
      const next = isRecord(child) ? child : {};
      node[key] = next;
      node = next;
    }
    const leaf = option.path.at(-1);
    if (leaf !== undefined) node[leaf] = value;
  }
  return root;
}

/**
 * Loads the configuration from defaults, the config file named by `--config` or `EDGELD_CONFIG`,
 * and environment variables. Throws a ConfigError listing every bad option.
 */
export function loadConfig(input: LoadConfigInput = {}): Config {
  const argv = input.argv ?? process.argv.slice(2);
  const env = input.env ?? process.env;
  const issues: ConfigIssue[] = [];
  const values = new Map<string, SourcedValue>();

  const file = findConfigFile(argv, env, issues);
  if (file) readConfigFile(file.path, file.source, values, issues);
  collectEnvValues(env, values, issues);

  const result = configSchema.safeParse(toNestedInput(values));
  if (result.success) issues.push(...privateFileIssues(result.data, (name) => values.get(name)?.source ?? ''));
  if (result.success && issues.length === 0) return result.data;
  if (!result.success) {
    for (const issue of result.error.issues) {
      const option = OPTIONS_BY_PATH.get(issue.path.map(String).join('.'));
      const name = option?.name ?? (issue.path.map((p) => toKebab(String(p))).join('.') || 'config');
      issues.push({ option: name, source: values.get(name)?.source ?? '', message: issue.message });
    }
  }
  throw new ConfigError(issues, result.success ? {} : { cause: result.error });
}
