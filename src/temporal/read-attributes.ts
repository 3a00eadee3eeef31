// The attributes of a temporal read: the series a request shows, grouped per entity and attribute,
// as instances in the window or aggregated periods, cut alike at the cap.

import { isShown, type AggregatedSeries, type AttributeKind, type Entity, type EntityId, type Iri, type TemporalAttribute, type TemporalEntity, type TermMapper } from '../ngsi/index.js';
import type { HistoryReader, HistorySeries, ReadScope } from '../store/index.js';
import { selectAggregates } from './aggregate-read.js';
import { selectInstances, sliceOf, type AttributeGroup } from './selection.js';
import type { TemporalReadResult, TemporalRequest } from './types.js';
import { windowOf } from './window.js';

/** How many of the newest instances are looked at for an attribute's kind (deletions have none). */
const RECENT_FOR_KIND = 16;

const groupKey = (entityId: EntityId, attr: Iri): string => `${entityId}\n${attr}`;

type Group = AttributeGroup & { entityId: EntityId; attr: Iri };

/** The attributes of each entity, and the range of a cut answer. */
interface Attributes {
  perEntity: Map<EntityId, TemporalAttribute[]>;
  range?: TemporalReadResult['range'];
}

/** The kind of the newest instance with a value in the series, whatever the window (every row has modifiedAt). */
function recordedKind(reader: HistoryReader, series: readonly HistorySeries[]): AttributeKind | undefined {
  const recent = reader.read(series, { timeproperty: 'modifiedAt' }, { order: 'desc', skip: 0, limit: RECENT_FOR_KIND });
  return recent.find((t) => t.instance.attribute !== undefined)?.instance.attribute?.kind;
}

/** The series a request shows: attrs, pick/omit of attributes and datasetId applied. */
export function seriesOf(reader: HistoryReader, scope: ReadScope, ids: EntityId[], req: TemporalRequest, projected = true): HistorySeries[] {
  const { view } = req;
  return reader.series(scope, ids, view.attrs ? [...view.attrs] : undefined)
    .filter((s) => !projected || isShown(view, s.attr))
    .filter((s) => !view.datasetIds || view.datasetIds.has(s.datasetId ?? '@none'));
}

/** Whether each entity has an instance in the window, whatever pick and omit show of it. */
function inWindow(reader: HistoryReader, scope: ReadScope, entities: Entity[], req: TemporalRequest): boolean[] {
  const window = windowOf(req.query);
  const all = seriesOf(reader, scope, entities.map((e) => e.id), req, false);
  return entities.map((e) => reader.count(all.filter((s) => s.entityId === e.id), window) > 0);
}

/** The series grouped by entity and attribute (every datasetId of one attribute together), in series order. */
function groupsOf(series: HistorySeries[]): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const s of series) {
    const key = groupKey(s.entityId, s.attr);
    const g = groups.get(key) ?? { key, series: [], entityId: s.entityId, attr: s.attr };
    g.series.push(s);
    groups.set(key, g);
  }
  return groups;
}

function addTo(perEntity: Map<EntityId, TemporalAttribute[]>, entityId: EntityId, attribute: TemporalAttribute): void {
  const list = perEntity.get(entityId) ?? [];
  list.push(attribute);
  perEntity.set(entityId, list);
}

/** The aggregated periods of each attribute (format aggregatedValues). */
function aggregatedAttributes(reader: HistoryReader, limit: number, series: HistorySeries[], groups: Map<string, Group>,
  docs: Map<EntityId, Entity>, req: TemporalRequest, mapper: TermMapper): Attributes {
  const { query, view } = req;
  const perEntity = new Map<EntityId, TemporalAttribute[]>();
  const { series: aggregated, range } = selectAggregates({
    reader, series, window: windowOf(query), view, slice: sliceOf(query), cap: limit, mapper,
    kindOf: (s) => docs.get(s.entityId)?.attrs[s.attr]?.find((a) => a.datasetId === s.datasetId)?.kind ?? recordedKind(reader, [s]) ?? 'Property',
  });
  for (const g of groups.values()) {
    const list = g.series.map((s) => aggregated.get(s.id)).filter((a): a is AggregatedSeries => a !== undefined);
    if (list.length > 0) addTo(perEntity, g.entityId, { attr: g.attr, aggregated: list });
  }
  return range ? { perEntity, range } : { perEntity };
}

/** The instances of each attribute in the window. */
function instanceAttributes(reader: HistoryReader, limit: number, groups: Map<string, Group>, docs: Map<EntityId, Entity>,
  req: TemporalRequest): Attributes {
  const { query } = req;
  const perEntity = new Map<EntityId, TemporalAttribute[]>();
  const { instances, range } = selectInstances(reader, [...groups.values()], windowOf(query), sliceOf(query), limit);
  for (const g of groups.values()) {
    // Absent: nothing in the window; empty: all cut off by the cap, shown empty (NGSI-LD §6.3.10).
    const list = instances.get(g.key);
    if (list === undefined) continue;
    const attribute: TemporalAttribute = { attr: g.attr, instances: list };
    // Deletion instances carry no kind: that of the entity's latest document stands in, else the
    // kind the attribute last had in its history (a deleted attribute keeps its kind, NGSI-LD §4.5.7).
    if (list.some((t) => t.instance.attribute === undefined)) {
      const kind = docs.get(g.entityId)?.attrs[g.attr]?.[0]?.kind ?? recordedKind(reader, g.series);
      if (kind !== undefined) attribute.kind = kind;
    }
    addTo(perEntity, g.entityId, attribute);
  }
  return range ? { perEntity, range } : { perEntity };
}

/**
 * The attributes of each entity, in series order (entity, attribute): instances in the window, or
 * aggregated periods. `mapper` names attributes in errors only.
 */
function attributesOf(reader: HistoryReader, limit: number, series: HistorySeries[], entities: Entity[], req: TemporalRequest,
  mapper: TermMapper): Attributes {
  const docs = new Map(entities.map((e) => [e.id, e]));
  const groups = groupsOf(series);
  return req.view.format === 'aggregatedValues'
    ? aggregatedAttributes(reader, limit, series, groups, docs, req, mapper)
    : instanceAttributes(reader, limit, groups, docs, req);
}

/** The temporal entities, and whether each has an attribute with instances in the window. */
export function collect(reader: HistoryReader, limit: number, scope: ReadScope, entities: Entity[], req: TemporalRequest,
  mapper: TermMapper): TemporalReadResult & { hasInstances: boolean[] } {
  const series = seriesOf(reader, scope, entities.map((e) => e.id), req);
  const { perEntity, range } = attributesOf(reader, limit, series, entities, req, mapper);
  const out: TemporalEntity[] = entities.map((entity) => ({ entity, attributes: perEntity.get(entity.id) ?? [] }));
  const hasInstances = req.view.pick || req.view.omit ? inWindow(reader, scope, entities, req)
    : entities.map((e) => (perEntity.get(e.id)?.length ?? 0) > 0);
  return range ? { entities: out, range, hasInstances } : { entities: out, hasInstances };
}
