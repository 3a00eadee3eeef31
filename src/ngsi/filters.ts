// Entity filters of the query API as domain values (NGSI-LD §4.9 q, §4.10 geo, §4.19 scopeQ, type
// selection, idPattern). Parsed at the edge, evaluated in memory here or translated to SQL in store/.

/** One filter of an entity query; all filters of a query must hold (AND). */
export type EntityFilter =
  | { kind: 'idPattern'; pattern: string };

/** Compiles an idPattern (POSIX-like regular expression, NGSI-LD §4.9) or throws SyntaxError. */
export function compileIdPattern(pattern: string): RegExp {
  return new RegExp(pattern);
}
