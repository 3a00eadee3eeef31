// Literals of the q language (NGSI-LD §4.9 ComparableValue, OtherValue, URI) and the text shapes
// they are compared with: dates and times as text, date-times as instants, patterns on the linear-time engine.

import { isAbsoluteUri } from '../names.js';
import { parseDateTime } from '../time.js';
import type { QScalar } from './q-ast.js';
import { compilePattern, type Pattern } from '../pattern.js';

const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;
const DATE_TIME_START = /^\d{4}-\d{2}-\d{2}T/i;

/** A calendar date as text; date strings compare with date literals lexically (same as in time). */
export const DATE_SHAPE = /^\d{4}-\d{2}-\d{2}$/;
/** A time of day as text (`08:30`, `08:30:00`, `08:30:00.5Z`); compared lexically. */
export const TIME_SHAPE = /^\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?$/;

/** The instant of a date-time string (NGSI-LD §4.6.3: a time zone is required), else undefined. */
export const instantOf = (s: string): number | undefined => (DATE_TIME_START.test(s) ? parseDateTime(s) : undefined);

function dateInstant(text: string): number | undefined {
  const [y, m, d] = text.split('-').map(Number);
  if (y === undefined || m === undefined || d === undefined) return undefined;
  const ms = Date.UTC(y, m - 1, d);
  const back = new Date(ms);
  return back.getUTCFullYear() === y && back.getUTCMonth() === m - 1 && back.getUTCDate() === d ? ms : undefined;
}

function isValidTime(text: string): boolean {
  const [h, m, s] = text.replace(/Z$/, '').split(':').map(Number);
  return h !== undefined && h < 24 && m !== undefined && m < 60 && (s === undefined || s < 60);
}

/** What an unquoted value is: a literal, or the reason it is none (for the parse error). */
export function classifyBare(text: string): QScalar | string {
  if (text === 'true' || text === 'false') return { kind: 'boolean', value: text === 'true' };
  if (NUMBER.test(text)) return { kind: 'number', value: Number(text) };
  if (DATE_TIME_START.test(text)) {
    const at = parseDateTime(text);
    return at === undefined ? 'a valid date-time with a time zone' : { kind: 'dateTime', value: at };
  }
  if (DATE_SHAPE.test(text)) {
    const at = dateInstant(text);
    return at === undefined ? 'a valid calendar date' : { kind: 'date', value: text, instant: at };
  }
  if (TIME_SHAPE.test(text)) return isValidTime(text) ? { kind: 'time', value: text } : 'a valid time of day';
  if (isAbsoluteUri(text)) return { kind: 'uri', value: text };
  return 'a value (a number, a quoted string, true, false, a date-time, a date, a time or a URI)';
}

/** Literals `>`, `<`, ranges and lists of ranges accept (§4.9 ComparableValue). */
export const isComparable = (v: QScalar): boolean => v.kind !== 'boolean' && v.kind !== 'uri';

/**
 * Compiles a `~=` pattern on the linear-time engine. A leading `(?i)` (the inline flag other brokers
 * accept) makes it case-insensitive. Throws PatternSyntaxError when it is not valid RE2 syntax.
 */
export function compileQPattern(source: string): Pattern {
  return source.startsWith('(?i)') ? compilePattern(source.slice(4), { caseInsensitive: true }) : compilePattern(source);
}
