// Plain JSON handling for attribute payloads: narrowing `unknown` to Json (refusing JSON null),
// and expanding or compacting the keys of Property values through the request's term mapper.

import type { Json } from './model.js';
import type { TermMapper } from './terms.js';

export type JsonObject = { [key: string]: Json };

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
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
