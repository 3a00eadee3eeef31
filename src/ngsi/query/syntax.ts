// What the q, scopeQ and type-selection parsers share: a cursor over the text, quoted strings, and
// the errors that name the 1-based position and what was expected there.

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
