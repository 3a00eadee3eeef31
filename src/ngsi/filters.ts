// Entity filters of the query API as domain values (NGSI-LD §4.9 q, §4.10 geo, §4.19 scopeQ, type
// selection, idPattern). Parsed at the edge, evaluated in memory here or translated to SQL in store/.

import type { GeoQuery } from './geo/query.js';
import type { Iri } from './model.js';
import { compilePattern, type Pattern } from './pattern.js';
import type { QExpr } from './query/q-ast.js';
import type { ScopeExpr } from './query/scope-q.js';
import type { TypeExpr } from './query/type-selection.js';

/** One filter of an entity query; all filters of a query must hold (AND). */
export type EntityFilter =
  | { kind: 'idPattern'; pattern: string }
  | { kind: 'geo'; query: GeoQuery }
  | { kind: 'q'; expr: QExpr }
  | { kind: 'scopeQ'; expr: ScopeExpr }
  | { kind: 'types'; expr: TypeExpr }
  /** Any of these expanded types (the plain list form of a type selection). */
  | { kind: 'typeIris'; iris: Iri[] }
  /** Any of these entity ids. */
  | { kind: 'ids'; ids: string[] }
  /** Alternatives (OR), each a conjunction (AND) of filters: the `entities` of a POST query. */
  | { kind: 'anyOf'; alternatives: EntityFilter[][] };

/** Compiles an idPattern (a regular expression, NGSI-LD §4.9) or throws PatternSyntaxError. */
export function compileIdPattern(pattern: string): Pattern {
  return compilePattern(pattern);
}
