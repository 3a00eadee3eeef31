// scopeQ (NGSI-LD §4.19) and type selections (§4.17) as SQL over `entities e`: scopes are read from
// e.doc, types from the entity_types index; values are always bound.

import { assertNever, scopeTermTest, type ScopeExpr, type TypeExpr } from '../../ngsi/index.js';
import type { FilterContext } from '../sql-fragment.js';
import { and, or, type Bind, type Sql } from './q-sql-build.js';

/** Each term tests the entity's scopes on its own: under AND, different scopes may satisfy each term. */
export function scopeSql(expr: ScopeExpr, bind: Bind): Sql {
  switch (expr.kind) {
    case 'and':
      return and(expr.terms.map((t) => scopeSql(t, bind)));
    case 'or':
      return or(expr.terms.map((t) => scopeSql(t, bind)));
    case 'scope': {
      const test = scopeTermTest(expr);
      const cond = 'exact' in test ? `s.value = ${bind(test.exact)}` : `ngsi_regexp(${bind(test.pattern)}, s.value)`;
      return `EXISTS (SELECT 1 FROM json_each(e.doc, '$.scope') s WHERE ${cond})`;
    }
    default:
      return assertNever(expr, 'scopeQ expression');
  }
}

/** Type terms through the entity_types index; a type never stored selects nothing. */
export function typeSql(expr: TypeExpr, ctx: FilterContext, bind: Bind): Sql {
  const ofIds = (ids: number[]): Sql => (ids.length === 0 ? false
    : `e.rowid IN (SELECT t.entity FROM entity_types t WHERE t.iri IN (${ids.map((id) => bind(id)).join(', ')}))`);
  switch (expr.kind) {
    case 'type': {
      const id = ctx.iris.lookup(expr.iri);
      return ofIds(id === undefined ? [] : [id]);
    }
    case 'and':
      return and(expr.terms.map((t) => typeSql(t, ctx, bind)));
    case 'or': {
      // NOTE: a plain list of types (the common `A,B`) becomes one IN over the type index.
      const names = expr.terms.flatMap((t) => (t.kind === 'type' ? [t.iri] : []));
      if (names.length < expr.terms.length) return or(expr.terms.map((t) => typeSql(t, ctx, bind)));
      return ofIds(names.map((iri) => ctx.iris.lookup(iri)).filter((id) => id !== undefined));
    }
    default:
      return assertNever(expr, 'type selection');
  }
}
