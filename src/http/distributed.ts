// The HTTP side of distributed operations (NGSI-LD §4.3.6, §5.6, §5.7, §6.3.17, §6.3.18): what a
// read or write passes on to the context sources, the merge of their entities with the local ones,
// and how partial answers are told (NGSILD-Warning, 207 with the registrations that failed).

import {
  ENTITY_CORE_MEMBERS, ERROR_TYPE_BASE, NgsiError, ResourceNotFoundError, isPlainObject, type Json, type Entity, type EntityId, type Iri, type Principal,
} from '../ngsi/index.js';
import type { ResolvedContext } from '../jsonld/index.js';
import { mergeSourceEntity, type ForwardedWrite, type RemoteEntities, type SourceFailure, type WriteRequest } from '../registrations/index.js';
import type { AppContext, AppDeps } from './app-env.js';
import { actorOf } from './request-context.js';
import { noContent, sendJson } from './respond.js';
import { problemOf, problemResponse } from './problem.js';
import type { Params } from './params.js';
import { leftHere } from './distributed-elsewhere.js';

const API = '/ngsi-ld/v1';

/** Query parameters a source gets (filters; never representation members: its entities are read normalized). */
const FORWARDED_PARAMS = ['type', 'id', 'idPattern', 'q', 'georel', 'geometry', 'coordinates', 'geoproperty', 'scopeQ', 'datasetId', 'attrs'];
/** Members of a Query body a source gets. */
const FORWARDED_MEMBERS = ['type', 'entities', 'attrs', 'q', 'geoQ', 'scopeQ', 'datasetId'];

/** Whether a request goes to the sources: not `local=true`, forwarding on and registrations in the tenant. */
export function isDistributed(c: AppContext, deps: AppDeps, local: boolean): boolean {
  return !local && deps.distributed.active(actorOf(c).tenant);
}

export const viaOf = (c: AppContext): string | undefined => c.req.header('via');

/** The incoming request's headers, for contextSourceInfo values that copy them. */
export const incomingOf = (c: AppContext) => (name: string): string | undefined => c.req.header(name);

/** NGSI-LD §6.3.17: the warnings of a partial answer, one header. */
export function warningHeaders(warnings: readonly string[]): Record<string, string> {
  return warnings.length === 0 ? {} : { 'NGSILD-Warning': warnings.join(', ') };
}

function forwardedQuery(params: Params): URLSearchParams {
  const out = new URLSearchParams();
  for (const name of FORWARDED_PARAMS) {
    const value = params.get(name);
    if (value !== undefined) out.set(name, value);
  }
  return out;
}

/** One entity of local and remote fragments; undefined when neither holds it. */
function combine(local: Entity | undefined, remote: Entity | undefined, authoritative: boolean): Entity | undefined {
  if (local === undefined) return remote;
  if (remote === undefined) return local;
  return mergeSourceEntity(local, remote, authoritative);
}

/**
 * NGSI-LD §5.7.1.4 Retrieve Entity with matching registrations: the local entity merged with the
 * sources' fragments. A 404 carries the warnings of the sources that did not answer.
 */
export async function retrieveDistributed(
  c: AppContext, deps: AppDeps, id: EntityId, params: Params, ctx: ResolvedContext, attrs: Iri[] | undefined,
): Promise<{ entity: Entity; warnings: string[] } | Response> {
  const actor = actorOf(c);
  const remote = await deps.distributed.read(actor.tenant, {
    selector: { id, ...(attrs ? { attrs } : {}) }, method: 'GET', path: `${API}/entities/${encodeURIComponent(id)}`,
    query: forwardedQuery(params), ctx, via: viaOf(c), incoming: incomingOf(c),
  }, 'retrieveEntity');
  let local: Entity | undefined;
  try {
    local = deps.entities.get(actor, id);
  } catch (err) {
    if (!(err instanceof ResourceNotFoundError)) throw err;
  }
  const entity = combine(local, remote.entities.find((e) => e.id === id), remote.authoritative.has(id));
  if (entity === undefined) {
    return problemResponse(new ResourceNotFoundError('Entity not found', `No entity ${id}`), warningHeaders(remote.warnings));
  }
  return { entity, warnings: remote.warnings };
}

export interface DistributedQuery {
  types: Iri[] | undefined;
  ids: string[] | undefined;
  attrs: Iri[] | undefined;
  /** GET: the URL's filters; POST: the Query body. */
  params: Params;
  body?: Record<string, unknown>;
  /** NGSI-LD v1.9 §4.23 orderBy, as the caller wrote it: each source gives its first entities in that order. */
  orderBy?: string;
}

/** The sources' entities for a query (at most `want` each), by type or id. */
export async function queryRemote(c: AppContext, deps: AppDeps, q: DistributedQuery, ctx: ResolvedContext, want: number): Promise<RemoteEntities> {
  const tenant = actorOf(c).tenant;
  const query = q.body === undefined ? forwardedQuery(q.params) : new URLSearchParams();
  query.set('limit', String(want));
  if (q.orderBy !== undefined) query.set('orderBy', q.orderBy);
  const selector = {
    ...(q.types ? { types: q.types } : {}), ...(q.ids?.length === 1 ? { id: q.ids[0]! } : {}), ...(q.attrs ? { attrs: q.attrs } : {}),
  };
  if (q.body === undefined) {
    return deps.distributed.read(tenant, { selector, method: 'GET', path: `${API}/entities`, query, ctx, via: viaOf(c), incoming: incomingOf(c) }, 'queryEntity');
  }
  const body: Record<string, unknown> = {};
  for (const name of FORWARDED_MEMBERS) if (q.body[name] !== undefined) body[name] = q.body[name];
  return deps.distributed.read(tenant, {
    selector, method: 'POST', path: `${API}/entityOperations/query`, query, body: { ...body, type: 'Query' }, ctx, via: viaOf(c), incoming: incomingOf(c),
  }, 'queryBatch');
}

/** The local page's entities and the sources' ones, one per id, local order first. */
export function mergeListing(local: readonly Entity[], remote: RemoteEntities): Entity[] {
  const byId = new Map<string, Entity>();
  for (const e of local) byId.set(e.id, e);
  for (const e of remote.entities) byId.set(e.id, combine(byId.get(e.id), e, remote.authoritative.has(e.id)) ?? e);
  return [...byId.values()];
}

/** Forwards a write to the sources of its registrations (§5.6 "if there are matching registrations"). */
function forwardWrite(c: AppContext, deps: AppDeps, actor: Principal, req: Omit<WriteRequest, 'via' | 'incoming'>): Promise<ForwardedWrite> {
  return deps.distributed.write(actor.tenant, { ...req, via: viaOf(c), incoming: incomingOf(c) });
}

/**
 * The answer of a write some sources took: as here (`ok`) when all went well, else 207: for a whole
 * entity the BatchOperationResult, else the UpdateResult whose NotUpdatedDetails (§5.2.19) name the
 * registrationId of the source that failed.
 */
function writeAnswer(fw: ForwardedWrite, req: Omit<WriteRequest, 'via' | 'incoming'>, ok: () => Response): Response {
  if (fw.failures.length === 0) return ok();
  const { ctx } = req;
  const headers = warningHeaders(fw.warnings);
  if (ENTITY_OPERATIONS.has(req.op)) {
    const errors = fw.failures.map((f) => ({
      ...(req.selector.id !== undefined ? { entityId: req.selector.id } : {}), ...(f.registrationId === '' ? {} : { registrationId: f.registrationId }),
      error: f.problem !== undefined ? problemOf(f.problem) : sourceProblem(f),
    }));
    const succeeded = fw.failures.length < fw.sources + 1 && req.selector.id !== undefined ? [req.selector.id] : [];
    return sendJson({ success: succeeded, errors } as unknown as Json, 207, headers); // NOTE: plain JSON records
  }
  const notUpdated = fw.failures.flatMap((f) => (f.attrs ?? ['']).map((a) => ({
    attributeName: a === '' ? '' : ctx.compactIri(a), reason: f.detail, ...(f.registrationId === '' ? {} : { registrationId: f.registrationId }),
  })));
  const updated = [...new Set(fw.done)].map((a) => ctx.compactIri(a));
  return sendJson({ updated, notUpdated }, 207, headers);
}

/** The ProblemDetails of what a context source did not do. */
function sourceProblem(f: SourceFailure): Json {
  const type = f.status === 404 ? 'ResourceNotFound' : f.status === 409 ? 'AlreadyExists' : f.status < 500 ? 'BadRequestData' : 'InternalError';
  return { type: ERROR_TYPE_BASE + type, title: 'Not done at the context source', status: f.status, detail: f.detail };
}

/**
 * A write with matching registrations (§5.6 "if there are matching registrations"): forwarded to
 * the sources by mode, then done here with what they did not take (`local(rest)`), unless an
 * exclusive or redirect source took it all. A missing local entity is no error when a source took
 * part of the write (an IoT Agent's entity may exist only at the agent).
 */
export function distributedWrite(
  c: AppContext, deps: AppDeps, req: Omit<WriteRequest, 'via' | 'incoming'>, local: (rest: Record<string, unknown> | undefined) => Promise<Response>,
  remoteOk: () => Response = noContent,
): Promise<Response> {
  // NGSI-LD §6.3.18: local=true keeps the write here. NOTE: not async: a tenant without
  // registrations (the write path's usual case) goes straight to the local write, no extra promise.
  if (!deps.distributed.active(actorOf(c).tenant) || c.req.query('local') === 'true') return local(req.body);
  return forwardedWrite(c, deps, req, local, remoteOk);
}

/** distributedWrite with matching registrations possible: the sources first, then what is left here. */
async function forwardedWrite(
  c: AppContext, deps: AppDeps, req: Omit<WriteRequest, 'via' | 'incoming'>, local: (rest: Record<string, unknown> | undefined) => Promise<Response>,
  remoteOk: () => Response,
): Promise<Response> {
  // An id alone is matched with the types the entity has here, when it is here; a body names its attributes.
  const types = req.selector.types ?? (req.selector.id === undefined ? undefined : deps.entities.getMany(actorOf(c), [req.selector.id]).get(req.selector.id)?.types);
  const attrs = req.selector.attrs ?? (req.body === undefined ? undefined : attrsOfBody(req.body, req.ctx));
  const selector = { ...req.selector, ...(types ? { types } : {}), ...(attrs ? { attrs } : {}) };
  const fw = await forwardWrite(c, deps, actorOf(c), { ...req, selector });
  if (!fw.forwarded) return local(req.body);
  if (fw.remoteOnly) return writeAnswer(fw, req, remoteOk);
  const here = leftHere(c, deps, fw, req);
  if (here?.nothingLeft === true) return writeAnswer(fw, req, remoteOk);
  let answer: Response;
  const rest = here === undefined ? fw.rest : here.rest;
  try {
    answer = await local(rest);
  } catch (err) {
    if (!(err instanceof NgsiError)) throw err;
    // An attribute written to an entity held only at the sources is no error when they took it (an IoT Agent's command).
    const attributeOnly = !ENTITY_OPERATIONS.has(req.op);
    if (attributeOnly && fw.done.length > 0 && err instanceof ResourceNotFoundError && req.selector.id !== undefined && !existsHere(c, deps, req.selector.id)) {
      return writeAnswer(fw, req, remoteOk);
    }
    // Otherwise a local part that failed beside the sources' makes the answer partial (207).
    fw.failures.push({ registrationId: '', status: err.status, detail: err.detail ?? err.message, attrs: req.selector.attrs ? [...req.selector.attrs] : undefined, problem: err });
    return writeAnswer(fw, req, remoteOk);
  }
  if (answer.status >= 300) return answer;
  // What was written here is updated too, beside what the sources took (§5.2.18 UpdateResult).
  if (fw.failures.length > 0) fw.done.push(...(rest !== undefined ? attrsOfBody(rest, req.ctx) : req.selector.attrs ?? []));
  return writeAnswer(fw, req, () => answer);
}

/** Writes of a whole entity: a partial answer is a BatchOperationResult (NGSI-LD §5.6.1.4, §5.6.6.4). */
const ENTITY_OPERATIONS = new Set(['createEntity', 'deleteEntity', 'purgeEntity']);

function existsHere(c: AppContext, deps: AppDeps, id: EntityId): boolean {
  try {
    deps.entities.get(actorOf(c), id);
    return true;
  } catch (err) {
    if (err instanceof ResourceNotFoundError) return false;
    throw err;
  }
}


/** The attribute names (expanded) of a body of attributes. */
function attrsOfBody(body: unknown, ctx: ResolvedContext): Iri[] {
  if (!isPlainObject(body)) return [];
  return Object.keys(body).filter((k) => !ENTITY_CORE_MEMBERS.has(k) && !k.startsWith('@')).map((k) => ctx.expandTerm(k));
}

/** The path of an entity (and below it) at a source. */
export const entityPath = (id: EntityId, below = ''): string => `${API}/entities/${encodeURIComponent(id)}${below}`;
