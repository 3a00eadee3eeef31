// What the q, scopeQ and type-selection parsers share: a cursor over the text, quoted strings, the
// errors that name the 1-based position and what was expected there, and the grammar of AND, OR and
// parentheses with its limits.

import { BadRequestDataError, TooComplexQueryError } from '../errors.js';

export interface Cursor {
  /** The parameter being parsed, for messages: `q`, `scopeQ`, `type`. */
  readonly language: string;
  readonly text: string;
  pos: number;
}

export const createCursor = (language: string, text: string): Cursor => ({ language, text, pos: 0 });

export const atEnd = (c: Cursor): boolean => c.pos >= c.text.length;
export const peek = (c: Cursor, ahead = 0): string => c.text[c.pos + ahead] ?? '';
export const lookingAt = (c: Cursor, s: string): boolean => c.text.startsWith(s, c.pos);

const describe = (c: Cursor, at: number): string => {
  const ch = c.text[at];
  if (ch === undefined) return 'the end of the text';
  if (/\s/.test(ch)) return 'whitespace (not allowed outside quoted strings)';
  return `'${ch}'`;
};

/** 400 BadRequestData: `Invalid q: expected a value at position 13, found the end of the text`. */
export function syntaxError(c: Cursor, expected: string, at = c.pos, found?: string): BadRequestDataError {
  return new BadRequestDataError(
    `Invalid ${c.language}: expected ${expected} at position ${at + 1}, found ${found ?? describe(c, at)}`,
    `${c.language}=${c.text}`,
  );
}

export function tooComplex(c: Cursor, why: string): TooComplexQueryError {
  return new TooComplexQueryError(`${c.language} is too complex: ${why}`, `${c.language}=${c.text.slice(0, 200)}`);
}

export function consume(c: Cursor, s: string, expected = `'${s}'`): void {
  if (!lookingAt(c, s)) throw syntaxError(c, expected);
  c.pos += s.length;
}

/**
 * A run of characters none of which is in `stops` (nor whitespace or a control character).
 * Empty when the cursor sits on such a character.
 */
export function readRun(c: Cursor, stops: string): string {
  const start = c.pos;
  while (c.pos < c.text.length) {
    const ch = c.text.charCodeAt(c.pos);
    if (ch <= 0x20 || ch === 0x7f || stops.includes(c.text[c.pos] ?? '')) break;
    c.pos++;
  }
  return c.text.slice(start, c.pos);
}

/**
 * A double-quoted string at the cursor. `\"` and `\\` are escapes; any other backslash is kept with
 * the character after it, so regular expressions like `"\d+"` need no doubling.
 */
export function readQuoted(c: Cursor): string {
  const open = c.pos;
  c.pos++;
  let out = '';
  while (c.pos < c.text.length) {
    const ch = c.text[c.pos] ?? '';
    if (ch === '"') {
      c.pos++;
      return out;
    }
    if (ch === '\\') {
      const next = c.text[c.pos + 1];
      if (next === undefined) break;
      out += next === '"' || next === '\\' ? next : ch + next;
      c.pos += 2;
      continue;
    }
    out += ch;
    c.pos++;
  }
  throw syntaxError(c, `'"' (closing the string from position ${open + 1})`);
}

/** The AND/OR/parentheses grammar of one language; `;` is AND everywhere and binds tighter. */
export interface JunctionGrammar<E> {
  /** The characters that join alternatives (OR): `|` in q, `,` in scopeQ, either in a type selection. */
  readonly or: string;
  readonly maxDepth: number;
  readonly maxTerms: number;
  /** What the terms are called when there are too many: `terms`, `scopes`, `types`. */
  readonly termsName: string;
  /** What the error for a missing ')' says was expected instead. */
  readonly beforeClose: string;
  /** One term, at the cursor. */
  readonly term: (c: Cursor) => E;
  /** The expression joining `terms` (at least two, none itself a junction of the same kind). */
  readonly junction: (kind: 'and' | 'or', terms: E[]) => E;
}

const isJunction = <E extends { kind: string }>(e: E, kind: 'and' | 'or'): e is E & { terms: E[] } => e.kind === kind;

/**
 * An expression of `g` at the cursor: terms joined by AND and OR, grouped by parentheses (nested at
 * most maxDepth deep, maxTerms terms in all). Nested junctions of one kind are flattened, and a
 * junction of one term is that term.
 */
export function parseJunctions<E extends { kind: string }>(c: Cursor, g: JunctionGrammar<E>): E {
  let terms = 0;
  const join = (kind: 'and' | 'or', list: E[]): E => {
    const flat = list.flatMap((t) => (isJunction(t, kind) ? t.terms : [t]));
    return flat.length === 1 && flat[0] !== undefined ? flat[0] : g.junction(kind, flat);
  };
  const factor = (depth: number): E => {
    if (peek(c) === '(') {
      if (depth >= g.maxDepth) throw tooComplex(c, `parentheses nested deeper than ${g.maxDepth}`);
      c.pos++;
      const inner = alternatives(depth + 1);
      consume(c, ')', g.beforeClose);
      return inner;
    }
    terms++;
    if (terms > g.maxTerms) throw tooComplex(c, `more than ${g.maxTerms} ${g.termsName}`);
    return g.term(c);
  };
  const conjunction = (depth: number): E => {
    const list = [factor(depth)];
    while (peek(c) === ';') {
      c.pos++;
      list.push(factor(depth));
    }
    return join('and', list);
  };
  function alternatives(depth: number): E {
    const list = [conjunction(depth)];
    while (peek(c) !== '' && g.or.includes(peek(c))) {
      c.pos++;
      list.push(conjunction(depth));
    }
    return join('or', list);
  }
  return alternatives(0);
}
