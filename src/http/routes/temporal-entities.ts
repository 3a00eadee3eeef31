// Routes of temporal entities (NGSI-LD §6.18-6.24): retrieve, query (GET, POST), create or add instances,
// modify an instance, delete history; a cut answer is 206 with Content-Range (§6.3.10).

import { z } from 'zod';
import {
  BadRequestDataError, NotImplementedError, formatComputedInstant, isAbsoluteUri, nameProblem, ordersByIdOnly, parseAttributeFragment,
  parseOrderBy, renderTemporalEntities,
  type Json,
  type TermMapper,
} from '../../ngsi/index.js';
import {
  parseAggregation, parseTemporalAttributes, parseTemporalEntity, parseTemporalFormat, parseTemporalQuery,
  type RawTemporalParams, type TemporalRange, type TemporalReadResult, type TemporalRequest, type TemporalSelection, type TemporalView,
} from '../../temporal/index.js';
import type { ResolvedContext } from '../../jsonld/index.js';
import { resource, type App, type AppContext, type AppDeps } from '../app-env.js';
import { readJsonBody } from '../body.js';
import { buildEntityQuery, entityQueryFromParams, type EntityQuery } from '../entity-query.js';
import { APP_JSON, APP_LD_JSON, negotiate } from '../media.js';
import { bool, csv, int, page, readParams, type Params } from '../params.js';
import { BASE, created, idSegment, noContent, pageHeaders, sendPayload } from '../respond.js';
import { actorOf, entityIdParam, linkContext } from '../request-context.js';
import { inlineTemporalLinks } from '../temporal-join.js';

const OFFERED = [APP_JSON, APP_LD_JSON] as const;
const TEMPORAL = ['timerel', 'timeAt', 'endTimeAt', 'timeproperty', 'lastN', 'firstN', 'offsetN', 'aggrMethods', 'aggrPeriodDuration'] as const;
const VIEW = ['attrs', 'pick', 'omit', 'options', 'format', 'datasetId', 'join', 'joinLevel'] as const;
const GEO = ['georel', 'geometry', 'coordinates', 'geoproperty'] as const;
const PAGE = ['limit', 'offset', 'count'] as const;
/** Known NGSI-LD parameters temporal reads do not implement: 501. */
const UNIMPLEMENTED = ['lang', 'geometryProperty'];

interface ViewInput { attrs?: string[]; pick?: string[]; omit?: string[]; datasetId?: string[]; options: string[]; format?: string }

const member = (mapper: TermMapper) => (name: string): string => (name === 'id' || name === 'type' ? name : mapper.expandTerm(name));

/** The temporal query and the representation (NGSI-LD §6.18.3.1), names expanded with the context. */
function temporalRequest(raw: RawTemporalParams, input: ViewInput, mapper: TermMapper): TemporalRequest {
  const { format, sysAttrs, audit, optionsAggregate } = parseTemporalFormat(input.options, input.format);
  const aggregation = parseAggregation(format, raw, optionsAggregate);
  if (input.attrs && (input.pick || input.omit)) throw new BadRequestDataError('attrs cannot be combined with pick or omit');
  if (input.pick && input.omit) throw new BadRequestDataError('pick and omit cannot be combined');
  const view: TemporalView = { format, sysAttrs, audit, aggrMethods: aggregation.methods };
  if (aggregation.period) view.aggrPeriod = aggregation.period;
  if (input.attrs) view.attrs = new Set(input.attrs.map((a) => mapper.expandTerm(a)));
  if (input.pick) view.pick = new Set(input.pick.map(member(mapper)));
  if (input.omit) view.omit = new Set(input.omit.map(member(mapper)));
  if (input.datasetId) view.datasetIds = new Set(input.datasetId);
  return { query: parseTemporalQuery(raw), view };
}

function fromParams(params: Params, mapper: TermMapper): TemporalRequest {
  const raw: RawTemporalParams = {};
  for (const name of TEMPORAL) {
    const v = params.get(name);
    if (v !== undefined) raw[name] = v;
  }
  const input: ViewInput = { options: csv(params, 'options') ?? [] };
  for (const name of ['attrs', 'pick', 'omit', 'datasetId'] as const) {
    const list = csv(params, name);
    if (list) input[name] = list;
  }
  const format = params.get('format');
  if (format !== undefined) input.format = format;
  bool(params, 'local');
  return temporalRequest(raw, input, mapper);
}

/** `Content-Range: date-time <start>-<end>/<size or *>` (NGSI-LD §6.3.10). */
const contentRange = (r: TemporalRange): string =>
  `date-time ${formatComputedInstant(r.start)}-${formatComputedInstant(r.end)}/${r.size === undefined ? '*' : String(r.size)}`;

/**
 * join=inline (interface 4.1): the normalized temporal representation gains the linked entities.
 * The interface offers `inline` only; a temporal representation without instance objects has nowhere to put them.
 */
function joinLevelOf(params: Params, req: TemporalRequest): number | undefined {
  const join = params.get('join');
  if (join === undefined || join === '@none') {
    if (params.has('joinLevel')) throw new BadRequestDataError('joinLevel needs join=inline');
    return undefined;
  }
  if (join !== 'inline') throw new BadRequestDataError('A temporal representation joins inline only', `join=${join}`);
  if (req.view.format !== 'normalized') throw new BadRequestDataError('join=inline needs the normalized temporal representation', `format ${req.view.format}`);
  return int(params, 'joinLevel', 1, 10) ?? 1;
}

function answer(c: AppContext, payload: Json, ctx: ResolvedContext, range: TemporalRange | undefined, headers: Record<string, string> = {}): Response {
  const mediaType = negotiate(c.req.header('accept'), OFFERED);
  if (!range) return sendPayload(c, payload, ctx, mediaType, 200, headers);
  return sendPayload(c, payload, ctx, mediaType, 206, { ...headers, 'Content-Range': contentRange(range) });
}

function instanceIdParam(c: AppContext): string {
  const instanceId = c.req.param('instanceId') ?? '';
  if (!isAbsoluteUri(instanceId)) throw new BadRequestDataError('Invalid instanceId', `'${instanceId}' is not an absolute URI`);
  return instanceId;
}

function attrName(c: AppContext): string {
  const name = c.req.param('attr') ?? '';
  const problem = nameProblem(name);
  if (problem) throw new BadRequestDataError('Invalid attribute name', problem);
  return name;
}

const list = z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : v.split(',').map((s) => s.trim())));
const text = z.union([z.string(), z.number()]).transform(String);
/** The Query body of POST /temporal/entityOperations/query (NGSI-LD §5.2.23, temporalQ §5.2.21). */
const QUERY_BODY = z.strictObject({
  type: z.literal('Query'),
  entities: z.array(z.strictObject({ type: z.string().optional(), id: z.string().optional(), idPattern: z.string().optional() })).optional(),
  attrs: list.optional(), pick: list.optional(), omit: list.optional(), datasetId: list.optional(),
  q: z.string().optional(), scopeQ: z.string().optional(), lang: z.string().optional(), local: z.boolean().optional(),
  geoQ: z.strictObject({ georel: z.unknown(), geometry: z.unknown(), coordinates: z.unknown(), geoproperty: z.unknown() }).partial().optional(),
  temporalQ: z.strictObject({
    timerel: z.string(), timeAt: z.string(), endTimeAt: z.string(), timeproperty: z.string(), lastN: text, firstN: text,
    offsetN: text, aggrMethods: list.transform((l) => l.join(',')), aggrPeriodDuration: z.string(),
  }).partial().optional(),
  '@context': z.unknown().optional(),
});

/**
 * The NGSILD-Warning (warn-code 199, miscellaneous) of an answer by observedAt that holds no instance
 * while instances of its entities were modified in the range: they were written without observedAt.
 */
const WITHOUT_OBSERVED_AT = '199 edgeld "no instance has observedAt in this range; instances without observedAt are listed with timeproperty=modifiedAt"';

/** The NGSILD-Warning of an answer whose window starts before raw history was removed. */
const rawDropped = (before: number): string =>
  `199 edgeld "raw instances before ${new Date(before).toISOString()} were removed by retention or the disk budget: aggregations by whole minutes or hours there are answered from the rollups, other reads show what is left"`;

/** The warnings of a temporal answer, as one NGSILD-Warning value (none: no header). */
function warningsOf(found: TemporalReadResult): Record<string, string> {
  const list: string[] = [];
  if (found.withoutObservedAt) list.push(WITHOUT_OBSERVED_AT);
  if (found.rawDroppedBefore !== undefined) list.push(rawDropped(found.rawDroppedBefore));
  return list.length === 0 ? {} : { 'NGSILD-Warning': list.join(', ') };
}

/**
 * Runs a temporal query; behaviour §6: it needs timerel with timeAt, and an entity filter (checked by
 * buildEntityQuery). The entity filters (type selection, id, idPattern, q, geo, scopeQ) are those
 * of Query Entities; they apply to the latest document of each entity, deleted ones included.
 */
function runQuery(deps: AppDeps, c: AppContext, ctx: ResolvedContext, req: TemporalRequest, query: EntityQuery, params: Params): Response {
  if (req.query.timerel === undefined) throw new BadRequestDataError('A temporal query needs timerel and timeAt');
  const selection: TemporalSelection = { filters: query.filters };
  if (query.types) selection.types = query.types;
  if (query.ids) selection.ids = query.ids;
  const orderBy = params.get('orderBy');
  if (orderBy !== undefined) {
    // NGSI-LD v1.9 §5.7.4.4: a temporal query orders by id only.
    const keys = parseOrderBy(orderBy, (n) => ctx.expandTerm(n));
    if (!ordersByIdOnly(keys) || keys.length !== 1) {
      throw new BadRequestDataError('A temporal query can be ordered by id only', `orderBy=${orderBy}`);
    }
    selection.orderById = keys[0]?.descending === true ? 'desc' : 'asc';
  }
  const p = page(params, deps.config);
  const joinLevel = joinLevelOf(params, req);
  const found = deps.temporal.query(actorOf(c), selection, p, req, ctx);
  const rendered = renderTemporalEntities(found.entities, { mapper: ctx, view: req.view, timeproperty: req.query.timeproperty });
  if (joinLevel !== undefined) inlineTemporalLinks(rendered, joinLevel, ctx, (ids) => deps.entities.getMany(actorOf(c), ids));
  const headers = { ...pageHeaders(c.req.url, p, found.hasMore, found.count), ...warningsOf(found) };
  return answer(c, rendered, ctx, found.range, headers);
}

/** The collection of temporal entities: query (GET, and POST of a Query) and create. */
function registerTemporalCollectionRoutes(app: App, deps: AppDeps): void {
  const { temporal, contexts, config } = deps;

  resource(app, `${BASE}/temporal/entities`, {
    // NGSI-LD §6.18.3.2 Query temporal evolution of entities
    GET: async (c) => {
      const params = readParams(c.req.url, [...TEMPORAL, ...VIEW, ...GEO, ...PAGE, 'type', 'id', 'idPattern', 'q', 'scopeQ', 'local', 'orderBy'], UNIMPLEMENTED);
      negotiate(c.req.header('accept'), OFFERED);
      const ctx = await linkContext(c, deps);
      const req = fromParams(params, ctx);
      const query = entityQueryFromParams(params, ctx);
      return runQuery(deps, c, ctx, req, query, params);
    },
    // NGSI-LD §6.18.3.1 Create or update temporal representation of an entity
    POST: async (c) => {
      readParams(c.req.url, []);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth });
      const ctx = await contexts.resolve(body.context);
      const input = parseTemporalEntity(body.body, ctx, temporal.now());
      // Built before the write: nothing after the commit may turn it into an error.
      const location = `${BASE}/temporal/entities/${idSegment(input.id)}`;
      const isNew = await temporal.create(actorOf(c), input);
      return isNew ? created(location) : noContent();
    },
  });

  resource(app, `${BASE}/temporal/entityOperations/query`, {
    // NGSI-LD §6.24.3.1 Query temporal evolution of entities via POST
    POST: async (c) => {
      const params = readParams(c.req.url, [...PAGE, 'options', 'format', 'orderBy'], UNIMPLEMENTED);
      negotiate(c.req.header('accept'), OFFERED);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth });
      const parsed = QUERY_BODY.safeParse(body.body);
      if (!parsed.success) throw new BadRequestDataError('Invalid Query body', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      const query = parsed.data;
      if (query.lang !== undefined) throw new NotImplementedError('lang is not implemented for temporal queries');
      const ctx = await contexts.resolve(body.context);
      const input: ViewInput = { options: csv(params, 'options') ?? [] };
      for (const name of ['attrs', 'pick', 'omit', 'datasetId'] as const) if (query[name]) input[name] = query[name];
      const format = params.get('format');
      if (format !== undefined) input.format = format;
      const req = temporalRequest(query.temporalQ ?? {}, input, ctx);
      const entityQuery = buildEntityQuery({
        selectors: query.entities ?? [], attrs: query.attrs, q: query.q, geo: query.geoQ, scopeQ: query.scopeQ, local: query.local,
      }, ctx);
      return runQuery(deps, c, ctx, req, entityQuery, params);
    },
  });
}

/** One temporal entity: retrieve and delete. */
function registerTemporalEntityResource(app: App, deps: AppDeps): void {
  const { temporal } = deps;

  resource(app, `${BASE}/temporal/entities/:id`, {
    // NGSI-LD §6.19.3.1 Retrieve the temporal representation of an entity
    GET: async (c) => {
      const params = readParams(c.req.url, [...TEMPORAL, ...VIEW, 'local'], UNIMPLEMENTED);
      negotiate(c.req.header('accept'), OFFERED);
      const id = entityIdParam(c);
      const ctx = await linkContext(c, deps);
      const req = fromParams(params, ctx);
      const joinLevel = joinLevelOf(params, req);
      const found = temporal.retrieve(actorOf(c), id, req, ctx);
      const rendered = renderTemporalEntities(found.entities, { mapper: ctx, view: req.view, timeproperty: req.query.timeproperty });
      if (joinLevel !== undefined) inlineTemporalLinks(rendered, joinLevel, ctx, (ids) => deps.entities.getMany(actorOf(c), ids));
      return answer(c, rendered[0] ?? {}, ctx, found.range, warningsOf(found));
    },
    // NGSI-LD §6.19.3.2 Delete the temporal representation of an entity (entity and history, for good)
    DELETE: async (c) => {
      readParams(c.req.url, []);
      await temporal.delete(actorOf(c), entityIdParam(c));
      return noContent();
    },
  });
}

/** The attributes and instances of a temporal entity: add, delete, modify. */
function registerTemporalAttributeRoutes(app: App, deps: AppDeps): void {
  const { temporal, contexts, config } = deps;

  resource(app, `${BASE}/temporal/entities/:id/attrs`, {
    // NGSI-LD §6.20.3.1 Add attributes to the temporal representation of an entity
    POST: async (c) => {
      readParams(c.req.url, []);
      const id = entityIdParam(c);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth });
      const ctx = await contexts.resolve(body.context);
      await temporal.addAttributes(actorOf(c), id, (now) => parseTemporalAttributes(body.body, ctx, now));
      return noContent();
    },
  });

  resource(app, `${BASE}/temporal/entities/:id/attrs/:attr`, {
    // NGSI-LD §6.21.3.1 Delete an attribute from the temporal representation of an entity
    DELETE: async (c) => {
      const params = readParams(c.req.url, ['datasetId', 'deleteAll']);
      const id = entityIdParam(c);
      const ctx = await linkContext(c, deps);
      const attr = ctx.expandTerm(attrName(c));
      const datasetId = params.get('datasetId');
      const deleteAll = bool(params, 'deleteAll');
      if (datasetId !== undefined && deleteAll) throw new BadRequestDataError('datasetId and deleteAll=true exclude each other');
      await temporal.deleteAttribute(actorOf(c), id, attr, { ...(datasetId !== undefined ? { datasetId } : {}), deleteAll });
      return noContent();
    },
  });

  resource(app, `${BASE}/temporal/entities/:id/attrs/:attr/:instanceId`, {
    // NGSI-LD §6.22.3.1 Modify an attribute instance in the temporal representation of an entity
    PATCH: async (c) => {
      readParams(c.req.url, []);
      const id = entityIdParam(c);
      const instanceId = instanceIdParam(c);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth, allowMergePatch: true });
      const ctx = await contexts.resolve(body.context);
      const attr = ctx.expandTerm(attrName(c));
      const fragment = parseAttributeFragment(body.body, ctx, { now: temporal.now(), attr });
      await temporal.modifyInstance(actorOf(c), id, attr, instanceId, fragment);
      return noContent();
    },
    // NGSI-LD §6.22.3.2 Delete an attribute instance from the temporal representation of an entity
    DELETE: async (c) => {
      readParams(c.req.url, []);
      const id = entityIdParam(c);
      const instanceId = instanceIdParam(c);
      const ctx = await linkContext(c, deps);
      await temporal.deleteInstance(actorOf(c), id, ctx.expandTerm(attrName(c)), instanceId);
      return noContent();
    },
  });
}

export function registerTemporalEntityRoutes(app: App, deps: AppDeps): void {
  registerTemporalCollectionRoutes(app, deps);
  registerTemporalEntityResource(app, deps);
  registerTemporalAttributeRoutes(app, deps);
}
