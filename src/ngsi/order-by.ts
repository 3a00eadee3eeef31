// Ordering of query results (NGSI-LD v1.9 §4.23): `orderBy` is a comma list of members, each
// `id`, `type`, `createdAt`, `modifiedAt` or an attribute path (`name`, `name.sub`, `name.createdAt`),
// optionally followed by `;asc` or `;desc`. Entities compare member by member; a missing value sorts last.

import { BadRequestDataError } from './errors.js';
import type { Attribute, Entity, Iri } from './model.js';

export type OrderValue = string | number | boolean | undefined;

export interface OrderKey {
  /** `id`, `type`, `createdAt`, `modifiedAt`, or an attribute IRI followed by sub-attribute IRIs or timestamps. */
  readonly path: readonly string[];
  readonly descending: boolean;
}

const ENTITY_MEMBERS = new Set(['id', 'type', 'createdAt', 'modifiedAt']);
const TIMESTAMPS = new Set(['createdAt', 'modifiedAt', 'observedAt']);
const NAME = /^[^\s,;.{}()<>"'=]+$/;
const MAX_KEYS = 8;

function invalid(text: string, why: string): BadRequestDataError {
  return new BadRequestDataError(`Invalid orderBy: ${why}`, `orderBy=${text}`);
}

/** Parses `orderBy`; attribute and sub-attribute names are expanded with `expand`. */
export function parseOrderBy(text: string, expand: (name: string) => Iri): OrderKey[] {
  const items = text.split(',');
  if (items.length > MAX_KEYS) throw invalid(text, `at most ${MAX_KEYS} members`);
  return items.map((item) => {
    const [member = '', direction, extra] = item.split(';');
    if (extra !== undefined || (direction !== undefined && direction !== 'asc' && direction !== 'desc')) {
      throw invalid(text, `'${item}' is not a member followed by ;asc or ;desc`);
    }
    const parts = member.split('.');
    if (parts.some((p) => !NAME.test(p))) throw invalid(text, `'${member}' is not a member name or attribute path`);
    const [first = ''] = parts;
    if (ENTITY_MEMBERS.has(first)) {
      if (parts.length > 1) throw invalid(text, `'${first}' has no members`);
      return { path: [first], descending: direction === 'desc' };
    }
    const path = parts.map((p, i) => (i > 0 && TIMESTAMPS.has(p) ? p : expand(p)));
    return { path, descending: direction === 'desc' };
  });
}

/** Whether only entity ids are ordered (all a temporal query may order by, §5.7.4.4). */
export const ordersByIdOnly = (keys: readonly OrderKey[]): boolean => keys.every((k) => k.path.length === 1 && k.path[0] === 'id');

function scalar(v: unknown): OrderValue {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  return v === undefined || v === null ? undefined : JSON.stringify(v);
}

function attributeValue(a: Attribute, rest: readonly string[]): OrderValue {
  const [next, ...more] = rest;
  if (next === undefined) {
    switch (a.kind) {
      case 'Property': return scalar(a.value);
      case 'Relationship': return scalar(a.object);
      case 'VocabProperty': return scalar(a.vocab);
      case 'JsonProperty': return scalar(a.json);
      case 'LanguageProperty': return scalar(Object.values(a.languageMap)[0]);
      default: return undefined;
    }
  }
  if (more.length === 0 && TIMESTAMPS.has(next)) {
    const t = next === 'createdAt' ? a.createdAt : next === 'modifiedAt' ? a.modifiedAt : a.observedAt;
    return t;
  }
  const sub = a.sub[next];
  return sub === undefined ? undefined : attributeValue(sub, more);
}

/** The value an entity has for one key: its default instance (or first) for an attribute. */
export function orderValue(e: Entity, key: OrderKey): OrderValue {
  const [first = '', ...rest] = key.path;
  switch (first) {
    case 'id': return e.id;
    case 'type': return e.types[0];
    case 'createdAt': return e.createdAt;
    case 'modifiedAt': return e.modifiedAt;
    default: {
      const instances = e.attrs[first];
      const a = instances?.find((i) => i.datasetId === undefined) ?? instances?.[0];
      return a === undefined ? undefined : attributeValue(a, rest);
    }
  }
}

const RANK = { boolean: 0, number: 1, string: 2 } as const;

function compareValues(a: OrderValue, b: OrderValue): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
  if (typeof a !== typeof b) return RANK[typeof a as keyof typeof RANK] - RANK[typeof b as keyof typeof RANK]; // NOTE: OrderValue holds only these three types here
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Compares the key values of two entities; a missing value sorts last in either direction. */
export function compareOrderValues(keys: readonly OrderKey[], a: readonly OrderValue[], b: readonly OrderValue[]): number {
  for (const [i, key] of keys.entries()) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined) {
      if (x !== y) return x === undefined ? 1 : -1;
      continue;
    }
    const c = compareValues(x, y);
    if (c !== 0) return key.descending ? -c : c;
  }
  return 0;
}
