// Temporal retrieve and query (NGSI-LD §5.7.3, §5.7.4): entities by their latest document (soft-deleted
// included) with their history in the requested window and representation, cut alike at the cap.

import {
  ResourceNotFoundError, entityFactsOf, isShown, matchesFilter, matchesGeo, type AggregatedSeries, type EntityFilter, type AttributeKind,
  type Entity, type EntityId, type Iri, type Principal, type TemporalAttribute, type TemporalEntity, type TermMapper,
} from '../ngsi/index.js';
import { requireRight } from '../auth/index.js';
import { readScopeOf, type HistorySeries, type HistoryWindow, type ReadScope, type StoreReader } from '../store/index.js';
import { selectAggregates } from './aggregate-read.js';
import { selectInstances, sliceOf, type AttributeGroup } from './selection.js';
import type { TemporalQuery, TemporalReadResult, TemporalRequest, TemporalSelection } from './types.js';

export interface TemporalReadDeps {
  store: StoreReader;
  /** Most instances per attribute in one answer (temporal.limit). */
  limit: number;
}

export interface TemporalPage { limit: number; offset: number; count: boolean }

/** NGSI-LD §4.11: the instants a timerel selects, as a half-open window. */
function windowOf(q: TemporalQuery): HistoryWindow {
  const w: HistoryWindow = { timeproperty: q.timeproperty };
  if ((q.timerel === 'after' || q.timerel === 'between') && q.timeAt !== undefined) w.from = q.timeAt;
  if (q.timerel === 'before' && q.timeAt !== undefined) w.to = q.timeAt;
  if (q.timerel === 'between' && q.endTimeAt !== undefined) w.to = q.endTimeAt;
  return w;
}

/** Entities selected per round when the values filter runs over instances. */
const CANDIDATES_PER_ROUND = 200;

/** How many of the newest instances are looked at for an attribute's kind (deletions have none). */
const RECENT_FOR_KIND = 16;

const groupKey = (entityId: EntityId, attr: Iri): string => `${entityId}\n${attr}`;

export interface TemporalReader {
  /**
   * One entity; 404 when no document of it exists, or it is deleted and has no history left. Reads
   * hand back domain values (the edge renders them); `mapper` names attributes in error details.
   */
  retrieve(actor: Principal, id: EntityId, req: TemporalRequest, mapper: TermMapper): TemporalReadResult;
  /** A page of entities (latest documents, live or deleted) with their temporal evolution. */
  query(actor: Principal, selection: TemporalSelection, page: TemporalPage, req: TemporalRequest, mapper: TermMapper):
    TemporalReadResult & { count?: number; hasMore: boolean };
}

export function createTemporalReader({ store, limit }: TemporalReadDeps): TemporalReader {
  const reader = store.history;

  /** The kind of the newest instance with a value in the series, whatever the window (every row has modifiedAt). */
  const recordedKind = (series: readonly HistorySeries[]): AttributeKind | undefined => {
    const recent = reader.read(series, { timeproperty: 'modifiedAt' }, { order: 'desc', skip: 0, limit: RECENT_FOR_KIND });
    return recent.find((t) => t.instance.attribute !== undefined)?.instance.attribute?.kind;
  };

  /** The series a request shows: attrs, pick/omit of attributes and datasetId applied. */
  const seriesOf = (scope: ReadScope, ids: EntityId[], req: TemporalRequest, projected = true): HistorySeries[] => {
    const { view } = req;
    return reader.series(scope, ids, view.attrs ? [...view.attrs] : undefined)
      .filter((s) => !projected || isShown(view, s.attr))
      .filter((s) => !view.datasetIds || view.datasetIds.has(s.datasetId ?? '@none'));
  };

  /** Whether each entity has an instance in the window, whatever pick and omit show of it. */
  const inWindow = (scope: ReadScope, entities: Entity[], req: TemporalRequest): boolean[] => {
    const window = windowOf(req.query);
    const all = seriesOf(scope, entities.map((e) => e.id), req, false);
    return entities.map((e) => reader.count(all.filter((s) => s.entityId === e.id), window) > 0);
  };

  /**
   * The attributes of each entity, in series order (entity, attribute): instances in the window, or
   * aggregated periods. `mapper` names attributes in errors only.
   */
  const attributesOf = (series: HistorySeries[], entities: Entity[], req: TemporalRequest, mapper: TermMapper):
    { perEntity: Map<EntityId, TemporalAttribute[]>; range?: TemporalReadResult['range'] } => {
    const { query, view } = req;
    const window = windowOf(query);
    const docs = new Map(entities.map((e) => [e.id, e]));
    const perEntity = new Map<EntityId, TemporalAttribute[]>();
    const add = (entityId: EntityId, attribute: TemporalAttribute): void => {
      const list = perEntity.get(entityId) ?? [];
      list.push(attribute);
      perEntity.set(entityId, list);
    };
    const groups = new Map<string, AttributeGroup & { entityId: EntityId; attr: Iri }>();
    for (const s of series) {
      const key = groupKey(s.entityId, s.attr);
      const g = groups.get(key) ?? { key, series: [], entityId: s.entityId, attr: s.attr };
      g.series.push(s);
      groups.set(key, g);
    }
    if (view.format === 'aggregatedValues') {
      const { series: aggregated, range } = selectAggregates({
        reader, series, window, view, slice: sliceOf(query), cap: limit, mapper,
        kindOf: (s) => docs.get(s.entityId)?.attrs[s.attr]?.find((a) => a.datasetId === s.datasetId)?.kind ?? recordedKind([s]) ?? 'Property',
      });
      for (const g of groups.values()) {
        const list = g.series.map((s) => aggregated.get(s.id)).filter((a): a is AggregatedSeries => a !== undefined);
        if (list.length > 0) add(g.entityId, { attr: g.attr, aggregated: list });
      }
      return range ? { perEntity, range } : { perEntity };
    }
    const { instances, range } = selectInstances(reader, [...groups.values()], window, sliceOf(query), limit);
    for (const g of groups.values()) {
      // Absent: nothing in the window; empty: all cut off by the cap, shown empty (NGSI-LD §6.3.10).
      const list = instances.get(g.key);
      if (list === undefined) continue;
      const attribute: TemporalAttribute = { attr: g.attr, instances: list };
      // Deletion instances carry no kind: that of the entity's latest document stands in, else the
      // kind the attribute last had in its history (a deleted attribute keeps its kind, NGSI-LD §4.5.7).
      if (list.some((t) => t.instance.attribute === undefined)) {
        const kind = docs.get(g.entityId)?.attrs[g.attr]?.[0]?.kind ?? recordedKind(g.series);
        if (kind !== undefined) attribute.kind = kind;
      }
      add(g.entityId, attribute);
    }
    return range ? { perEntity, range } : { perEntity };
  };

  /** The temporal entities, and whether each has an attribute with instances in the window. */
  const collect = (scope: ReadScope, entities: Entity[], req: TemporalRequest, mapper: TermMapper):
    TemporalReadResult & { hasInstances: boolean[] } => {
    const series = seriesOf(scope, entities.map((e) => e.id), req);
    const { perEntity, range } = attributesOf(series, entities, req, mapper);
    const out: TemporalEntity[] = entities.map((entity) => ({ entity, attributes: perEntity.get(entity.id) ?? [] }));
    const hasInstances = req.view.pick || req.view.omit ? inWindow(scope, entities, req)
      : entities.map((e) => (perEntity.get(e.id)?.length ?? 0) > 0);
    return range ? { entities: out, range, hasInstances } : { entities: out, hasInstances };
  };

  /**
   * NGSI-LD v1.9 §5.7.4.4: the values filter (q) and the geo-query are checked against the attribute
   * instances the temporal query selects (those in its window), not against the current state: an
   * entity matches when instances in the window satisfy them (each attribute: any of its instances).
   */
  const matchesInWindow = (scope: ReadScope, entity: Entity, filters: readonly EntityFilter[], window: HistoryWindow): boolean => {
    const instances = reader.read(reader.series(scope, [entity.id]), window, { order: 'asc', skip: 0, limit: Infinity });
    const attrs: Entity['attrs'] = {};
    for (const { instance } of instances) {
      if (instance.attribute === undefined) continue;
      (attrs[instance.attr] ??= []).push(instance.attribute);
    }
    const asObserved: Entity = { ...entity, attrs };
    return filters.every((f) => (f.kind === 'geo' ? matchesGeo(f.query, asObserved) : matchesFilter(f, asObserved) === true));
  };

  /**
   * The entities of a query page: the selection in SQL, and the values filter and geo-query over each
   * candidate's instances in the window (the page is then counted after that filter).
   */
  const selectEntities = (scope: ReadScope, selection: TemporalSelection, page: TemporalPage, req: TemporalRequest):
    { entities: Entity[]; count?: number } => {
    const base = { ...selection, ...(req.view.attrs ? { attrs: [...req.view.attrs] } : {}) };
    const byInstances = (selection.filters ?? []).filter((f) => f.kind === 'q' || f.kind === 'geo');
    if (byInstances.length === 0) {
      return store.archive.list(scope, { ...base, limit: page.limit === 0 ? 0 : page.limit + 1, offset: page.offset, count: page.count });
    }
    const rest = (selection.filters ?? []).filter((f) => f.kind !== 'q' && f.kind !== 'geo');
    const window = windowOf(req.query);
    const kept: Entity[] = [];
    let matched = 0;
    for (let offset = 0; ; offset += CANDIDATES_PER_ROUND) {
      const candidates = store.archive.list(scope, { ...base, filters: rest, limit: CANDIDATES_PER_ROUND, offset, count: false }).entities;
      for (const e of candidates) {
        if (!matchesInWindow(scope, e, byInstances, window)) continue;
        matched += 1;
        if (matched > page.offset && kept.length <= page.limit) kept.push(e);
      }
      if (candidates.length < CANDIDATES_PER_ROUND || (!page.count && kept.length > page.limit)) break;
    }
    return page.count ? { entities: kept, count: matched } : { entities: kept };
  };

  /** Whether a temporal entity would show no member at all (pick and omit leave nothing). */
  const isEmpty = (e: TemporalEntity, view: TemporalRequest['view']): boolean =>
    e.attributes.length === 0 && !view.sysAttrs && !isShown(view, 'id') && !isShown(view, 'type');

  return {
    retrieve(actor, id, req, mapper) {
      const scope = readScopeOf(actor);
      const entity = store.archive.latest(scope, id);
      if (!entity || (entity.deletedAt !== undefined && reader.series(scope, [id]).length === 0)) {
        throw new ResourceNotFoundError('Entity not found', id);
      }
      // Existence first (404), then the right to read it (403).
      requireRight(actor, 'read', entityFactsOf(id, entity), store.permissions.applicableTo);
      const { hasInstances, ...result } = collect(scope, [entity], req, mapper);
      // NGSI-LD §5.7.3: none of the attributes asked for has a history, or pick/omit leave nothing to show.
      if (req.view.attrs && !hasInstances[0] && reader.series(scope, [id], [...req.view.attrs]).length === 0) {
        throw new ResourceNotFoundError('None of the requested attributes has a temporal evolution', id);
      }
      if (result.entities.every((e) => isEmpty(e, req.view))) {
        throw new ResourceNotFoundError('pick and omit leave no member of the entity', id);
      }
      return result;
    },

    query(actor, selection, page, req, mapper) {
      const scope = readScopeOf(actor);
      const found = selectEntities(scope, selection, page, req);
      const entities = found.entities.slice(0, page.limit);
      const { hasInstances, ...result } = collect(scope, entities, req, mapper);
      // NGSI-LD §5.7.4: the temporal evolution of the matching entities within the window; an entity
      // with no instance there is left out (behaviour §6).
      result.entities = result.entities.filter((_, i) => hasInstances[i]);
      const out: TemporalReadResult & { count?: number; hasMore: boolean } = { ...result, hasMore: found.entities.length > page.limit };
      if (found.count !== undefined) out.count = found.count;
      return out;
    },
  };
}
