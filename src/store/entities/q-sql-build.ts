// Building blocks of the query translations: SQL text with constant folding, bound parameters
// and JSON path labels. Values never enter the SQL text; only placeholders do.

import type { FilterContext, SqlFragment } from '../sql-fragment.js';

/** SQL text, or a constant when the outcome is known without looking at the data. */
export type Sql = string | boolean;
export type Bind = (value: unknown) => string;

export function and(parts: Sql[]): Sql {
  if (parts.includes(false)) return false;
  const rest = parts.filter((p): p is string => typeof p === 'string');
  if (rest.length === 0) return true;
  return rest.length === 1 ? `${rest[0]}` : `(${rest.join(' AND ')})`;
}

export function or(parts: Sql[]): Sql {
  if (parts.includes(true)) return true;
  const rest = parts.filter((p): p is string => typeof p === 'string');
  if (rest.length === 0) return false;
  return rest.length === 1 ? `${rest[0]}` : `(${rest.join(' OR ')})`;
}

/** NOT that treats an unknown (NULL) as false, as the evaluator does. */
export const not = (p: Sql): Sql => (typeof p === 'boolean' ? !p : `NOT coalesce(${p}, 0)`);
export const where = (p: Sql): string => (p === true ? '1' : p === false ? '0' : p);

/** A JSON path label; the parser refuses names whose IRI contains '"'. */
export function label(name: string): string {
  if (name.includes('"')) throw new Error(`cannot address JSON member ${name}`);
  return `."${name}"`;
}

/** A fragment built with a binder that names parameters through the statement's generator. */
export function translation(ctx: FilterContext, build: (bind: Bind) => Sql): SqlFragment {
  const params: Record<string, unknown> = {};
  const bind: Bind = (value) => {
    const name = ctx.param('q');
    params[name] = value;
    return `@${name}`;
  };
  return { sql: where(build(bind)), params };
}
