// The entities of a temporal query page (NGSI-LD §5.7.4): the selection in SQL, then the values
// filter and geo-query over each candidate's instances in the window.

import { matchesFilter, matchesGeo, type Entity, type EntityFilter } from '../ngsi/index.js';
import type { HistoryWindow, ReadScope, StoreReader } from '../store/index.js';
import type { TemporalRequest, TemporalSelection } from './types.js';
import { windowOf } from './window.js';

export interface TemporalPage { limit: number; offset: number; count: boolean }

/** Entities selected per round when the values filter runs over instances. */
const CANDIDATES_PER_ROUND = 200;

/**
 * NGSI-LD v1.9 §5.7.4.4: the values filter (q) and the geo-query are checked against the attribute
 * instances the temporal query selects (those in its window), not against the current state: an
 * entity matches when instances in the window satisfy them (each attribute: any of its instances).
 */
function matchesInWindow(store: StoreReader, scope: ReadScope, entity: Entity, filters: readonly EntityFilter[], window: HistoryWindow): boolean {
  const reader = store.history;
  const instances = reader.read(reader.series(scope, [entity.id]), window, { order: 'asc', skip: 0, limit: Infinity });
  const attrs: Entity['attrs'] = {};
  for (const { instance } of instances) {
    if (instance.attribute === undefined) continue;
    (attrs[instance.attr] ??= []).push(instance.attribute);
  }
  const asObserved: Entity = { ...entity, attrs };
  return filters.every((f) => (f.kind === 'geo' ? matchesGeo(f.query, asObserved) : matchesFilter(f, asObserved) === true));
}

/**
 * The entities of a query page: the selection in SQL, and the values filter and geo-query over each
 * candidate's instances in the window (the page is then counted after that filter). One entity more
 * than the page when there are more.
 */
export function selectEntities(store: StoreReader, scope: ReadScope, selection: TemporalSelection, page: TemporalPage,
  req: TemporalRequest): { entities: Entity[]; count?: number } {
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
      if (!matchesInWindow(store, scope, e, byInstances, window)) continue;
      matched += 1;
      if (matched > page.offset && kept.length <= page.limit) kept.push(e);
    }
    if (candidates.length < CANDIDATES_PER_ROUND || (!page.count && kept.length > page.limit)) break;
  }
  return page.count ? { entities: kept, count: matched } : { entities: kept };
}
