// The NGSI-LD query language as data (NGSI-LD §4.9): the tree parseQ builds, with every name already
// expanded to an IRI, so the in-memory evaluator and the SQL translation never see a context.

import type { Iri } from '../model.js';

/** Comparison operators of §4.9; `!=` and `!~=` are the complements of `==` and `~=`. */
export type QCompareOp = '==' | '!=' | '>' | '>=' | '<' | '<=' | '~=' | '!~=';

/** The operators that need no complement: what one target element is tested with. */
export type QPositiveOp = '==' | '>' | '>=' | '<' | '<=' | '~=';

/** Members of an attribute a path may end with (`temperature.observedAt`); they win over sub-attributes. */
export const Q_MEMBERS = ['observedAt', 'createdAt', 'modifiedAt', 'unitCode', 'datasetId'] as const;
export type QMember = (typeof Q_MEMBERS)[number];
/** Members holding an instant (epoch ms in the model); the others hold strings. */
export const isInstantMember = (m: QMember): boolean => m === 'observedAt' || m === 'createdAt' || m === 'modifiedAt';

/** A key inside a compound value: `iri` for Property values (keys expanded), `term` for JSON/GeoJSON. */
export interface QKey {
  iri: Iri;
  term: string;
}

/** `attr.sub1.sub2.member[key1.key2]`: the attribute, a sub-attribute chain, a member or keys. */
export interface QPath {
  attr: Iri;
  subs: Iri[];
  member?: QMember;
  keys: QKey[];
}

/** One literal. Strings carry their expansion too: a VocabProperty compares expanded IRIs. */
export type QScalar =
  | { kind: 'number'; value: number }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'string'; value: string; iri: Iri }
  | { kind: 'uri'; value: string }
  /** Epoch milliseconds. */
  | { kind: 'dateTime'; value: number }
  /** `YYYY-MM-DD`, and the instant of its midnight UTC. */
  | { kind: 'date'; value: string; instant: number }
  /** `HH:MM[:SS[.s]][Z]`, compared as text. */
  | { kind: 'time'; value: string };

export type QValue =
  | QScalar
  /** Inclusive on both ends; both bounds have the same kind. */
  | { kind: 'range'; from: QScalar; to: QScalar }
  /** Any of the items (`==`), none of them (`!=`). */
  | { kind: 'list'; items: QScalar[] }
  /** A regular expression (`~=`, `!~=`); a leading `(?i)` makes it case-insensitive. */
  | { kind: 'pattern'; source: string };

export type QExpr =
  | { kind: 'and'; terms: QExpr[] }
  | { kind: 'or'; terms: QExpr[] }
  /** `attr` (negated: false) or `!attr` (negated: true). */
  | { kind: 'exists'; path: QPath; negated: boolean }
  | { kind: 'compare'; path: QPath; op: QCompareOp; value: QValue };

/** Bounds above which a q is refused with TooComplexQuery rather than parsed. */
export const Q_LIMITS = {
  maxLength: 4096,
  maxDepth: 16,
  maxTerms: 128,
  maxListItems: 64,
} as const;

/** The test `!=` and `!~=` complement, and whether they do. */
export function splitOp(op: QCompareOp): { positive: QPositiveOp; negated: boolean } {
  if (op === '!=') return { positive: '==', negated: true };
  if (op === '!~=') return { positive: '~=', negated: true };
  return { positive: op, negated: false };
}

/** A path that names a top-level attribute's own value (no sub-attribute, member or key). */
export const isPlainPath = (p: QPath): boolean => p.subs.length === 0 && p.member === undefined && p.keys.length === 0;
