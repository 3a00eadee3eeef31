// scopeQ (NGSI-LD §4.19): `/A/B` exact, `/A/+` one level, `/A/#` A and everything below it;
// `;` (AND) binds tighter than `,` (OR), parentheses group. Parsed once, matched here or in SQL.

import { assertNever } from '../model.js';
import {
  atEnd, consume, createCursor, parseJunctions, peek, readRun, syntaxError, tooComplex, type Cursor,
} from './syntax.js';

/** One scope pattern: its levels (`+` stands for any one level) and whether `#` ends it. */
export interface ScopeTerm {
  kind: 'scope';
  levels: string[];
  descendants: boolean;
}
export type ScopeExpr = ScopeTerm | { kind: 'and'; terms: ScopeExpr[] } | { kind: 'or'; terms: ScopeExpr[] };

const SCOPE_LIMITS = { maxLength: 2048, maxDepth: 16, maxTerms: 64 } as const;
const LEVEL_STOPS = '/;,()+#';

/** Parses a scopeQ. Throws BadRequestDataError naming the position, or TooComplexQueryError. */
export function parseScopeQ(text: string): ScopeExpr {
  const c = createCursor('scopeQ', text);
  if (text.length > SCOPE_LIMITS.maxLength) throw tooComplex(c, `longer than ${SCOPE_LIMITS.maxLength} characters`);
  const expr = parseJunctions<ScopeExpr>(c, {
    or: ',', maxDepth: SCOPE_LIMITS.maxDepth, maxTerms: SCOPE_LIMITS.maxTerms, termsName: 'scopes', beforeClose: "';', ',' or ')'",
    term: parseTerm, junction: (kind, terms) => ({ kind, terms }),
  });
  if (!atEnd(c)) throw syntaxError(c, "';', ',' or the end of the expression");
  return expr;
}

function parseTerm(c: Cursor): ScopeTerm {
  const term: ScopeTerm = { kind: 'scope', levels: [], descendants: false };
  consume(c, '/', "a scope starting with '/'");
  for (;;) {
    if (peek(c) === '#') {
      c.pos++;
      term.descendants = true;
      if (peek(c) === '/') throw syntaxError(c, "';', ',', ')' or the end ('#' is the last level)");
      return term;
    }
    if (peek(c) === '+') {
      c.pos++;
      term.levels.push('+');
    } else {
      const level = readRun(c, LEVEL_STOPS);
      if (level === '') throw syntaxError(c, 'a scope level');
      term.levels.push(level);
    }
    if (peek(c) === '+' || peek(c) === '#') throw syntaxError(c, "'/', ';', ',', ')' or the end ('+' and '#' are whole levels)");
    if (peek(c) !== '/') return term;
    c.pos++;
  }
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** How a scope value is tested against a term: plain equality, or a regular expression. */
export function scopeTermTest(term: ScopeTerm): { exact: string } | { pattern: string } {
  if (!term.descendants && !term.levels.includes('+')) return { exact: '/' + term.levels.join('/') };
  const levels = term.levels.map((l) => (l === '+' ? '/[^/]+' : '/' + escapeRegExp(l))).join('');
  return { pattern: `^${levels}${term.descendants ? '(/.*)?' : ''}$` };
}

function matchesTerm(term: ScopeTerm, scopes: string[]): boolean {
  const test = scopeTermTest(term);
  if ('exact' in test) return scopes.includes(test.exact);
  const re = new RegExp(test.pattern);
  return scopes.some((s) => re.test(s));
}

/** Whether an entity with these scopes matches; an entity without scopes matches no term. */
export function evaluateScopeQ(expr: ScopeExpr, scopes: string[] | undefined): boolean {
  switch (expr.kind) {
    case 'scope':
      return matchesTerm(expr, scopes ?? []);
    case 'and':
      return expr.terms.every((t) => evaluateScopeQ(t, scopes));
    case 'or':
      return expr.terms.some((t) => evaluateScopeQ(t, scopes));
    default:
      return assertNever(expr, 'scopeQ expression');
  }
}
