// Target elements of a q path in one attribute instance (NGSI-LD §4.9 "target value"). The
// evaluator compares them and the store's query-values index stores them: both read values alike.

import { isPlainObject } from '../json.js';
import { assertNever, type Attribute } from '../model.js';
import type { QKey, QMember, QPath } from './q-ast.js';
import { instantOf } from './q-literals.js';

/**
 * One comparable element. Arrays contribute their scalar elements (one level); objects contribute
 * nothing themselves (address them with a `[key]` path).
 */
export type QElement =
  | { t: 'num'; n: number }
  | { t: 'bool'; b: boolean }
  /** A string value; `instant` when it is a date-time with a time zone. */
  | { t: 'str'; s: string; instant: number | undefined }
  /** A Relationship object: only `==` and `!=` apply to it (§4.9). */
  | { t: 'ref'; s: string }
  /** A VocabProperty IRI: compared with the expanded literal. */
  | { t: 'vocab'; s: string }
  /** A timestamp member (observedAt, createdAt, modifiedAt). */
  | { t: 'instant'; n: number };

function scalarElement(v: unknown): QElement | undefined {
  if (typeof v === 'number') return { t: 'num', n: v };
  if (typeof v === 'boolean') return { t: 'bool', b: v };
  if (typeof v === 'string') return { t: 'str', s: v, instant: instantOf(v) };
  return undefined;
}

/** The scalar elements of a JSON value: itself, or each element of an array. */
function jsonElements(v: unknown): QElement[] {
  const out: QElement[] = [];
  for (const item of Array.isArray(v) ? v : [v]) {
    const el = scalarElement(item);
    if (el !== undefined) out.push(el);
  }
  return out;
}

/** Strings of relationship objects and vocab lists take their own class; other elements stay. */
const asClass = (els: QElement[], t: 'ref' | 'vocab'): QElement[] => els.map((el) => (el.t === 'str' ? { t, s: el.s } : el));

/**
 * The elements an instance's own value offers (§4.9): a Property's value, a Relationship's object,
 * a ListProperty's valueList, a ListRelationship's objectList, every string of a languageMap,
 * a VocabProperty's vocab, a JsonProperty's json. A GeoProperty's geometry offers none.
 */
export function valueElements(a: Attribute): QElement[] {
  switch (a.kind) {
    case 'Property':
    case 'GeoProperty':
      return jsonElements(a.value);
    case 'JsonProperty':
      return jsonElements(a.json);
    case 'ListProperty':
      return jsonElements(a.valueList);
    case 'Relationship':
      return asClass(jsonElements(a.object), 'ref');
    case 'ListRelationship':
      return asClass(jsonElements(a.objectList), 'ref');
    case 'VocabProperty':
      return asClass(jsonElements(a.vocab), 'vocab');
    case 'LanguageProperty':
      return Object.values(a.languageMap).flatMap(jsonElements);
    default:
      return assertNever(a, 'attribute kind');
  }
}

function memberElements(a: Attribute, member: QMember): QElement[] | undefined {
  switch (member) {
    case 'observedAt':
      return a.observedAt === undefined ? undefined : [{ t: 'instant', n: a.observedAt }];
    case 'createdAt':
      return [{ t: 'instant', n: a.createdAt }];
    case 'modifiedAt':
      return [{ t: 'instant', n: a.modifiedAt }];
    case 'unitCode':
      return a.unitCode === undefined ? undefined : jsonElements(a.unitCode);
    case 'datasetId':
      return a.datasetId === undefined ? undefined : jsonElements(a.datasetId);
    default:
      return assertNever(member, 'member');
  }
}

/**
 * Walks `[k1.k2]` into a compound value (§4.9 trailing path, an ECMAScript member expression).
 * Property values have expanded keys; GeoJSON and JsonProperty keys are verbatim.
 */
function keyTarget(a: Attribute, keys: QKey[]): unknown {
  let cur: unknown;
  let byIri: boolean;
  if (a.kind === 'Property') [cur, byIri] = [a.value, true];
  else if (a.kind === 'GeoProperty') [cur, byIri] = [a.value, false];
  else if (a.kind === 'JsonProperty') [cur, byIri] = [a.json, false];
  else return undefined;
  for (const key of keys) {
    const name = byIri ? key.iri : key.term;
    if (!isPlainObject(cur) || !Object.hasOwn(cur, name)) return undefined;
    cur = cur[name];
  }
  return cur;
}

/**
 * The elements `path` designates in one top-level instance, or undefined when the path does not
 * resolve there (a missing sub-attribute, member or key: the target does not exist).
 */
export function resolvePath(instance: Attribute, path: QPath): QElement[] | undefined {
  let target: Attribute | undefined = instance;
  for (const sub of path.subs) {
    target = target.sub[sub];
    if (target === undefined) return undefined;
  }
  if (path.member !== undefined) return memberElements(target, path.member);
  if (path.keys.length > 0) {
    const v = keyTarget(target, path.keys);
    return v === undefined ? undefined : jsonElements(v);
  }
  return valueElements(target);
}
