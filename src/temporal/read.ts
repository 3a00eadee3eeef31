// Temporal retrieve and query (NGSI-LD §5.7.3, §5.7.4): entities by their latest document (soft-deleted
// included) with their history in the requested window and representation, cut alike at the cap.

import {
  ResourceNotFoundError, entityFactsOf, isShown, type EntityId, type Principal, type TemporalEntity, type TermMapper,
} from '../ngsi/index.js';
import { requireRight } from '../auth/index.js';
import { readScopeOf, type HistoryReader, type ReadScope, type StoreReader } from '../store/index.js';
import { collect, seriesOf } from './read-attributes.js';
import { selectEntities, type TemporalPage } from './read-select.js';
import type { TemporalReadResult, TemporalRequest, TemporalSelection } from './types.js';
import { windowOf } from './window.js';

export type { TemporalPage };

export interface TemporalReadDeps {
  store: StoreReader;
  /** Most instances per attribute in one answer (temporal.limit). */
  limit: number;
}

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

/** Whether a temporal entity would show no member at all (pick and omit leave nothing). */
const isEmpty = (e: TemporalEntity, view: TemporalRequest['view']): boolean =>
  e.attributes.length === 0 && !view.sysAttrs && !isShown(view, 'id') && !isShown(view, 'type');

/** Whether an answer by observedAt holds no instance at all (`hasInstances`, one per entity, all false). */
const isEmptyByObservedAt = (req: TemporalRequest, hasInstances: boolean[]): boolean =>
  req.query.timeproperty === 'observedAt' && !hasInstances.includes(true);

/**
 * Whether instances of the series a request shows were modified in its window. Asked only when an
 * answer by observedAt holds none (so an answer with instances pays nothing): then they were written
 * without observedAt.
 */
function isModifiedInWindow(reader: HistoryReader, scope: ReadScope, ids: EntityId[], req: TemporalRequest): boolean {
  const series = seriesOf(reader, scope, ids, req);
  return series.length > 0 && reader.count(series, windowOf({ ...req.query, timeproperty: 'modifiedAt' })) > 0;
}

/** The instant before which raw instances were removed, when the request's window starts before it. */
function rawDroppedBefore(reader: TemporalReadDeps['store']['history'], req: TemporalRequest): number | undefined {
  const dropped = reader.rollups.droppedBefore('raw');
  if (dropped === undefined) return undefined;
  const { from } = windowOf(req.query);
  return from === undefined || from < dropped ? dropped : undefined;
}

export function createTemporalReader({ store, limit }: TemporalReadDeps): TemporalReader {
  const reader = store.history;
  return {
    retrieve(actor, id, req, mapper) {
      const scope = readScopeOf(actor);
      const entity = store.archive.latest(scope, id);
      if (!entity || (entity.deletedAt !== undefined && reader.series(scope, [id]).length === 0)) {
        throw new ResourceNotFoundError('Entity not found', id);
      }
      // Existence first (404), then the right to read it (403).
      requireRight(actor, 'read', entityFactsOf(id, entity), store.permissions.applicableTo);
      const { hasInstances, ...result } = collect(reader, limit, scope, [entity], req, mapper);
      // NGSI-LD §5.7.3: none of the attributes asked for has a history, or pick/omit leave nothing to show.
      if (req.view.attrs && !hasInstances[0] && reader.series(scope, [id], [...req.view.attrs]).length === 0) {
        throw new ResourceNotFoundError('None of the requested attributes has a temporal evolution', id);
      }
      if (result.entities.every((e) => isEmpty(e, req.view))) {
        throw new ResourceNotFoundError('pick and omit leave no member of the entity', id);
      }
      if (isEmptyByObservedAt(req, hasInstances) && isModifiedInWindow(reader, scope, [id], req)) result.withoutObservedAt = true;
      const dropped = rawDroppedBefore(reader, req);
      if (dropped !== undefined) result.rawDroppedBefore = dropped;
      return result;
    },

    query(actor, selection, page, req, mapper) {
      const scope = readScopeOf(actor);
      const found = selectEntities(store, scope, selection, page, req);
      const entities = found.entities.slice(0, page.limit);
      const { hasInstances, ...result } = collect(reader, limit, scope, entities, req, mapper);
      // NGSI-LD §5.7.4: the temporal evolution of the matching entities within the window; an entity
      // with no instance there is left out (behaviour §6).
      result.entities = result.entities.filter((_, i) => hasInstances[i]);
      const out: TemporalReadResult & { count?: number; hasMore: boolean } = { ...result, hasMore: found.entities.length > page.limit };
      if (found.count !== undefined) out.count = found.count;
      if (entities.length > 0 && isEmptyByObservedAt(req, hasInstances) && isModifiedInWindow(reader, scope, entities.map((e) => e.id), req)) {
        out.withoutObservedAt = true;
      }
      const dropped = rawDroppedBefore(reader, req);
      if (dropped !== undefined) out.rawDroppedBefore = dropped;
      return out;
    },
  };
}
