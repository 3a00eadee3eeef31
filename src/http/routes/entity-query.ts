// POST /ngsi-ld/v1/entityOperations/query (NGSI-LD §6.23.3.1, Query object §5.2.23): the filters in
// the body, representation and pagination in the URL.

import { BadRequestDataError, isPlainObject, parseOrderBy, type GeoQueryInput } from '../../ngsi/index.js';
import { resource, type App, type AppDeps } from '../app-env.js';
import { readJsonBody } from '../body.js';
import { buildEntityQuery, listMember, selectorsFromBody, stringMember } from '../entity-query.js';
import { APP_GEO_JSON, APP_JSON, APP_LD_JSON, negotiate } from '../media.js';
import { page, readParams } from '../params.js';
import { BASE } from '../respond.js';
import { parseRetrieval } from '../retrieval.js';
import { answerQuery } from './entities.js';
import { isDistributed } from '../distributed.js';

const OFFERED = [APP_JSON, APP_LD_JSON, APP_GEO_JSON] as const;
const URL_PARAMS = ['limit', 'offset', 'count', 'options', 'format', 'join', 'joinLevel', 'geometryProperty', 'lang', 'datasetId', 'local', 'orderBy'];
const BODY_MEMBERS = new Set([
  'type', 'entities', 'attrs', 'q', 'geoQ', 'scopeQ', 'pick', 'omit', 'lang', 'local', 'join', 'joinLevel',
  'geometryProperty', 'datasetId', '@context',
]);

function geoOf(value: unknown): GeoQueryInput | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) throw new BadRequestDataError('geoQ must be an object');
  for (const k of Object.keys(value)) {
    if (!['georel', 'geometry', 'coordinates', 'geoproperty'].includes(k)) throw new BadRequestDataError(`geoQ has an unknown member '${k}'`);
  }
  return { georel: value['georel'], geometry: value['geometry'], coordinates: value['coordinates'], geoproperty: value['geoproperty'] };
}

export function registerEntityQueryRoutes(app: App, deps: AppDeps): void {
  resource(app, `${BASE}/entityOperations/query`, {
    POST: async (c) => {
      const urlParams = readParams(c.req.url, URL_PARAMS);
      const mediaType = negotiate(c.req.header('accept'), OFFERED);
      const parsed = await readJsonBody(c.req.raw, { limit: deps.config.bodyLimit, maxDepth: deps.config.maxJsonDepth });
      const body = parsed.body as Record<string, unknown>; // NOTE: readJsonBody guarantees an object
      for (const k of Object.keys(body)) if (!BODY_MEMBERS.has(k)) throw new BadRequestDataError(`Unknown member '${k}' in the query`);
      if (body['type'] !== 'Query') throw new BadRequestDataError('The body must be a Query (type "Query")');
      const ctx = await deps.contexts.resolve(parsed.context);
      // Representation members of the body join the URL parameters (given twice: 400).
      const params = new Map(urlParams);
      for (const name of ['pick', 'omit', 'attrs']) {
        const list = listMember(body, name);
        if (list) params.set(name, list.join(','));
      }
      for (const name of ['lang', 'join', 'geometryProperty']) {
        const value = stringMember(body, name);
        if (value === undefined) continue;
        if (params.has(name)) throw new BadRequestDataError(`${name} is given in the URL and in the body`);
        params.set(name, value);
      }
      const joinLevel = body['joinLevel'];
      if (joinLevel !== undefined) {
        if (typeof joinLevel !== 'number' && typeof joinLevel !== 'string') throw new BadRequestDataError('joinLevel must be a number');
        if (params.has('joinLevel')) throw new BadRequestDataError('joinLevel is given in the URL and in the body');
        params.set('joinLevel', String(joinLevel));
      }
      const datasetIds = listMember(body, 'datasetId');
      if (datasetIds) {
        if (params.has('datasetId')) throw new BadRequestDataError('datasetId is given in the URL and in the body');
        params.set('datasetId', datasetIds.join(','));
      }
      const retrieval = parseRetrieval(params, ctx);
      const local = body['local'];
      if (local !== undefined && typeof local !== 'boolean') throw new BadRequestDataError('local must be a boolean');
      const query = buildEntityQuery({
        selectors: selectorsFromBody(body['entities']),
        attrs: listMember(body, 'attrs'),
        q: stringMember(body, 'q'),
        geo: geoOf(body['geoQ']),
        scopeQ: stringMember(body, 'scopeQ'),
        local: local === true || urlParams.get('local') === 'true',
      }, ctx);
      const orderBy = urlParams.get('orderBy');
      const keys = orderBy === undefined ? undefined : parseOrderBy(orderBy, (n) => ctx.expandTerm(n));
      const forward = isDistributed(c, deps, local === true || urlParams.get('local') === 'true')
        ? { types: query.types, ids: query.ids, attrs: query.attrs ?? retrieval.attrs, params, body, ...(orderBy !== undefined ? { orderBy } : {}) } : undefined;
      return answerQuery(c, deps, query, retrieval, page(urlParams, deps.config), mediaType, ctx, keys, forward);
    },
  });
}
