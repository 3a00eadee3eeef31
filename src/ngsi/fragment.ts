// What the parser hands to the update rules besides whole entities: attribute instances to write,
// NGSI-LD Null deletions, and partial attribute fragments whose kind is settled against the target.

import type { Attribute, AttributeKind, EntityId, Iri, Json } from './model.js';
import type { GeometryCheck } from './geometry.js';

/** NGSI-LD Null given for an attribute instance in an update or merge: delete that instance. */
export interface AttributeDeletion {
  readonly deleted: true;
  /** The instance to delete; absent for the default instance. */
  datasetId?: string;
}

/** One instance in an update body: a whole attribute to write, or a deletion. */
export type AttributeInput = Attribute | AttributeDeletion;
/** The attributes of an update body, keyed by expanded name. */
export type AttributeInputs = Record<Iri, AttributeInput[]>;

/** Whether an update input stands for an NGSI-LD Null deletion. */
export function isDeletion<T extends object>(a: T | AttributeDeletion): a is AttributeDeletion {
  return 'deleted' in a && a.deleted === true;
}

/**
 * A `value` member read both ways, since only the target attribute decides between Property and
 * GeoProperty in a partial update: keys expanded for a Property, checked as a geometry for a GeoProperty.
 */
export interface FragmentValue {
  property: Json;
  geometry: GeometryCheck;
  /** The value has the shape of a geometry (concise inference makes it a GeoProperty). */
  looksGeo: boolean;
  /** The value was given bare (concise), not inside a `value` member. */
  bare: boolean;
}

/**
 * The members of one attribute instance as given, nothing implied (NGSI-LD §5.6.4, §5.6.17). At most
 * one payload member (value, object, languageMap, vocab, json, valueList, objectList) is present.
 */
export interface AttributeFragment {
  /** The kind given by the `type` member. */
  kind?: AttributeKind;
  datasetId?: string;
  observedAt?: number;
  /** observedAt as written, when not in formatDateTime's form (see AttributeBase). */
  observedAtText?: string;
  unitCode?: string;
  objectType?: Iri;
  value?: FragmentValue;
  object?: string | string[];
  languageMap?: Record<string, string | string[]>;
  vocab?: Iri | Iri[];
  json?: Json;
  valueList?: Json[];
  objectList?: string[];
  /** Sub-attributes to add or replace, or to delete (NGSI-LD Null). */
  sub: Record<Iri, AttributeInput>;
}

export type FragmentInput = AttributeFragment | AttributeDeletion;

/** The entity members an update body may carry besides attributes (NGSI-LD §4.16, §4.18). */
export interface EntityMembers {
  /** Types to add. */
  types?: Iri[];
  /** The scope given, or 'deleted' when NGSI-LD Null was given. */
  scope?: string[] | 'deleted';
  /** The expiry given (NGSI-LD §4.22), or 'deleted' when NGSI-LD Null was given (the entity becomes permanent). */
  expiresAt?: ExpiresAt | 'deleted';
}

/** An entity's expiresAt as written: the instant, and the text when it differs from formatDateTime's form. */
export interface ExpiresAt {
  at: number;
  text?: string;
}

/** The body of a merge (PATCH /entities/{id}, NGSI-LD §5.6.17). */
export interface EntityFragment extends EntityMembers {
  id?: EntityId;
  attrs: Record<Iri, FragmentInput[]>;
}

/** The payload members, in the order the attribute kinds are listed. */
export const PAYLOAD_MEMBERS = ['value', 'object', 'languageMap', 'vocab', 'json', 'valueList', 'objectList'] as const;
export type PayloadMember = (typeof PAYLOAD_MEMBERS)[number];

/** The payload member each kind carries (NGSI-LD §4.5). */
export const PAYLOAD_OF: Readonly<Record<AttributeKind, PayloadMember>> = {
  Property: 'value',
  GeoProperty: 'value',
  Relationship: 'object',
  LanguageProperty: 'languageMap',
  VocabProperty: 'vocab',
  JsonProperty: 'json',
  ListProperty: 'valueList',
  ListRelationship: 'objectList',
};

export function payloadMemberOf(f: AttributeFragment): PayloadMember | undefined {
  return PAYLOAD_MEMBERS.find((m) => f[m] !== undefined);
}
