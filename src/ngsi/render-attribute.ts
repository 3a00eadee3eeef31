// Rendering attribute instances back to compact JSON in the three representations of NGSI-LD §4.5:
// normalized, concise and simplified (keyValues), with language filtering and inline joins.

import type { Attribute, EntityId, Iri, Json } from './model.js';
import { assertNever } from './model.js';
import type { TermMapper } from './terms.js';
import { compactValueKeys, isPlainObject, type JsonObject } from './json.js';
import { looksLikeGeometry } from './geometry.js';
import { formatDateTime } from './time.js';
import { pickLanguage, type LanguagePreference } from './lang.js';
import { isGeoAttribute } from './build-attribute.js';

export type RepresentationFormat = 'normalized' | 'keyValues' | 'concise';

export interface AttributeRenderContext {
  mapper: TermMapper;
  format: RepresentationFormat;
  sysAttrs: boolean;
  /** createdAt on attributes and sub-attributes even without sysAttrs. */
  createdAt?: boolean;
  /** Language filter; undefined or `*` keeps languageMaps. */
  lang: LanguagePreference | undefined;
  /** join=inline: the rendered entity a relationship points to, when known. */
  inline: ((id: EntityId) => JsonObject | undefined) | undefined;
}

const compactIris = (v: Iri | Iri[], mapper: TermMapper): Json =>
  Array.isArray(v) ? v.map((i) => mapper.compactIri(i)) : mapper.compactIri(v);

/** compactValueKeys, answering a scalar (the usual value) without walking it. */
const compactKeys = (v: Json, mapper: TermMapper): Json => (typeof v === 'object' && v !== null ? compactValueKeys(v, mapper) : v);

/** The language entry a filter selects, or undefined when the whole map is to be shown. */
function filteredLanguage(map: Record<string, string | string[]>, ctx: AttributeRenderContext):
  { tag: string; text: string | string[] } | undefined {
  if (ctx.lang === undefined) return undefined;
  const tag = pickLanguage(Object.keys(map), ctx.lang.ranges);
  const text = tag === undefined ? undefined : map[tag];
  return tag === undefined || text === undefined ? undefined : { tag, text };
}

/** `type` and the payload member(s) of the normalized form. */
function payload(a: Attribute, ctx: AttributeRenderContext): JsonObject {
  const { mapper } = ctx;
  switch (a.kind) {
    case 'Property': return { type: a.kind, value: compactKeys(a.value, mapper) };
    case 'GeoProperty': return { type: a.kind, value: a.value };
    case 'Relationship': return { type: a.kind, object: a.object };
    case 'LanguageProperty': {
      // NGSI-LD §4.15: a filtered LanguageProperty is shown as a Property with a `lang` member.
      const chosen = filteredLanguage(a.languageMap, ctx);
      return chosen ? { type: 'Property', value: chosen.text, lang: chosen.tag } : { type: a.kind, languageMap: a.languageMap };
    }
    case 'VocabProperty': return { type: a.kind, vocab: compactIris(a.vocab, mapper) };
    case 'JsonProperty': return { type: a.kind, json: a.json };
    case 'ListProperty': return { type: a.kind, valueList: a.valueList.map((v) => compactValueKeys(v, mapper)) };
    case 'ListRelationship': return { type: a.kind, objectList: a.objectList.map((object) => ({ object })) };
    default: return assertNever(a, 'attribute');
  }
}

/** join=inline (NGSI-LD §4.5.23): `entity` for one target, `entityList` for several. */
function inlined(a: Attribute, ctx: AttributeRenderContext): JsonObject {
  if (ctx.inline === undefined) return {};
  const inline = ctx.inline;
  if (a.kind === 'Relationship' && typeof a.object === 'string') {
    const entity = inline(a.object);
    return entity ? { entity } : {};
  }
  const targets = a.kind === 'Relationship' ? [a.object].flat() : a.kind === 'ListRelationship' ? a.objectList : [];
  const found = targets.map(inline).filter((e): e is JsonObject => e !== undefined);
  return found.length > 0 ? { entityList: found } : {};
}

/** The normalized form of one instance; sub-attributes follow the context's format. */
function renderObject(a: Attribute, ctx: AttributeRenderContext, top: boolean): JsonObject {
  const out = payload(a, ctx);
  if ((a.kind === 'Relationship' || a.kind === 'ListRelationship') && a.objectType !== undefined) {
    out.objectType = ctx.mapper.compactIri(a.objectType);
  }
  if (top && ctx.inline !== undefined) Object.assign(out, inlined(a, ctx));
  if (a.datasetId !== undefined) out.datasetId = a.datasetId;
  if (a.observedAt !== undefined) out.observedAt = a.observedAtText ?? formatDateTime(a.observedAt);
  if (a.unitCode !== undefined) out.unitCode = a.unitCode;
  if (ctx.sysAttrs) {
    out.createdAt = formatDateTime(a.createdAt);
    out.modifiedAt = formatDateTime(a.modifiedAt);
  } else if (ctx.createdAt === true) {
    out.createdAt = formatDateTime(a.createdAt);
  }
  for (const iri of Object.keys(a.sub)) {
    const sub = a.sub[iri];
    if (sub === undefined) continue;
    out[ctx.mapper.compactIri(iri)] = ctx.format === 'concise' ? renderConcise(sub, iri, ctx, true, false) : renderObject(sub, ctx, false);
  }
  return out;
}

/** A value that concise input reads back as the value of a Property when given bare. */
function isBareable(v: Json): boolean {
  if (v === null) return false;
  if (Array.isArray(v)) return v.length === 0 || !v.every(isPlainObject);
  return typeof v !== 'object';
}

/**
 * Concise form (NGSI-LD §4.5, concise representation), chosen so that parsing it gives back the same
 * instance: `type` is dropped wherever the payload member implies it, except for a Property whose
 * value looks like a geometry or which sits on location/observationSpace/operationSpace; a Property
 * with nothing but a non-object value, and a GeoProperty with nothing but its geometry, become bare.
 */
function renderConcise(a: Attribute, attr: Iri, ctx: AttributeRenderContext, allowBare: boolean, top: boolean): Json {
  const { type, ...rest } = renderObject(a, ctx, top);
  const onlyPayload = Object.keys(rest).length === 1;
  if (a.kind === 'GeoProperty') return allowBare && onlyPayload ? a.value : rest;
  if (a.kind !== 'Property' || rest.value === undefined) return rest;
  if (allowBare && onlyPayload && isBareable(rest.value)) return rest.value;
  const ambiguous = looksLikeGeometry(rest.value) || isGeoAttribute(attr);
  return ambiguous && type !== undefined ? { type, ...rest } : rest;
}

/** keyValues (NGSI-LD §4.5.4): the payload alone; kinds other than (Geo)Property/Relationship keep their member name. */
function simplify(a: Attribute, ctx: AttributeRenderContext): Json {
  switch (a.kind) {
    case 'Property': return compactKeys(a.value, ctx.mapper);
    case 'GeoProperty': return a.value;
    case 'Relationship': {
      const linked = typeof a.object === 'string' ? ctx.inline?.(a.object) : undefined;
      return linked ?? a.object;
    }
    case 'LanguageProperty': return filteredLanguage(a.languageMap, ctx)?.text ?? { languageMap: a.languageMap };
    case 'VocabProperty': return { vocab: compactIris(a.vocab, ctx.mapper) };
    case 'JsonProperty': return { json: a.json };
    case 'ListProperty': return { valueList: a.valueList.map((v) => compactValueKeys(v, ctx.mapper)) };
    case 'ListRelationship': return { objectList: a.objectList };
    default: return assertNever(a, 'attribute');
  }
}

/**
 * All instances of one attribute. One instance renders as itself; several as an array (normalized,
 * concise), or in keyValues as `{"dataset": {<datasetId or @none>: <simplified>}}` (NGSI-LD §4.5.4).
 */
export function renderAttribute(attr: Iri, instances: readonly Attribute[], ctx: AttributeRenderContext): Json {
  const [only] = instances;
  if (instances.length === 1 && only !== undefined) {
    if (ctx.format === 'keyValues') return simplify(only, ctx);
    return ctx.format === 'concise' ? renderConcise(only, attr, ctx, true, true) : renderObject(only, ctx, true);
  }
  if (ctx.format === 'keyValues') {
    const dataset: JsonObject = {};
    for (const a of instances) dataset[a.datasetId ?? '@none'] = simplify(a, ctx);
    return { dataset };
  }
  return instances.map((a) => (ctx.format === 'concise' ? renderConcise(a, attr, ctx, false, true) : renderObject(a, ctx, true)));
}
