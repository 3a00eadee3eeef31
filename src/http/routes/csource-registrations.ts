// Routes of the context source registrations resource (NGSI-LD §6.8, §6.9): register, query,
// retrieve, update, delete. The body's structure is checked here (zod); the NGSI-LD rules in
// registrations/.

import { z } from 'zod';
import {
  BadRequestDataError, InvalidRequestError, compileIdPattern, hasGeoQueryMembers, isAbsoluteUri, nameProblem, parseDateTime, parseGeoQuery, parseQ, parseScopeQ,
  type Json, type JsonObject, type TermMapper,
} from '../../ngsi/index.js';
import { READ_ONLY_MEMBERS, renderRegistration, type RegistrationInput, type RegistrationQuery } from '../../registrations/index.js';
import { resource, type App, type AppContext, type AppDeps } from '../app-env.js';
import { readJsonBody } from '../body.js';
import { APP_JSON, APP_LD_JSON, negotiate } from '../media.js';
import { csv, oneOf, page, readParams, type Params } from '../params.js';
import { BASE, created, idSegment, noContent, pageHeaders, sendPayload } from '../respond.js';
import { actorOf, linkContext } from '../request-context.js';

const OFFERED = [APP_JSON, APP_LD_JSON] as const;
const PATH = `${BASE}/csourceRegistrations`;

const names = z.array(z.string());
const interval = z.strictObject({ startAt: z.string(), endAt: z.string() }).partial();
const json: z.ZodType<Json> = z.json();

const REGISTRATION_INFO = z.strictObject({
  entities: z.array(z.strictObject({ id: z.string(), idPattern: z.string(), type: z.string() }).partial()),
  propertyNames: names, relationshipNames: names,
}).partial();

/** NGSI-LD §5.2.9 members; `null` is a merge-patch removal (the parser refuses it on create). */
const KNOWN = z.object({
  id: z.string(), type: z.string(), registrationName: z.string().nullable(), description: z.string().nullable(),
  information: z.array(REGISTRATION_INFO).nullable(), tenant: z.string().nullable(),
  observationInterval: interval.nullable(), managementInterval: interval.nullable(),
  location: json, observationSpace: json, operationSpace: json, expiresAt: z.string().nullable(), endpoint: z.string().nullable(),
  contextSourceInfo: z.array(z.strictObject({ key: z.string(), value: z.string() })).nullable(),
  scope: z.union([z.string(), names]).nullable(), mode: z.string().nullable(), operations: names.nullable(),
  management: z.strictObject({ localOnly: z.boolean(), cacheDuration: z.string(), timeout: z.number(), cooldown: z.number() }).partial().nullable(),
}).partial();

const KNOWN_MEMBERS = new Set([...Object.keys(KNOWN.shape), '@context']);

function registrationInput(body: unknown): RegistrationInput {
  // NOTE: readJsonBody answers 400 for anything but a JSON object, and JSON.parse makes JSON.
  const members = body as Record<string, Json>;
  for (const m of READ_ONLY_MEMBERS) {
    if (m in members) throw new BadRequestDataError(`Invalid registration member '${m}'`, `${m}: is read-only`);
  }
  const parsed = KNOWN.safeParse(members);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.') || 'registration'}: ${i.message}`).join('; ');
    throw new BadRequestDataError('Invalid context source registration', detail);
  }
  const properties: Record<string, Json> = {};
  for (const [name, value] of Object.entries(members)) if (!KNOWN_MEMBERS.has(name)) properties[name] = value;
  return { ...parsed.data, properties } as RegistrationInput; // NOTE: zod's partial output carries undefined members the input type leaves out
}

function registrationIdParam(c: AppContext): string {
  const id = c.req.param('id') ?? '';
  if (!isAbsoluteUri(id)) throw new BadRequestDataError('Invalid registration id', `'${id}' is not an absolute URI`);
  return id;
}

const QUERY_PARAMS = [
  'type', 'id', 'idPattern', 'attrs', 'q', 'csf', 'georel', 'geometry', 'coordinates', 'geoproperty', 'scopeQ', 'timerel', 'timeAt', 'endTimeAt', 'timeproperty',
  'limit', 'offset', 'count', 'options',
];

const TIMERELS = ['before', 'after', 'between'] as const;
const TIME_PROPERTIES = ['observedAt', 'createdAt', 'modifiedAt'] as const;

function instantParam(params: Params, name: string): number {
  const text = params.get(name);
  const at = text === undefined ? undefined : parseDateTime(text);
  if (at === undefined) throw new BadRequestDataError(`Invalid temporal query: '${name}' must be an ISO 8601 date-time`, `${name}=${text ?? ''}`);
  return at;
}

/**
 * NGSI-LD §5.10.2 temporal query of registrations: on observationInterval (timeproperty observedAt,
 * the default) or managementInterval (createdAt, modifiedAt).
 */
function timeQuery(params: Params): RegistrationQuery['timeQ'] {
  const timerel = oneOf(params, 'timerel', TIMERELS);
  if (timerel === undefined) {
    if (['timeAt', 'endTimeAt', 'timeproperty'].some((p) => params.has(p))) throw new BadRequestDataError('Invalid temporal query: timerel is missing');
    return undefined;
  }
  const timeproperty = oneOf(params, 'timeproperty', TIME_PROPERTIES) ?? 'observedAt';
  const out: NonNullable<RegistrationQuery['timeQ']> = {
    timerel, timeAt: instantParam(params, 'timeAt'), interval: timeproperty === 'observedAt' ? 'observationInterval' : 'managementInterval',
  };
  if (timerel === 'between') out.endTimeAt = instantParam(params, 'endTimeAt');
  return out;
}

function checkedName(name: string): string {
  const problem = nameProblem(name);
  if (problem !== undefined) throw new BadRequestDataError('Invalid attribute name', problem);
  return name;
}

/** NGSI-LD §5.10.2 Query Context Source Registrations: the parameters as a query; at least one selector. */
function registrationQuery(params: Params, mapper: TermMapper): RegistrationQuery {
  const geo = { georel: params.get('georel'), geometry: params.get('geometry'), coordinates: params.get('coordinates'), geoproperty: params.get('geoproperty') };
  const hasGeo = hasGeoQueryMembers(geo);
  const selectors = ['type', 'id', 'idPattern', 'attrs', 'q', 'csf', 'scopeQ'].filter((p) => params.has(p));
  const timeQ = timeQuery(params);
  if (selectors.length === 0 && !hasGeo && timeQ === undefined) {
    throw new BadRequestDataError('A query of registrations needs one of type, id, idPattern, attrs, q, csf, scopeQ, a geo-query or a temporal query');
  }
  const query: RegistrationQuery = timeQ === undefined ? {} : { timeQ };
  const types = csv(params, 'type');
  if (types) query.types = types.map((t) => mapper.expandTerm(checkedName(t)));
  const ids = csv(params, 'id');
  if (ids) {
    for (const id of ids) if (!isAbsoluteUri(id)) throw new BadRequestDataError('Invalid entity id', `'${id}' is not an absolute URI`);
    query.ids = ids;
  }
  const idPattern = params.get('idPattern');
  if (idPattern !== undefined) {
    compileIdPattern(idPattern);
    query.idPattern = idPattern;
  }
  const attrs = csv(params, 'attrs');
  if (attrs) query.attrs = attrs.map((a) => mapper.expandTerm(checkedName(a)));
  const q = params.get('q');
  if (q !== undefined) query.q = parseQ(q, mapper);
  const csf = params.get('csf');
  if (csf !== undefined) query.csf = parseQ(csf, mapper);
  const scopeQ = params.get('scopeQ');
  if (scopeQ !== undefined) query.scopeQ = parseScopeQ(scopeQ);
  if (hasGeo) query.geoQ = parseGeoQuery(geo, mapper);
  return query;
}

export function registerCsourceRegistrationRoutes(app: App, deps: AppDeps): void {
  const { registrations, contexts, config } = deps;
  /** `options=sysAttrs` is the one representation option of a registration (§5.10.1). */
  const sysAttrs = (params: Params): boolean => {
    const options = csv(params, 'options') ?? [];
    const other = options.find((o) => o !== 'sysAttrs');
    if (other !== undefined) throw new InvalidRequestError(`Unknown option '${other}'`, 'Allowed: sysAttrs');
    return options.length > 0;
  };

  resource(app, PATH, {
    // NGSI-LD §6.8.3.1 Register Context Source (§5.9.2)
    POST: async (c) => {
      readParams(c.req.url, []);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth });
      const input = registrationInput(body.body);
      const ctx = await contexts.resolve(body.context);
      // NOTE: a request context is JSON as it arrived.
      const reg = registrations.create(actorOf(c), input, { mapper: ctx, context: body.context as Json | undefined });
      return created(`${PATH}/${idSegment(reg.id)}`);
    },
    // NGSI-LD §6.8.3.2 Query Context Source Registrations (§5.10.2)
    GET: async (c) => {
      const params = readParams(c.req.url, QUERY_PARAMS);
      const mediaType = negotiate(c.req.header('accept'), OFFERED);
      const ctx = await linkContext(c, deps);
      const p = page(params, config);
      const query = registrationQuery(params, ctx);
      const found = registrations.list(actorOf(c), query, { limit: p.limit + 1, offset: p.offset, count: p.count });
      const shown = { sysAttrs: sysAttrs(params) };
      const payload: JsonObject[] = found.items.slice(0, p.limit).map((r) => renderRegistration(r, ctx, shown));
      return sendPayload(c, payload, ctx, mediaType, 200, pageHeaders(c.req.url, p, found.items.length > p.limit, found.count, mediaType));
    },
  });

  resource(app, `${PATH}/:id`, {
    // NGSI-LD §6.9.3.1 Retrieve Context Source Registration (§5.10.1)
    GET: async (c) => {
      const params = readParams(c.req.url, ['options']);
      const mediaType = negotiate(c.req.header('accept'), OFFERED);
      const id = registrationIdParam(c);
      const ctx = await linkContext(c, deps);
      const reg = registrations.get(actorOf(c), id);
      return sendPayload(c, renderRegistration(reg, ctx, { sysAttrs: sysAttrs(params) }), ctx, mediaType);
    },
    // NGSI-LD §6.9.3.2 Update Context Source Registration (§5.9.3)
    PATCH: async (c) => {
      readParams(c.req.url, []);
      const id = registrationIdParam(c);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth, allowMergePatch: true });
      const input = registrationInput(body.body);
      const ctx = await contexts.resolve(body.context);
      registrations.update(actorOf(c), id, input, { mapper: ctx });
      return noContent();
    },
    // NGSI-LD §6.9.3.3 Delete Context Source Registration (§5.9.4)
    DELETE: (c) => {
      readParams(c.req.url, []);
      registrations.delete(actorOf(c), registrationIdParam(c));
      return noContent();
    },
  });
}
