// Recursive-descent parser of the NGSI-LD query language (NGSI-LD §4.9): `;` (AND) binds tighter
// than `|` (OR), parentheses group, and every name is expanded with the request's term mapper.

import type { TermMapper } from '../terms.js';
import type { QCompareOp, QExpr, QKey, QPath, QScalar, QValue } from './q-ast.js';
import { Q_LIMITS, Q_MEMBERS, type QMember } from './q-ast.js';
import { classifyBare, compileQPattern, isComparable } from './q-literals.js';
import {
  atEnd, consume, createCursor, lookingAt, parseJunctions, peek, readQuoted, readRun, syntaxError, tooComplex, type Cursor,
} from './syntax.js';

/** Characters that end a name in a path. */
const NAME_STOPS = '.[];|(),=!<>~"\'';
/** Characters that end an unquoted value (`..` does too). */
const VALUE_STOPS = ';|(),"';
/** Longest first, so `!~=` is not read as `!` and `>=` not as `>`. */
const OPERATORS: readonly QCompareOp[] = ['==', '!~=', '!=', '>=', '<=', '~=', '>', '<'];
const OPERATOR_LIST = 'an operator (==, !=, >, >=, <, <=, ~=, !~=)';

interface State {
  readonly mapper: TermMapper;
}

/** Keys JSON-LD leaves alone inside a value (mirrors ngsi/json.ts): kept verbatim, never expanded. */
const isVerbatimKey = (k: string): boolean => k.startsWith('@') || k === 'id' || k === 'type';
const isMember = (s: string): s is QMember => Q_MEMBERS.some((m) => m === s);

/**
 * Parses a q expression. Throws BadRequestDataError naming the 1-based position of the first
 * error, or TooComplexQueryError beyond Q_LIMITS.
 */
export function parseQ(text: string, mapper: TermMapper): QExpr {
  const c = createCursor('q', text);
  if (text.length > Q_LIMITS.maxLength) throw tooComplex(c, `longer than ${Q_LIMITS.maxLength} characters`);
  const st: State = { mapper };
  const expr = parseJunctions<QExpr>(c, {
    or: '|', maxDepth: Q_LIMITS.maxDepth, maxTerms: Q_LIMITS.maxTerms, termsName: 'terms', beforeClose: "';', '|' or ')'",
    term: (cur) => parseTerm(cur, st), junction: (kind, terms) => ({ kind, terms }),
  });
  if (!atEnd(c)) {
    throw syntaxError(c, peek(c) === ')' ? "';', '|' or the end (this ')' closes nothing)" : "';', '|' or the end of the expression");
  }
  return expr;
}

/** One comparison or existence test: `attr`, `!attr`, `attr op value`. */
function parseTerm(c: Cursor, st: State): QExpr {
  if (peek(c) === '!') {
    c.pos++;
    return { kind: 'exists', path: parsePath(c, st), negated: true };
  }
  const path = parsePath(c, st);
  const op = readOperator(c);
  if (op === undefined) return { kind: 'exists', path, negated: false };
  return { kind: 'compare', path, op, value: parseValue(c, st, op) };
}

function readOperator(c: Cursor): QCompareOp | undefined {
  if (atEnd(c) || ';|)'.includes(peek(c))) return undefined;
  const op = OPERATORS.find((o) => lookingAt(c, o));
  if (op === undefined) throw syntaxError(c, `${OPERATOR_LIST}, ';', '|', ')' or the end`);
  c.pos += op.length;
  return op;
}

/** A name in a path: a run of name characters, or a quoted string (for IRIs containing '.'). */
function readName(c: Cursor, expected: string): string {
  const start = c.pos;
  const name = peek(c) === '"' ? readQuoted(c) : readRun(c, NAME_STOPS);
  if (name === '') throw syntaxError(c, expected, start);
  if (name.includes('"')) throw syntaxError(c, `${expected} without '"'`, start);
  return name;
}

function expandName(c: Cursor, st: State, name: string, at: number): string {
  const iri = st.mapper.expandTerm(name);
  // NOTE: the SQL translation addresses IRIs as quoted JSON path labels, which cannot hold '"'.
  if (iri.includes('"')) throw syntaxError(c, `a name that does not expand to an IRI with '"'`, at, `'${name}'`);
  return iri;
}

/** `attr(.name)*([key(.key)*])*` (§4.9 attrPathName, compoundAttrName); members end a path. */
function parsePath(c: Cursor, st: State): QPath {
  const start = c.pos;
  const path: QPath = { attr: expandName(c, st, readName(c, 'an attribute name'), start), subs: [], keys: [] };
  while (peek(c) === '.') {
    if (path.member !== undefined) throw syntaxError(c, `${OPERATOR_LIST}: nothing follows '.${path.member}'`);
    c.pos++;
    const at = c.pos;
    const name = readName(c, "a sub-attribute or member name after '.'");
    if (isMember(name)) path.member = name;
    else if (path.subs.length >= Q_LIMITS.maxDepth) throw tooComplex(c, `sub-attributes nested deeper than ${Q_LIMITS.maxDepth}`);
    else path.subs.push(expandName(c, st, name, at));
  }
  while (peek(c) === '[') {
    if (path.member !== undefined) throw syntaxError(c, `${OPERATOR_LIST}: '.${path.member}' has no keys`);
    c.pos++;
    path.keys.push(readKey(c, st));
    while (peek(c) === '.') {
      c.pos++;
      path.keys.push(readKey(c, st));
    }
    consume(c, ']', "'.' or ']'");
    if (path.keys.length > Q_LIMITS.maxDepth) throw tooComplex(c, `keys nested deeper than ${Q_LIMITS.maxDepth}`);
  }
  return path;
}

function readKey(c: Cursor, st: State): QKey {
  const at = c.pos;
  const term = readName(c, 'a key name');
  return { iri: isVerbatimKey(term) ? term : expandName(c, st, term, at), term };
}

function parseValue(c: Cursor, st: State, op: QCompareOp): QValue {
  if (op === '~=' || op === '!~=') return parsePattern(c);
  const isEquality = op === '==' || op === '!=';
  const start = c.pos;
  const first = parseScalar(c, st);
  if (lookingAt(c, '..')) {
    if (!isEquality) throw syntaxError(c, `';', '|', ')' or the end (a range goes with == or !=, not ${op})`);
    if (!isComparable(first)) throw syntaxError(c, 'a number, a quoted string, a date-time, a date or a time to start a range', start);
    c.pos += 2;
    const toStart = c.pos;
    const to = parseScalar(c, st);
    if (to.kind !== first.kind) throw syntaxError(c, `a ${first.kind} to end the range`, toStart);
    return { kind: 'range', from: first, to };
  }
  if (peek(c) === ',') {
    if (!isEquality) throw syntaxError(c, `';', '|', ')' or the end (a list goes with == or !=, not ${op})`);
    const items = [first];
    while (peek(c) === ',') {
      c.pos++;
      if (items.length >= Q_LIMITS.maxListItems) throw tooComplex(c, `more than ${Q_LIMITS.maxListItems} values in a list`);
      items.push(parseScalar(c, st));
    }
    return { kind: 'list', items };
  }
  if (!isEquality && !isComparable(first)) {
    throw syntaxError(c, `a number, a quoted string, a date-time, a date or a time after '${op}'`, start);
  }
  return first;
}

function parseScalar(c: Cursor, st: State): QScalar {
  if (peek(c) === '"') {
    const value = readQuoted(c);
    return { kind: 'string', value, iri: st.mapper.expandTerm(value) };
  }
  const start = c.pos;
  while (c.pos < c.text.length) {
    const code = c.text.charCodeAt(c.pos);
    const ch = c.text[c.pos] ?? '';
    if (code <= 0x20 || code === 0x7f || VALUE_STOPS.includes(ch) || lookingAt(c, '..')) break;
    c.pos++;
  }
  const text = c.text.slice(start, c.pos);
  if (text === '') throw syntaxError(c, 'a value');
  const v = classifyBare(text);
  if (typeof v === 'string') throw syntaxError(c, v, start, `'${text}'`);
  return v;
}

/**
 * A `~=` pattern: a quoted string, or raw text up to a `;`, `|` or `)` outside the pattern's own
 * parentheses and brackets (so `(a|b)` and `[;|]` stay inside; a top-level `|` needs quotes).
 */
function parsePattern(c: Cursor): QValue {
  const start = c.pos;
  const source = peek(c) === '"' ? readQuoted(c) : readRawPattern(c);
  if (source === '') throw syntaxError(c, 'a regular expression', start);
  try {
    compileQPattern(source);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw syntaxError(c, `a valid regular expression (${why})`, start, `'${source}'`);
  }
  return { kind: 'pattern', source };
}

function readRawPattern(c: Cursor): string {
  const start = c.pos;
  let depth = 0;
  let inClass = false;
  while (c.pos < c.text.length) {
    const ch = c.text[c.pos];
    if (ch === '\\') {
      c.pos = Math.min(c.pos + 2, c.text.length);
      continue;
    }
    if (inClass) inClass = ch !== ']';
    else if (ch === '[') inClass = true;
    else if (ch === '(') depth++;
    else if (ch === ')' && depth === 0) break;
    else if (ch === ')') depth--;
    else if (depth === 0 && (ch === ';' || ch === '|')) break;
    c.pos++;
  }
  return c.text.slice(start, c.pos);
}
