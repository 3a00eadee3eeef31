// Plain JSON handling for attribute payloads: narrowing `unknown` to Json (refusing JSON null),
// and expanding or compacting the keys of Property values through the request's term mapper.

import type { Json } from './model.js';
import type { TermMapper } from './terms.js';

export type JsonObject = { [key: string]: Json };

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests arrays and objects deeper than `max`: one pass over the characters, no
 * recursion, strings skipped. Run before JSON.parse so that no deep document reaches a recursive walker.
 */
export function isNestedDeeper(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === QUOTE) {
      // NOTE: a string is skipped with indexOf (most of a body is strings); a quote preceded by an
      // odd number of backslashes is escaped.
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) return false; // unterminated: JSON.parse reports it
      i = end;
    } else if (ch === OPEN_BRACE || ch === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (ch === CLOSE_BRACE || ch === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

function isEscaped(text: string, quoteAt: number): boolean {
  let backslashes = 0;
  for (let j = quoteAt - 1; j >= 0 && text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
  return backslashes % 2 === 1;
}

/** Where a JSON null hides inside `v`, as a path suffix (`.a[2]`), or undefined when there is none. */
export function findNull(v: unknown, at = ''): string | undefined {
  if (v === null) return at;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const found = findNull(v[i], `${at}[${i}]`);
      if (found !== undefined) return found;
    }
  } else if (isPlainObject(v)) {
    for (const [k, item] of Object.entries(v)) {
      const found = findNull(item, `${at}.${k}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * Narrows a parsed JSON document to Json. Everything that came out of JSON.parse already is; the
 * walk guards against other values (undefined, functions, non-finite numbers) handed in by code.
 */
export function toJson(v: unknown): Json | undefined {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (Array.isArray(v)) {
    const out: Json[] = [];
    for (const item of v) {
      const j = toJson(item);
      if (j === undefined) return undefined;
      out.push(j);
    }
    return out;
  }
  if (isPlainObject(v)) {
    const out: JsonObject = {};
    for (const [k, item] of Object.entries(v)) {
      const j = toJson(item);
      if (j === undefined) return undefined;
      out[k] = j;
    }
    return out;
  }
  return undefined;
}

/** Keys JSON-LD leaves alone inside a value: keywords, and `id`/`type` (aliases of `@id`/`@type`). */
const isVerbatimKey = (k: string): boolean => k.startsWith('@') || k === 'id' || k === 'type';

function mapKeys(v: Json, rename: (key: string) => string): Json {
  if (Array.isArray(v)) return v.map((item) => mapKeys(item, rename));
  if (v === null || typeof v !== 'object') return v;
  const out: JsonObject = {};
  for (const [k, item] of Object.entries(v)) {
    out[isVerbatimKey(k) ? k : rename(k)] = isVerbatimKey(k) ? item : mapKeys(item, rename);
  }
  return out;
}

/** Expands the keys of objects inside a Property value, at any depth (JSON-LD node objects). */
export const expandValueKeys = (v: Json, mapper: TermMapper): Json => mapKeys(v, (k) => mapper.expandTerm(k));

/** The mirror of expandValueKeys for output. */
export const compactValueKeys = (v: Json, mapper: TermMapper): Json => mapKeys(v, (k) => mapper.compactIri(k));
