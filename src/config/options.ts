// The table of every configuration option (dotted name, environment variable, default, description),
// derived from the schema so the two cannot drift; the option table of docs/configuration.md is checked against it.

import { z } from 'zod';
import { configSchema } from './schema.js';

export type OptionKind = 'integer' | 'number' | 'string' | 'boolean' | 'enum';
export type OptionValue = string | number | boolean;

export interface ConfigOption {
  /** Dotted kebab-case name, as written in the config file: `server.shutdown-timeout`. */
  readonly name: string;
  /** Environment variable: `SERVER_SHUTDOWN_TIMEOUT`. */
  readonly env: string;
  /** Keys of the option in the parsed `Config`: `['server', 'shutdownTimeout']`. */
  readonly path: readonly string[];
  readonly kind: OptionKind;
  /** Allowed values of an enum option; empty for other kinds. */
  readonly values: readonly string[];
  readonly default: OptionValue;
  readonly description: string;
}

/** `shutdownTimeout` → `shutdown-timeout`. */
export function toKebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** `server.shutdown-timeout` → `SERVER_SHUTDOWN_TIMEOUT`. */
function toEnvName(name: string): string {
  return name.toUpperCase().replace(/[.-]/g, '_');
}

function describeLeaf(schema: z.ZodDefault, path: readonly string[]): ConfigOption {
  const name = path.map(toKebab).join('.');
  const inner = schema.unwrap();
  const fallback: unknown = schema.def.defaultValue;
  if (typeof fallback !== 'string' && typeof fallback !== 'number' && typeof fallback !== 'boolean') {
    throw new Error(`config option ${name}: default must be a string, number or boolean`);
  }
  let kind: OptionKind;
  let values: readonly string[] = [];
  if (inner instanceof z.ZodEnum) {
    kind = 'enum';
    values = inner.options.map(String);
  } else if (inner instanceof z.ZodNumber) {
    kind = inner.format === 'safeint' || inner.format === 'int32' ? 'integer' : 'number';
  } else if (inner instanceof z.ZodBoolean) {
    kind = 'boolean';
  } else if (inner instanceof z.ZodString) {
    kind = 'string';
  } else {
    throw new Error(`config option ${name}: unsupported schema type ${inner._zod.def.type}`);
  }
  return {
    name,
    env: toEnvName(name),
    path,
    kind,
    values,
    default: fallback,
    description: schema.description ?? '',
  };
}

function collectOptions(schema: z.core.$ZodType, path: readonly string[], out: ConfigOption[]): void {
  if (schema instanceof z.ZodPrefault) {
    collectOptions(schema.unwrap(), path, out);
  } else if (schema instanceof z.ZodObject) {
    for (const [key, child] of Object.entries(schema.shape)) collectOptions(child, [...path, key], out);
  } else if (schema instanceof z.ZodDefault) {
    out.push(describeLeaf(schema, path));
  } else {
    throw new Error(`config option ${path.map(toKebab).join('.')}: every option needs a default`);
  }
}

function buildOptions(): readonly ConfigOption[] {
  const out: ConfigOption[] = [];
  collectOptions(configSchema, [], out);
  const envNames = new Set(out.map((o) => o.env));
  if (envNames.size !== out.length) throw new Error('two config options map to the same environment variable');
  return Object.freeze(out);
}

/** Every configuration option, in schema order. */
export const CONFIG_OPTIONS: readonly ConfigOption[] = buildOptions();

/** The option table as Markdown rows, for docs/configuration.md. */
export function renderOptionsMarkdown(): string {
  const rows = CONFIG_OPTIONS.map((o) => {
    const values = o.kind === 'enum' ? ` (${o.values.join(' \\| ')})` : '';
    return `| \`${o.name}\` | \`${o.env}\` | \`${String(o.default)}\` | ${o.description}${values} |`;
  });
  return ['| Option | Environment variable | Default | Description |', '|---|---|---|---|', ...rows].join('\n');
}
