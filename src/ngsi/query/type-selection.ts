// Entity type selection (NGSI-LD §4.17): `A,B` and `A|B` mean OR, `A;B` means AND (binding tighter),
// parentheses group, `*` alone means every type. Names are expanded with the request's mapper.

import { assertNever, type Iri } from '../model.js';
import { nameProblem } from '../names.js';
import type { TermMapper } from '../terms.js';
import {
  atEnd, createCursor, parseJunctions, readRun, syntaxError, tooComplex, type Cursor,
} from './syntax.js';

export type TypeExpr = { kind: 'type'; iri: Iri } | { kind: 'and'; terms: TypeExpr[] } | { kind: 'or'; terms: TypeExpr[] };

const TYPE_LIMITS = { maxLength: 2048, maxDepth: 16, maxTerms: 64 } as const;
const NAME_STOPS = ',|;()';

/** Parses a type selection; `'*'` for all types. Throws BadRequestDataError naming the position. */
export function parseTypeSelection(text: string, mapper: TermMapper): TypeExpr | '*' {
  const c = createCursor('type', text);
  if (text === '*') return '*';
  if (text.length > TYPE_LIMITS.maxLength) throw tooComplex(c, `longer than ${TYPE_LIMITS.maxLength} characters`);
  const expr = parseJunctions<TypeExpr>(c, {
    or: ',|', maxDepth: TYPE_LIMITS.maxDepth, maxTerms: TYPE_LIMITS.maxTerms, termsName: 'types', beforeClose: "',', '|', ';' or ')'",
    term: (cur) => parseTerm(cur, mapper), junction: (kind, terms) => ({ kind, terms }),
  });
  if (!atEnd(c)) throw syntaxError(c, "',', '|', ';' or the end of the selection");
  return expr;
}

/** One type name, expanded. */
function parseTerm(c: Cursor, mapper: TermMapper): TypeExpr {
  const start = c.pos;
  const name = readRun(c, NAME_STOPS);
  if (name === '') throw syntaxError(c, 'a type name');
  if (name.includes('*')) throw syntaxError(c, "a type name ('*' stands alone for all types)", start, `'${name}'`);
  if (nameProblem(name) !== undefined) throw syntaxError(c, 'a type name without <>"\'=', start, `'${name}'`);
  return { kind: 'type', iri: mapper.expandTerm(name) };
}

/** Whether an entity with these (expanded) types is selected. */
export function evaluateTypeSelection(expr: TypeExpr, types: readonly Iri[]): boolean {
  switch (expr.kind) {
    case 'type':
      return types.includes(expr.iri);
    case 'and':
      return expr.terms.every((t) => evaluateTypeSelection(t, types));
    case 'or':
      return expr.terms.some((t) => evaluateTypeSelection(t, types));
    default:
      return assertNever(expr, 'type selection');
  }
}
