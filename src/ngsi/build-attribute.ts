// Turning attribute fragments into attributes: kind inference for concise input, member checks per
// kind, merging a fragment into an existing instance, and the timestamps of written instances.

import type {
  Attribute, AttributeBase, AttributeKind, GeoPropertyAttr, Iri, RelationshipAttr, ListRelationshipAttr,
} from './model.js';
import { assertNever } from './model.js';
import { LOCATION, OBSERVATION_SPACE, OPERATION_SPACE } from './vocab.js';
import {
  PAYLOAD_OF, isDeletion, payloadMemberOf, type AttributeFragment, type AttributeInput,
} from './fragment.js';

/** Attributes whose `value` is a geometry by definition (NGSI-LD §4.7: location, observationSpace, operationSpace). */
const GEO_ATTRIBUTES: ReadonlySet<Iri> = new Set([LOCATION, OBSERVATION_SPACE, OPERATION_SPACE]);
/** Whether an attribute is one of the core geo attributes. */
export const isGeoAttribute = (attr: Iri): boolean => GEO_ATTRIBUTES.has(attr);

const isRelationshipKind = (k: AttributeKind): boolean => k === 'Relationship' || k === 'ListRelationship';

/**
 * The kind of an attribute given without `type` (concise input, NGSI-LD §4.5 concise representation):
 * - `value` → GeoProperty when the value has the shape of a geometry, or when it sits in a `value`
 *   member of location, observationSpace or operationSpace; otherwise Property;
 * - `object` → Relationship, `languageMap` → LanguageProperty, `vocab` → VocabProperty,
 *   `json` → JsonProperty, `valueList` → ListProperty, `objectList` → ListRelationship;
 * - a bare non-object value (number, string, boolean, array) → Property; a bare geometry → GeoProperty.
 * Undefined when nothing tells (no `type`, no payload member).
 */
function inferKind(f: AttributeFragment, attr: Iri): AttributeKind | undefined {
  if (f.kind !== undefined) return f.kind;
  const member = payloadMemberOf(f);
  switch (member) {
    case undefined: return undefined;
    case 'value': return f.value?.looksGeo || (f.value?.bare === false && isGeoAttribute(attr)) ? 'GeoProperty' : 'Property';
    case 'object': return 'Relationship';
    case 'languageMap': return 'LanguageProperty';
    case 'vocab': return 'VocabProperty';
    case 'json': return 'JsonProperty';
    case 'valueList': return 'ListProperty';
    case 'objectList': return 'ListRelationship';
    default: return assertNever(member, 'payload member');
  }
}

function onlyAttributes(sub: Record<Iri, AttributeInput>): Record<Iri, Attribute> {
  const out: Record<Iri, Attribute> = {};
  for (const [iri, input] of Object.entries(sub)) if (!isDeletion(input)) out[iri] = input;
  return out;
}

function withObjectType<T extends RelationshipAttr | ListRelationshipAttr>(a: T, f: AttributeFragment): T {
  return f.objectType === undefined ? a : { ...a, objectType: f.objectType };
}

/**
 * The attribute a fragment describes on its own, stamped created and modified at `now`, or the
 * reason it describes none (no payload, a payload of another kind, an invalid geometry).
 */
export function buildAttribute(f: AttributeFragment, attr: Iri, now: number): Attribute | string {
  const kind = inferKind(f, attr);
  if (kind === undefined) return 'no value, object, languageMap, vocab, json, valueList or objectList given';
  const member = payloadMemberOf(f);
  if (member === undefined) return `a ${kind} needs a '${PAYLOAD_OF[kind]}' member`;
  if (member !== PAYLOAD_OF[kind]) return `a ${kind} carries '${PAYLOAD_OF[kind]}', not '${member}'`;
  if (f.objectType !== undefined && !isRelationshipKind(kind)) return `objectType is not allowed on a ${kind}`;
  const base: AttributeBase = { createdAt: now, modifiedAt: now, sub: onlyAttributes(f.sub) };
  if (f.datasetId !== undefined) base.datasetId = f.datasetId;
  if (f.observedAt !== undefined) base.observedAt = f.observedAt;
  if (f.observedAt !== undefined && f.observedAtText !== undefined) base.observedAtText = f.observedAtText;
  if (f.unitCode !== undefined) base.unitCode = f.unitCode;
  switch (kind) {
    case 'Property':
      return f.value ? { ...base, kind, value: f.value.property } : 'missing value';
    case 'GeoProperty': {
      if (!f.value) return 'missing value';
      if (!f.value.geometry.ok) return `invalid GeoProperty value: ${f.value.geometry.reason}`;
      const geo: GeoPropertyAttr = { ...base, kind, value: f.value.geometry.geometry };
      return geo;
    }
    case 'Relationship':
      return f.object === undefined ? 'missing object' : withObjectType({ ...base, kind, object: f.object }, f);
    case 'LanguageProperty':
      return f.languageMap ? { ...base, kind, languageMap: f.languageMap } : 'missing languageMap';
    case 'VocabProperty':
      return f.vocab === undefined ? 'missing vocab' : { ...base, kind, vocab: f.vocab };
    case 'JsonProperty':
      return f.json === undefined ? 'missing json' : { ...base, kind, json: f.json };
    case 'ListProperty':
      return f.valueList ? { ...base, kind, valueList: f.valueList } : 'missing valueList';
    case 'ListRelationship':
      return f.objectList ? withObjectType({ ...base, kind, objectList: f.objectList }, f) : 'missing objectList';
    default:
      return assertNever(kind, 'attribute kind');
  }
}

/** The payload of an existing attribute, as fragment members (to keep it through a merge). */
function payloadOf(a: Attribute): Partial<AttributeFragment> {
  switch (a.kind) {
    case 'Property':
      return { value: { property: a.value, geometry: { ok: false, reason: 'not a GeoProperty' }, looksGeo: false, bare: false } };
    case 'GeoProperty':
      return { value: { property: a.value, geometry: { ok: true, geometry: a.value }, looksGeo: true, bare: false } };
    case 'Relationship': return { object: a.object };
    case 'LanguageProperty': return { languageMap: a.languageMap };
    case 'VocabProperty': return { vocab: a.vocab };
    case 'JsonProperty': return { json: a.json };
    case 'ListProperty': return { valueList: a.valueList };
    case 'ListRelationship': return { objectList: a.objectList };
    default: return assertNever(a, 'attribute');
  }
}

/** Sub-attributes merged: given ones added or replaced (keeping createdAt), NGSI-LD Null removes. */
function mergeSubAttributes(
  existing: Record<Iri, Attribute>, given: Record<Iri, AttributeInput>, now: number,
): Record<Iri, Attribute> {
  const out: Record<Iri, Attribute> = { ...existing };
  for (const [iri, input] of Object.entries(given)) {
    if (isDeletion(input)) delete out[iri];
    else out[iri] = { ...input, createdAt: existing[iri]?.createdAt ?? now, modifiedAt: now };
  }
  return out;
}

/**
 * Merges a fragment into an existing instance (NGSI-LD §5.6.4, §5.6.17): given members replace,
 * others stay; sub-attributes are merged; the kind changes only when `type` says so.
 * Returns the reason when the fragment cannot apply.
 */
export function mergeAttribute(existing: Attribute, f: AttributeFragment, attr: Iri, now: number): Attribute | string {
  const member = payloadMemberOf(f);
  const kind = f.kind ?? (member === undefined || member === PAYLOAD_OF[existing.kind] ? existing.kind : undefined);
  if (kind === undefined) return `the attribute is a ${existing.kind}: give 'type' to change its kind`;
  if (member === undefined && kind !== existing.kind) {
    return `changing a ${existing.kind} into a ${kind} needs a '${PAYLOAD_OF[kind]}' member`;
  }
  const merged: AttributeFragment = {
    ...(member === undefined ? payloadOf(existing) : {}),
    ...f,
    kind,
    sub: mergeSubAttributes(existing.sub, f.sub, now),
  };
  if (merged.observedAt === undefined && existing.observedAt !== undefined) {
    merged.observedAt = existing.observedAt;
    if (existing.observedAtText !== undefined) merged.observedAtText = existing.observedAtText;
  }
  if (merged.unitCode === undefined && existing.unitCode !== undefined) merged.unitCode = existing.unitCode;
  if (merged.datasetId === undefined && existing.datasetId !== undefined) merged.datasetId = existing.datasetId;
  if (merged.objectType === undefined && isRelationshipKind(kind)
    && (existing.kind === 'Relationship' || existing.kind === 'ListRelationship') && existing.objectType !== undefined) {
    merged.objectType = existing.objectType;
  }
  const built = buildAttribute(merged, attr, now);
  return typeof built === 'string' ? built : { ...built, createdAt: existing.createdAt, modifiedAt: now };
}

/**
 * Timestamps of an instance written over `previous` (or new): createdAt kept from what it replaces,
 * modifiedAt now; the same for its sub-attributes.
 */
export function restamp(a: Attribute, previous: Attribute | undefined, now: number): Attribute {
  const sub: Record<Iri, Attribute> = {};
  for (const [iri, s] of Object.entries(a.sub)) {
    sub[iri] = { ...s, createdAt: previous?.sub[iri]?.createdAt ?? now, modifiedAt: now };
  }
  return { ...a, sub, createdAt: previous?.createdAt ?? now, modifiedAt: now };
}
