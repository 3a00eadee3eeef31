// Entity type selection (NGSI-LD §4.17): `A,B` and `A|B` mean OR, `A;B` means AND (binding tighter),
// parentheses group, `*` alone means every type. Names are expanded with the request's mapper.

import { assertNever, type Iri } from '../model.js';
import { nameProblem } from '../names.js';
import type { TermMapper } from '../terms.js';
import {
  atEnd, consume, createCursor, peek, readRun, syntaxError, tooComplex, type Cursor,
} from './syntax.js';

export type TypeExpr = { kind: 'type'; iri: Iri } | { kind: 'and'; terms: TypeExpr[] } | { kind: 'or'; terms: TypeExpr[] };

const TYPE_LIMITS = { maxLength: 2048, maxDepth: 16, maxTerms: 64 } as const;
const NAME_STOPS = ',|;()';

interface State {
  readonly mapper: TermMapper;
  terms: number;
}

/** Parses a type selection; `'*'` for all types. Throws BadRequestDataError naming the position. */
export function parseTypeSelection(text: string, mapper: TermMapper): TypeExpr | '*' {
  const c = createCursor('type', text);
  if (text === '*') return '*';
  if (text.length > TYPE_LIMITS.maxLength) throw tooComplex(c, `longer than ${TYPE_LIMITS.maxLength} characters`);
  const expr = parseOr(c, { mapper, terms: 0 }, 0);
  if (!atEnd(c)) throw syntaxError(c, "',', '|', ';' or the end of the selection");
  return expr;
}

function join(kind: 'and' | 'or', terms: TypeExpr[]): TypeExpr {
  const flat = terms.flatMap((t) => (t.kind === kind ? t.terms : [t]));
  return flat.length === 1 && flat[0] !== undefined ? flat[0] : { kind, terms: flat };
}

function parseOr(c: Cursor, st: State, depth: number): TypeExpr {
  const terms = [parseAnd(c, st, depth)];
  while (peek(c) === ',' || peek(c) === '|') {
    c.pos++;
    terms.push(parseAnd(c, st, depth));
  }
  return join('or', terms);
}

function parseAnd(c: Cursor, st: State, depth: number): TypeExpr {
  const terms = [parseFactor(c, st, depth)];
  while (peek(c) === ';') {
    c.pos++;
    terms.push(parseFactor(c, st, depth));
  }
  return join('and', terms);
}

function parseFactor(c: Cursor, st: State, depth: number): TypeExpr {
  if (peek(c) === '(') {
    if (depth >= TYPE_LIMITS.maxDepth) throw tooComplex(c, `parentheses nested deeper than ${TYPE_LIMITS.maxDepth}`);
    c.pos++;
    const inner = parseOr(c, st, depth + 1);
    consume(c, ')', "',', '|', ';' or ')'");
    return inner;
  }
  st.terms++;
  if (st.terms > TYPE_LIMITS.maxTerms) throw tooComplex(c, `more than ${TYPE_LIMITS.maxTerms} types`);
  const start = c.pos;
  const name = readRun(c, NAME_STOPS);
  if (name === '') throw syntaxError(c, 'a type name');
  if (name.includes('*')) throw syntaxError(c, "a type name ('*' stands alone for all types)", start, `'${name}'`);
  if (nameProblem(name) !== undefined) throw syntaxError(c, 'a type name without <>"\'=', start, `'${name}'`);
  return { kind: 'type', iri: st.mapper.expandTerm(name) };
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
