// The broker's entity model: NGSI-LD entities with every user term already expanded to an IRI.
// Compact names exist only at the edges (see jsonld/ for the term maps that translate them).

import type { AttributeKind } from './vocab.js';

/** An expanded IRI (attribute name, entity type, vocab value). */
export type Iri = string;
/** An entity id: an absolute URI, never expanded through a context. */
export type EntityId = string;

/** JSON as it arrives and leaves: no `undefined`, no functions. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** Members shared by every attribute kind. Instants are UTC epoch milliseconds. */
export interface AttributeBase {
  datasetId?: string;
  observedAt?: number;
  /**
   * observedAt as the writer wrote it, when that differs from formatDateTime's form (e.g. no
   * milliseconds, or an offset): rendered verbatim so the instant round-trips exactly.
   */
  observedAtText?: string;
  unitCode?: string;
  createdAt: number;
  modifiedAt: number;
  /** Sub-attributes (observedBy, accuracy, ...) keyed by expanded IRI. One instance each. */
  sub: Record<Iri, Attribute>;
}

export interface PropertyAttr extends AttributeBase {
  kind: 'Property';
  /** Any JSON; keys of objects inside are expanded IRIs (NOTE: `@`-keys, `id` and `type` kept). */
  value: Json;
}
export interface RelationshipAttr extends AttributeBase {
  kind: 'Relationship';
  object: string | string[];
  objectType?: Iri;
}
export interface GeoPropertyAttr extends AttributeBase {
  kind: 'GeoProperty';
  /** A GeoJSON geometry, verbatim. */
  value: { type: string; coordinates?: Json; geometries?: Json };
}
export interface LanguagePropertyAttr extends AttributeBase {
  kind: 'LanguageProperty';
  languageMap: Record<string, string | string[]>;
}
export interface VocabPropertyAttr extends AttributeBase {
  kind: 'VocabProperty';
  /** Expanded IRI(s). */
  vocab: Iri | Iri[];
}
export interface JsonPropertyAttr extends AttributeBase {
  kind: 'JsonProperty';
  /** Verbatim JSON (JSON-LD `@json`): keys are never expanded. */
  json: Json;
}
export interface ListPropertyAttr extends AttributeBase {
  kind: 'ListProperty';
  valueList: Json[];
}
export interface ListRelationshipAttr extends AttributeBase {
  kind: 'ListRelationship';
  objectList: string[];
  objectType?: Iri;
}

export type Attribute =
  | PropertyAttr | RelationshipAttr | GeoPropertyAttr | LanguagePropertyAttr
  | VocabPropertyAttr | JsonPropertyAttr | ListPropertyAttr | ListRelationshipAttr;

export type { AttributeKind };

/** All instances of one attribute: at most one without datasetId, no duplicate datasetId. */
export type AttributeInstances = Attribute[];

export interface Entity {
  id: EntityId;
  /** Expanded type IRIs, at least one. */
  types: Iri[];
  scope?: string[];
  attrs: Record<Iri, AttributeInstances>;
  createdAt: number;
  modifiedAt: number;
  deletedAt?: number;
  /** NGSI-LD §4.22 transient entity: when it is removed (epoch ms); absent for a permanent entity. */
  expiresAt?: number;
  /** expiresAt as the writer wrote it, when that differs from formatDateTime's form: shown back verbatim. */
  expiresAtText?: string;
}

export function assertNever(x: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(x)}`);
}
