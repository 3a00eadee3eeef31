// Routes of the entities resource (NGSI-LD §6.4 and §6.5): create, list, retrieve, replace,
// merge, delete.

import {
  BadRequestDataError, TooComplexQueryError, compareOrderValues, isAbsoluteUri, mergeEntity, orderValue, parseEntity,
  parseEntityFragment, parseOrderBy, replaceEntity,
  type Entity, type EntityId, type Iri, type OrderKey, type OrderValue, type Principal,
} from '../../ngsi/index.js';
import type { EntityListQuery, UpdateResult } from '../../entities/index.js';
import type { ResolvedContext } from '../../jsonld/index.js';
import { resource, type AppContext, type AppDeps, type App } from '../app-env.js';
import { actorOf, entityIdParam, linkContext } from '../request-context.js';
import { readJsonBody } from '../body.js';
import { APP_GEO_JSON, APP_JSON, APP_LD_JSON, contextFromLink, negotiate } from '../media.js';
import { page, readParams, type Page } from '../params.js';
import { BASE, created, idSegment, noContent, pageHeaders, sendJson, sendPayload, sendPayloadText } from '../respond.js';
import { RETRIEVAL_PARAMS, pageTag, parseRetrieval, listingBytes, renderForResponse, type Retrieval } from '../retrieval.js';
import { ENTITY_QUERY_PARAMS, entityQueryFromParams, type EntityQuery } from '../entity-query.js';
import type { ResponseMediaType } from '../media.js';
import { purgeEntities } from './entities-purge.js';
import {
  distributedWrite, entityPath, isDistributed, mergeListing, queryRemote, retrieveDistributed, warningHeaders, type DistributedQuery,
} from '../distributed.js';

/** NOTE: readJsonBody guarantees an object for these routes. */
const asObject = (body: unknown): Record<string, unknown> => body as Record<string, unknown>;
/** Members every source of a create or replace gets besides its attributes. */
const ENTITY_KEEP = ['id', 'type', 'scope'];

const OFFERED = [APP_JSON, APP_LD_JSON, APP_GEO_JSON] as const;

function updateResultBody(result: UpdateResult, ctx: ResolvedContext): { updated: string[]; notUpdated: Array<{ attributeName: string; reason: string }> } {
  return {
    updated: result.updated.map((a: Iri) => ctx.compactIri(a)),
    notUpdated: result.notUpdated.map((n) => ({ attributeName: ctx.compactIri(n.attr), reason: n.reason })),
  };
}

/** 204 when everything was updated, 207 with the UpdateResult otherwise (NGSI-LD §6.5.3.3). */
export function updateResponse(result: UpdateResult, ctx: ResolvedContext): Response {
  return result.notUpdated.length === 0 ? noContent() : sendJson(updateResultBody(result, ctx), 207);
}

/** Most entities an ordered query sorts (their ids and sort values are held in memory). */
const MAX_ORDERED = 50_000;
const ORDER_SCAN_PAGE = 1_000;

type Selection = Omit<EntityListQuery, 'limit' | 'offset' | 'count'>;

/**
 * NGSI-LD v1.9 §4.23: one page of the selection in `orderBy` order. Every match is read once, in
 * pages, keeping only its id and sort values; ties keep creation order (the sort is stable).
 */
function orderedPage(deps: AppDeps, actor: Principal, selection: Selection, keys: readonly OrderKey[], p: Page): {
  entities: Entity[]; hasMore: boolean; count: number;
} {
  const rows: Array<{ id: EntityId; values: OrderValue[] }> = [];
  for (let offset = 0; ; offset += ORDER_SCAN_PAGE) {
    const chunk = deps.entities.list(actor, { ...selection, limit: ORDER_SCAN_PAGE, offset, count: false }).entities;
    for (const e of chunk) rows.push({ id: e.id, values: keys.map((k) => orderValue(e, k)) });
    if (rows.length > MAX_ORDERED) {
      throw new TooComplexQueryError('Too many entities to order', `orderBy sorts at most ${MAX_ORDERED} entities; narrow the query`);
    }
    if (chunk.length < ORDER_SCAN_PAGE) break;
  }
  rows.sort((a, b) => compareOrderValues(keys, a.values, b.values));
  const wanted = rows.slice(p.offset, p.offset + p.limit);
  const found = deps.entities.getMany(actor, wanted.map((r) => r.id));
  return { entities: wanted.flatMap((r) => found.get(r.id) ?? []), hasMore: rows.length > p.offset + p.limit, count: rows.length };
}

/**
 * A listing's answer from its bytes; with its entity tag when it has one, and 304 Not Modified
 * (RFC 9110 §15.4.5, the page headers kept) when the caller already holds those very bytes.
 */
function listingResponse(c: AppContext, bytes: Uint8Array, ctx: ResolvedContext, headers: Record<string, string>): Response {
  const tag = pageTag(bytes);
  if (tag === undefined) return sendPayloadText(c, bytes, ctx, APP_JSON, 200, headers);
  if (c.req.header('if-none-match') === tag) return new Response(null, { status: 304, headers: { ...headers, ETag: tag } });
  return sendPayloadText(c, bytes, ctx, APP_JSON, 200, { ...headers, ETag: tag });
}

interface DistributedPage {
  selection: Selection; query: EntityQuery; retrieval: Retrieval; p: Page; mediaType: ResponseMediaType; ctx: ResolvedContext; remote: DistributedQuery;
  orderBy: readonly OrderKey[] | undefined;
}

/**
 * The local matches and the sources' merged, up to `want` of them: in `orderBy` order when asked
 * (each source is asked with the same orderBy and gives its first ones; the local ones are read in
 * order, see orderedPage), else the local ones first. The count, when asked, is the local one.
 */
async function mergedMatches(c: AppContext, deps: AppDeps, d: DistributedPage, want: number): Promise<{ merged: Entity[]; warnings: string[]; count: number | undefined }> {
  const actor = actorOf(c);
  const remote = queryRemote(c, deps, d.remote, d.ctx, want);
  // The count: the local matches, and the sources' entities that are not among the local ones read.
  const countOf = (localCount: number | undefined, local: readonly Entity[], merged: readonly Entity[]): number | undefined =>
    localCount === undefined ? undefined : localCount + merged.length - local.length;
  if (d.orderBy === undefined || d.orderBy.length === 0) {
    const local = deps.entities.list(actor, { ...d.selection, limit: want, offset: 0, count: d.p.count });
    const answered = await remote;
    const merged = mergeListing(local.entities, answered);
    return { merged, warnings: answered.warnings, count: countOf(local.count, local.entities, merged) };
  }
  const keys = d.orderBy;
  const local = orderedPage(deps, actor, d.selection, keys, { offset: 0, limit: want, count: false });
  const answered = await remote;
  const merged = mergeListing(local.entities, answered);
  const sorted = merged.map((e) => ({ e, values: keys.map((k) => orderValue(e, k)) })).sort((a, b) => compareOrderValues(keys, a.values, b.values));
  return { merged: sorted.map((m) => m.e), warnings: answered.warnings, count: countOf(d.p.count ? local.count : undefined, local.entities, merged) };
}

/**
 * NGSI-LD §5.7.2.4 Query Entities with matching registrations: the local matches and each source's
 * (both read from the start up to the end of the page) merged per id, then paged. Bounded: each
 * side gives at most offset + limit + 1 entities; the count adds the sources' entities not held here.
 */
async function answerDistributed(c: AppContext, deps: AppDeps, d: DistributedPage): Promise<Response> {
  const actor = actorOf(c);
  const want = Math.min(d.p.offset + d.p.limit + 1, deps.config.limitMax + 1);
  const { merged, warnings, count } = await mergedMatches(c, deps, d, want);
  const pageOf = merged.slice(d.p.offset, d.p.offset + d.p.limit);
  const headers = { ...pageHeaders(c.req.url, d.p, merged.length > d.p.offset + d.p.limit, count, d.mediaType), ...warningHeaders(warnings) };
  // The local entities keep their rendered text (the sources' are rendered anew).
  const bytes = listingBytes(pageOf, d.retrieval, d.ctx, d.mediaType);
  if (bytes !== undefined) return listingResponse(c, bytes, d.ctx, headers);
  const payload = renderForResponse(pageOf, d.retrieval, d.ctx, d.mediaType, (l) => deps.entities.getMany(actor, l), false);
  return sendPayload(c, payload, d.ctx, d.mediaType, 200, headers);
}

/** Runs a query and answers one page of it, with count and next/prev links (§5.5.9, §6.3.13). */
export function answerQuery(
  c: AppContext, deps: AppDeps, query: EntityQuery, retrieval: Retrieval, p: Page, mediaType: ResponseMediaType, ctx: ResolvedContext,
  orderBy?: readonly OrderKey[], remote?: DistributedQuery,
): Response | Promise<Response> {
  const actor = actorOf(c);
  const attrs = query.attrs ?? retrieval.attrs;
  const selection: Selection = {
    filters: query.filters,
    ...(query.types ? { types: query.types } : {}), ...(query.ids ? { ids: query.ids } : {}), ...(attrs ? { attrs } : {}),
  };
  let pageOf: Entity[];
  let hasMore: boolean;
  let count: number | undefined;
  if (remote !== undefined) {
    return answerDistributed(c, deps, { selection, query, retrieval, p, mediaType, ctx, remote, orderBy });
  } else if (orderBy !== undefined && orderBy.length > 0) {
    const ordered = orderedPage(deps, actor, selection, orderBy, p);
    ({ entities: pageOf, hasMore } = ordered);
    count = p.count ? ordered.count : undefined;
  } else {
    const found = deps.entities.list(actor, { ...selection, limit: p.limit + 1, offset: p.offset, count: p.count });
    pageOf = found.entities.slice(0, p.limit);
    hasMore = found.entities.length > p.limit;
    count = found.count;
  }
  const headers = pageHeaders(c.req.url, p, hasMore, count, mediaType);
  const bytes = listingBytes(pageOf, retrieval, ctx, mediaType);
  if (bytes !== undefined) return listingResponse(c, bytes, ctx, headers);
  const payload = renderForResponse(pageOf, retrieval, ctx, mediaType, (l) => deps.entities.getMany(actor, l), false);
  return sendPayload(c, payload, ctx, mediaType, 200, headers);
}

export function registerEntityRoutes(app: App, deps: AppDeps): void {
  const { entities, contexts, config } = deps;

  resource(app, `${BASE}/entities`, {
    // NGSI-LD §6.4.3.1 Create Entity
    POST: async (c) => {
      readParams(c.req.url, ['local']);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth });
      const ctx = await contexts.resolve(body.context);
      const entity = parseEntity(body.body, ctx, { now: entities.now() });
      // Built before the write: nothing after the commit may turn it into an error.
      const location = `${BASE}/entities/${idSegment(entity.id)}`;
      return distributedWrite(c, deps, {
        op: 'createEntity', selector: { id: entity.id, types: entity.types }, method: 'POST',
        path: '/ngsi-ld/v1/entities', body: asObject(body.body), keep: ENTITY_KEEP, ctx,
      }, async (rest) => {
        await entities.create(actorOf(c), rest === body.body ? entity : parseEntity(rest, ctx, { now: entities.now() }));
        return created(location);
      }, () => created(location));
    },
    // NGSI-LD §6.4.3.2 Query Entities
    GET: async (c) => {
      const params = readParams(c.req.url, [...new Set([...RETRIEVAL_PARAMS, ...ENTITY_QUERY_PARAMS]), 'limit', 'offset', 'count', 'orderBy']);
      const mediaType = negotiate(c.req.header('accept'), OFFERED);
      const ctx = await linkContext(c, deps);
      const retrieval = parseRetrieval(params, ctx);
      const query = entityQueryFromParams(params, ctx);
      const orderBy = params.get('orderBy');
      const keys = orderBy === undefined ? undefined : parseOrderBy(orderBy, (n) => ctx.expandTerm(n));
      const forward = isDistributed(c, deps, params.get('local') === 'true')
        ? { types: query.types, ids: query.ids, attrs: query.attrs ?? retrieval.attrs, params, ...(orderBy !== undefined ? { orderBy } : {}) } : undefined;
      return answerQuery(c, deps, query, retrieval, page(params, config), mediaType, ctx, keys, forward);
    },
    // NGSI-LD §5.6.21 Delete Entities (by type, id, idPattern)
    DELETE: (c) => purgeEntities(c, deps, actorOf(c)),
  });

  registerEntityByIdRoutes(app, deps);
}

/** The routes of one entity (NGSI-LD §6.5). */
function registerEntityByIdRoutes(app: App, deps: AppDeps): void {
  const { entities, contexts, config } = deps;
  resource(app, `${BASE}/entities/:id`, {
    // NGSI-LD §6.5.3.1 Retrieve Entity
    GET: async (c) => {
      const params = readParams(c.req.url, RETRIEVAL_PARAMS);
      const mediaType = negotiate(c.req.header('accept'), OFFERED);
      const id = entityIdParam(c);
      const ctx = await linkContext(c, deps);
      const retrieval = parseRetrieval(params, ctx);
      let entity: Entity;
      let headers: Record<string, string> = {};
      if (isDistributed(c, deps, params.get('local') === 'true')) {
        const found = await retrieveDistributed(c, deps, id, params, ctx, retrieval.attrs);
        if (found instanceof Response) return found;
        entity = found.entity;
        headers = warningHeaders(found.warnings);
      } else {
        entity = entities.get(actorOf(c), id);
      }
      const payload = renderForResponse([entity], retrieval, ctx, mediaType, (l) => entities.getMany(actorOf(c), l), true);
      return sendPayload(c, payload, ctx, mediaType, 200, headers);
    },
    // NGSI-LD §6.5.3.3 Replace Entity
    PUT: async (c) => {
      readParams(c.req.url, ['local']);
      const id = entityIdParam(c);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth });
      const doc = body.body as Record<string, unknown>; // NOTE: readJsonBody guarantees an object
      if (doc['id'] !== undefined && doc['id'] !== id) {
        throw new BadRequestDataError('The id in the body differs from the id in the path', `${String(doc['id'])} != ${id}`);
      }
      const ctx = await contexts.resolve(body.context);
      const replacement = parseEntity({ ...doc, id }, ctx, { now: entities.now() });
      return distributedWrite(c, deps, {
        op: 'replaceEntity', selector: { id, types: replacement.types }, method: 'PUT', path: entityPath(id),
        body: doc, keep: ENTITY_KEEP, ctx,
      }, async (rest) => {
        const local = rest === doc ? replacement : parseEntity({ ...rest, id }, ctx, { now: entities.now() });
        await entities.replace(actorOf(c), id, (current, now) => replaceEntity(current, local, now));
        return noContent();
      });
    },
    // NGSI-LD §6.5.3.4 Merge Entity
    PATCH: async (c) => {
      readParams(c.req.url, ['local']);
      const id = entityIdParam(c);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth, allowMergePatch: true });
      const ctx = await contexts.resolve(body.context);
      const fragment = parseEntityFragment(body.body, ctx, { now: entities.now() });
      if (fragment.id !== undefined && fragment.id !== id) {
        throw new BadRequestDataError('The id in the body differs from the id in the path', `${fragment.id} != ${id}`);
      }
      return distributedWrite(c, deps, {
        op: 'mergeEntity', selector: { id }, method: 'PATCH', path: entityPath(id), body: asObject(body.body), ctx,
      }, async (rest) => {
        const local = rest === body.body ? fragment : parseEntityFragment(rest, ctx, { now: entities.now() });
        const result = await entities.update(actorOf(c), id, (current, now) => mergeEntity(current, local, now));
        return updateResponse(result, ctx);
      });
    },
    // NGSI-LD §6.5.3.2 Delete Entity
    DELETE: async (c) => {
      readParams(c.req.url, ['local']);
      const id = entityIdParam(c);
      return distributedWrite(c, deps, { op: 'deleteEntity', selector: { id }, method: 'DELETE', path: entityPath(id), ctx: contexts.core }, async () => {
        await entities.delete(actorOf(c), id);
        return noContent();
      });
    },
  });

}
