// Temporal representations (NGSI-LD §4.5.7 normalized, §4.5.9 simplified `temporalValues`, §4.5.19
// aggregated), compacted with the request's term mapper; instance payloads reuse ngsi's renderers,
// but for scalar Properties (most history), built here to the same result.

import type { HistoryInstance } from '../history-instance.js';
import type { JsonObject } from '../json.js';
import type { Attribute, Entity, Iri, Json, PropertyAttr } from '../model.js';
import { nullPayloadOf } from '../null-payload.js';
import { renderEntity } from '../render.js';
import type { TermMapper } from '../terms.js';
import { formatDateTime } from '../time.js';
import { NGSI_LD_NULL, SUB, type AttributeKind } from '../vocab.js';
import type { AggregatedSeries, AggrMethod, TemporalEntity, TemporalView, TimedInstance, TimeProperty } from './model.js';
import { createDateTimeFormatter, formatComputedInstant } from './date-time.js';

export interface TemporalRenderContext {
  mapper: TermMapper;
  view: TemporalView;
  timeproperty: TimeProperty;
  /** Formats the instants of the answer (equal to formatDateTime; see createDateTimeFormatter). */
  formatTime: (ms: number) => string;
  /** The kind of an attribute none of whose shown instances has a value (deletions only). */
  kindOf?: (attr: Iri) => AttributeKind | undefined;
}



/** The member holding [value, time] pairs in the simplified temporal representation (§4.5.9). */
const VALUES_MEMBER: Record<AttributeKind, string> = {
  Property: 'values',
  GeoProperty: 'values',
  Relationship: 'objects',
  LanguageProperty: 'languageMaps',
  VocabProperty: 'vocabs',
  JsonProperty: 'jsons',
  ListProperty: 'valueLists',
  ListRelationship: 'objectLists',
};

/**
 * keyValues wraps the payload of these kinds in their member; the temporal pair carries it bare.
 * NOTE: LanguageProperty, VocabProperty and JsonProperty pairs keep the wrapper (NGSI-LD §4.5.9:
 * `[{"languageMap": {...}}, t]`, `[{"vocab": ...}, t]`, `[{"json": ...}, t]`), as their deletions do.
 */
const WRAPPED: Partial<Record<AttributeKind, string>> = { ListProperty: 'valueList', ListRelationship: 'objectList' };

/** The simplified value of a deletion instance: NGSI-LD Null, inside the member of the kinds that keep it. */
const nullValueOf = (kind: AttributeKind): Json =>
  (kind === 'LanguageProperty' || kind === 'VocabProperty' || kind === 'JsonProperty' ? nullPayloadOf(kind) : NGSI_LD_NULL);

const oneOrMany = (items: Json[]): Json => (items.length === 1 ? items[0]! : items);

/** The kind of an attribute: that of its latest instance with a value, else `fallback`. */
export function kindOf(instances: readonly TimedInstance[], fallback: AttributeKind = 'Property'): AttributeKind {
  for (let i = instances.length - 1; i >= 0; i--) {
    const a = instances[i]!.instance.attribute;
    if (a) return a.kind;
  }
  return fallback;
}

/** Renders attribute instances through ngsi's entity renderer: one result per instance, in order. */
function renderPayloads(attr: Iri, attributes: Attribute[], mapper: TermMapper, format: 'normalized' | 'keyValues', sysAttrs: boolean): Json[] {
  if (attributes.length === 0) return [];
  const name = mapper.compactIri(attr);
  const render = (list: Attribute[]): Json | undefined =>
    renderEntity({ id: '', types: [], attrs: { [attr]: list }, createdAt: 0, modifiedAt: 0 }, mapper, { format, sysAttrs })[name];
  if (format === 'normalized') {
    const out = render(attributes);
    return Array.isArray(out) ? out : out === undefined ? [] : [out];
  }
  // keyValues merges several instances by datasetId: render them one at a time.
  return attributes.map((a) => render([a]) ?? null);
}

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A Property whose value is a number, string or boolean. */
type ScalarProperty = PropertyAttr & { value: number | string | boolean };

const isScalarProperty = (a: Attribute): a is ScalarProperty => a.kind === 'Property' && a.value !== null && typeof a.value !== 'object';

/** A scalar Property without sub-attributes, rendered here; undefined for anything ngsi's renderer is needed for. */
function asPlain(a: Attribute): ScalarProperty | undefined {
  if (!isScalarProperty(a)) return undefined;
  for (const _ in a.sub) return undefined;
  return a;
}

/**
 * What ngsi's normalized renderer makes of a scalar Property without sub-attributes (the common
 * sensor reading), built directly: no entity to wrap it in, no value keys to compact.
 */
function renderScalarProperty(a: ScalarProperty, sysAttrs: boolean, formatTime: (ms: number) => string): JsonObject {
  const out: JsonObject = { type: 'Property', value: a.value };
  if (a.datasetId !== undefined) out.datasetId = a.datasetId;
  if (a.observedAt !== undefined) out.observedAt = a.observedAtText ?? formatTime(a.observedAt);
  if (a.unitCode !== undefined) out.unitCode = a.unitCode;
  if (sysAttrs) {
    out.createdAt = formatTime(a.createdAt);
    out.modifiedAt = formatTime(a.modifiedAt);
  }
  return out;
}

/** Normalized (NGSI-LD §4.5.7): always an array of instances, each with its instanceId. */
export function renderNormalized(attr: Iri, instances: readonly TimedInstance[], ctx: TemporalRenderContext): Json[] {
  const { mapper, view, timeproperty, formatTime } = ctx;
  const kind = kindOf(instances, ctx.kindOf?.(attr));
  // Instances other than plain scalar Properties go through ngsi's renderer, all in one call.
  const generic = instances.flatMap(({ instance: { attribute: a } }) => (a !== undefined && !asPlain(a) ? [a] : []));
  const payloads = renderPayloads(attr, generic, mapper, 'normalized', view.sysAttrs);
  const subKey = mapper.compactIri(SUB) === SUB ? 'sub' : mapper.compactIri(SUB);
  let next = 0;
  const out: Json[] = new Array<Json>(instances.length);
  for (let i = 0; i < instances.length; i++) {
    const { instance } = instances[i]!;
    const a = instance.attribute;
    const plain = a === undefined ? undefined : asPlain(a);
    let rendered: JsonObject;
    if (a === undefined) rendered = deletionOf(instance, kind, view.sysAttrs, formatTime);
    else if (plain) rendered = renderScalarProperty(plain, view.sysAttrs, formatTime);
    else {
      const payload = payloads[next++];
      rendered = isObject(payload) ? { ...payload } : { type: kind, ...nullPayloadOf(kind) };
    }
    rendered.instanceId = instance.instanceId;
    if (timeproperty === 'createdAt') rendered.createdAt = formatTime(instance.createdAt);
    if (timeproperty === 'modifiedAt') rendered.modifiedAt = formatTime(instance.modifiedAt);
    if (instance.deletedAt !== undefined) rendered.deletedAt = formatTime(instance.deletedAt);
    // Interface §2.9: the writer's subject, where one was recorded, on audit reads.
    if (view.audit && timeproperty !== 'observedAt' && instance.subject !== undefined) {
      rendered[subKey] = { type: 'Property', value: instance.subject };
    }
    out[i] = rendered;
  }
  return out;
}

/** A deletion instance: NGSI-LD Null in the payload member of the attribute's kind. */
function deletionOf(instance: HistoryInstance, kind: AttributeKind, sysAttrs: boolean, formatTime: (ms: number) => string): JsonObject {
  const out: JsonObject = { type: kind, ...nullPayloadOf(kind) };
  if (instance.datasetId !== undefined) out.datasetId = instance.datasetId;
  if (sysAttrs) {
    out.createdAt = formatTime(instance.createdAt);
    out.modifiedAt = formatTime(instance.modifiedAt);
  }
  return out;
}

/** Splits instances by datasetId, keeping the order of first appearance and the time order within. */
function byDataset(instances: readonly TimedInstance[]): Array<{ datasetId?: string; instances: TimedInstance[] }> {
  const groups = new Map<string, { datasetId?: string; instances: TimedInstance[] }>();
  for (const t of instances) {
    const key = t.instance.datasetId ?? '';
    let g = groups.get(key);
    if (!g) {
      g = t.instance.datasetId === undefined ? { instances: [] } : { datasetId: t.instance.datasetId, instances: [] };
      groups.set(key, g);
    }
    g.instances.push(t);
  }
  return [...groups.values()];
}

/** temporalValues (NGSI-LD §4.5.9): per datasetId `{type, values: [[value, time], ...]}`. */
export function renderTemporalValues(attr: Iri, instances: readonly TimedInstance[], ctx: TemporalRenderContext): Json {
  const { formatTime } = ctx;
  if (instances.length === 0) {
    // All cut off by temporal pagination: the attribute stays, with no pairs (NGSI-LD §6.3.10).
    const kind = ctx.kindOf?.(attr) ?? 'Property';
    return { type: kind, [VALUES_MEMBER[kind]]: [] };
  }
  // The simplified value of a scalar Property is the value itself: only the others go through ngsi's renderer.
  return oneOrMany(byDataset(instances).map((g) => {
    const kind = kindOf(g.instances, ctx.kindOf?.(attr));
    const values = renderPayloads(attr, g.instances.flatMap((t) => (t.instance.attribute && !isScalarProperty(t.instance.attribute)
      ? [t.instance.attribute] : [])), ctx.mapper, 'keyValues', false);
    let next = 0;
    const pairs: Json[] = g.instances.map((t) => {
      const a = t.instance.attribute;
      let v: Json = nullValueOf(kind);
      if (a && isScalarProperty(a)) v = a.value;
      else if (a) {
        const simplified = values[next++] ?? null;
        const member = WRAPPED[a.kind];
        v = member !== undefined && isObject(simplified) ? simplified[member] ?? null : simplified;
      }
      // The observedAt of an instance as written (AttributeBase.observedAtText), else formatted.
      const text = ctx.timeproperty === 'observedAt' ? a?.observedAtText : undefined;
      return [v, text ?? formatTime(t.time)];
    });
    const out: JsonObject = { type: kind, [VALUES_MEMBER[kind]]: pairs };
    if (g.datasetId !== undefined) out.datasetId = g.datasetId;
    return out;
  }));
}

/** aggregatedValues (NGSI-LD §4.5.19): per datasetId `{type, <method>: [[value, start, end], ...]}`. */
export function renderAggregated(
  series: readonly AggregatedSeries[], methods: readonly AggrMethod[], formatTime: (ms: number) => string,
): Json {
  return oneOrMany(series.map((s) => {
    const out: JsonObject = { type: s.kind };
    // Every method shows the same periods: their bounds are formatted once.
    const starts = s.periods.map((p) => formatTime(p.start));
    const ends = s.periods.map((p) => formatTime(p.end));
    for (const m of methods) out[m] = s.periods.map((p, i) => [p.values[m] ?? null, starts[i]!, ends[i]!]);
    if (s.datasetId !== undefined) out.datasetId = s.datasetId;
    return out;
  }));
}

/** Whether a top-level member survives pick / omit. */
export function isShown(view: TemporalView, member: string): boolean {
  if (view.pick && !view.pick.has(member)) return false;
  return !(view.omit && view.omit.has(member));
}

/** The temporal entity: id, type (from its latest document), system members, then the attributes. */
export function renderTemporalEntity(entity: Entity, attrs: ReadonlyArray<[Iri, Json]>, ctx: TemporalRenderContext): JsonObject {
  const { mapper, view } = ctx;
  const out: JsonObject = {};
  if (isShown(view, 'id')) out.id = entity.id;
  if (isShown(view, 'type')) out.type = oneOrMany(entity.types.map((t) => mapper.compactIri(t)));
  if (view.sysAttrs) {
    out.createdAt = formatDateTime(entity.createdAt);
    out.modifiedAt = formatDateTime(entity.modifiedAt);
    if (entity.deletedAt !== undefined) out.deletedAt = formatDateTime(entity.deletedAt);
  }
  for (const [attr, value] of attrs) out[mapper.compactIri(attr)] = value;
  return out;
}

/** What a temporal answer is rendered with: the request's term mapper, the view, the time property. */
export interface TemporalAnswerContext {
  mapper: TermMapper;
  view: TemporalView;
  timeproperty: TimeProperty;
}

/** The temporal entities of one answer, rendered in the requested representation. */
export function renderTemporalEntities(entities: readonly TemporalEntity[], answer: TemporalAnswerContext): JsonObject[] {
  const { mapper, view, timeproperty } = answer;
  const formatTime = createDateTimeFormatter();
  return entities.map(({ entity, attributes }) => {
    const values: Array<[Iri, Json]> = attributes.map((a) => {
      if ('aggregated' in a) return [a.attr, renderAggregated(a.aggregated, view.aggrMethods, formatComputedInstant)];
      const ctx: TemporalRenderContext = { mapper, view, timeproperty, formatTime, kindOf: () => a.kind };
      return [a.attr, view.format === 'temporalValues' ? renderTemporalValues(a.attr, a.instances, ctx) : renderNormalized(a.attr, a.instances, ctx)];
    });
    return renderTemporalEntity(entity, values, { mapper, view, timeproperty, formatTime: formatDateTime });
  });
}
