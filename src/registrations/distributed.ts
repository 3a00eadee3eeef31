// Distributed operations (NGSI-LD §4.3.6, §5.6 and §5.7 "if there are matching registrations"):
// reads go to every matching source (any mode), writes by mode (exclusive and redirect: the
// source only; inclusive: the source and here; auxiliary: never), all sources of one request in
// parallel under one bounded wait; replies parsed as NGSI-LD entities or turned into warnings.

import { createLru, type Clock, type Lru } from '../lib/index.js';
import { ENTITY_CORE_MEMBERS, LoopDetectedError, isPlainObject, parseEntity, type Entity, type Iri, type NgsiError } from '../ngsi/index.js';
import type { ContextService, ResolvedContext } from '../jsonld/index.js';
import type { Operation, Registration } from './model.js';
import { formatWarning, type Incoming, type SourceClient, type SourceOutcome, type SourceRequest } from './source-client.js';
import type { MatchedSource, SourceIndex, SourceSelector } from './sources.js';
import { mergeEntity } from './merge.js';

/** What the sources answered to a read: their entities, merged per id, and warnings (§6.3.17). */
export interface RemoteEntities {
  entities: Entity[];
  /** Ids whose remote fragments come from an exclusive or redirect source (they win undated ties). */
  authoritative: Set<string>;
  warnings: string[];
}

export interface ReadRequest {
  selector: SourceSelector;
  method: 'GET' | 'POST';
  path: string;
  /** The caller's parameters to pass on (filters, in the caller's terms). */
  query: URLSearchParams;
  /** A POST query's body (filters only). */
  body?: Record<string, unknown>;
  ctx: ResolvedContext;
  via: string | undefined;
  /** The incoming request's headers (contextSourceInfo values `urn:ngsi-ld:request` copy them). */
  incoming: Incoming;
}

export interface WriteRequest {
  op: Operation;
  selector: SourceSelector;
  method: 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  query?: URLSearchParams;
  /** A body of attributes (an entity, a fragment): each source gets the members it covers. */
  body?: Record<string, unknown>;
  /** Members every forwarded body keeps (id, type of a create). */
  keep?: readonly string[];
  /** A body sent as is to every source (one attribute's fragment): the selector names its attribute. */
  payload?: unknown;
  ctx: ResolvedContext;
  via: string | undefined;
  /** The incoming request's headers (contextSourceInfo values `urn:ngsi-ld:request` copy them). */
  incoming: Incoming;
}

export interface SourceFailure {
  registrationId: string;
  status: number;
  detail: string;
  /** The attributes that went to it (undefined: the whole request). */
  attrs: Iri[] | undefined;
  /** The local error, for a local part that failed. */
  problem?: NgsiError;
}

export interface ForwardedWrite {
  /** Whether any source took part. */
  forwarded: boolean;
  /** How many sources took part. */
  sources: number;
  /** The body left for the local write: members no exclusive or redirect source took; undefined when the request had none. */
  rest: Record<string, unknown> | undefined;
  /** Nothing is left to do here: an exclusive or redirect source took the whole request. */
  remoteOnly: boolean;
  /** Attributes the sources took and acknowledged. */
  done: Iri[];
  failures: SourceFailure[];
  warnings: string[];
}

export interface DistributedOps {
  /** Whether forwarding is on and the tenant has registrations (no store read). */
  active(tenant: string): boolean;
  read(tenant: string, req: ReadRequest, op: Operation): Promise<RemoteEntities>;
  write(tenant: string, req: WriteRequest): Promise<ForwardedWrite>;
  batch(tenant: string, req: BatchForward): Promise<ForwardedBatch>;
}

export interface DistributedDeps {
  index: SourceIndex;
  client: SourceClient;
  contexts: ContextService;
  clock: Clock;
  enabled: boolean;
  /** Most entities read from one source for one query. */
  maxEntities: number;
  /** The last reply of each source and request (bounded), see remembered(). */
  replies: Lru<string, RememberedReply>;
}

const AUTHORITATIVE = new Set(['exclusive', 'redirect']);

/** The context URL sent as Link: the caller's one URL (an inline or composite context: the core). */
const contextUrlOf = (ctx: ResolvedContext): string | undefined => ctx.linkUrl;

/** The context URL of a reply's JSON-LD Link header. */
function parseLinkContext(link: string | undefined): string | undefined {
  if (link === undefined) return undefined;
  const m = /<([^>]*)>[^,]*rel="?http:\/\/www\.w3\.org\/ns\/json-ld#context"?/.exec(link);
  return m?.[1];
}

/** The attribute names (expanded) of a body, with the keys they come from. */
function attributeKeys(body: Record<string, unknown>, ctx: ResolvedContext): Map<string, Iri> {
  const out = new Map<string, Iri>();
  for (const key of Object.keys(body)) if (!ENTITY_CORE_MEMBERS.has(key) && !key.startsWith('@')) out.set(key, ctx.expandTerm(key));
  return out;
}

/** The sources' entities, as this broker's model, kept to the attributes each source covers. */
async function entitiesOf(deps: DistributedDeps, src: MatchedSource, outcome: SourceOutcome & { ok: true }, ctx: ResolvedContext): Promise<Entity[]> {
  if (outcome.body === undefined) return [];
  const docs = Array.isArray(outcome.body) ? outcome.body : [outcome.body];
  if (docs.length > deps.maxEntities) docs.length = deps.maxEntities;
  const out: Entity[] = [];
  const linked = await contextOfLink(deps, outcome.link, ctx);
  const now = deps.clock.now();
  for (const doc of docs) {
    if (!isPlainObject(doc)) throw new Error('an entity is not an object');
    const own = doc['@context'];
    // NOTE: a reply's @context is untrusted JSON; the context service validates and bounds it.
    const replyCtx = own !== undefined ? await deps.contexts.resolve(own as never) : linked;
    const entity = parseEntity(doc, replyCtx, { now: 0 });
    const attrs: Entity['attrs'] = {};
    for (const [name, instances] of Object.entries(entity.attrs)) if (src.attrs === undefined || src.attrs.includes(name)) attrs[name] = instances;
    out.push({ ...entity, attrs, createdAt: now, modifiedAt: now });
  }
  return out;
}

async function contextOfLink(deps: DistributedDeps, link: string | undefined, fallback: ResolvedContext): Promise<ResolvedContext> {
  const url = parseLinkContext(link);
  return url === undefined ? fallback : deps.contexts.resolve(url);
}

/** Replies remembered per source and request, to hand back the same entities for the same bytes. */
const REMEMBERED = 16;
/** Largest reply remembered (bounds the memory: REMEMBERED × this). */
const REMEMBERED_BYTES = 262_144;

interface RememberedReply {
  bytes: Buffer;
  entities: Entity[];
  /** The reply's entity tag, when it had one: the next request asks If-None-Match with it. */
  etag?: string;
}

const keyOf = (r: SourceRequest): string => `${r.method} ${r.path}?${r.query?.toString() ?? ''} ${r.body === undefined ? '' : JSON.stringify(r.body)}`;

/**
 * The entities of a reply; the same objects as last time when the source answered the same request
 * with the same bytes, or with 304 to the tag of those bytes, so their rendered text is reused (a
 * source that did not change costs a round trip, not a transfer, a parse and a render).
 */
async function remembered(deps: DistributedDeps, key: string, outcome: SourceOutcome & { ok: true }, parse: () => Promise<Entity[]>): Promise<Entity[]> {
  const last = deps.replies.get(key);
  if (outcome.status === 304) {
    if (last === undefined) throw new Error('a 304 answer to a request that asked for no entity tag');
    return last.entities;
  }
  const bytes = outcome.bytes;
  if (bytes === undefined || bytes.length > REMEMBERED_BYTES) return parse();
  if (last !== undefined && last.bytes.equals(bytes)) {
    if (outcome.etag !== last.etag) deps.replies.set(key, { bytes: last.bytes, entities: last.entities, ...(outcome.etag !== undefined ? { etag: outcome.etag } : {}) });
    return last.entities;
  }
  const entities = await parse();
  deps.replies.set(key, { bytes, entities, ...(outcome.etag !== undefined ? { etag: outcome.etag } : {}) });
  return entities;
}

/** The caller's query for one source: attrs narrowed to what it covers (§4.3.6.1). */
function queryFor(src: MatchedSource, req: ReadRequest): URLSearchParams {
  const query = new URLSearchParams(req.query);
  if (src.attrs !== undefined) query.set('attrs', src.attrs.map((a) => req.ctx.compactIri(a)).join(','));
  // NOTE: a source registered for some entities is asked for those only (§4.3.6.1: the registration's constraints hold).
  if (src.ids !== undefined && req.method === 'GET' && !query.has('id')) query.set('id', src.ids.join(','));
  return query;
}

function bodyFor(src: MatchedSource, req: ReadRequest): Record<string, unknown> | undefined {
  if (req.body === undefined) return undefined;
  return src.attrs === undefined ? req.body : { ...req.body, attrs: src.attrs.map((a) => req.ctx.compactIri(a)) };
}

/**
 * The request one source gets. A retrieval goes as a query to a source that allows only
 * queryEntity (GET /entities?id=…&type=…) or queryBatch (POST /entityOperations/query).
 */
function requestFor(src: MatchedSource, req: ReadRequest): SourceRequest {
  const context = contextUrlOf(req.ctx);
  const id = req.selector.id;
  if (id !== undefined && src.op !== 'retrieveEntity') {
    const type = src.types.map((t) => req.ctx.compactIri(t)).join(',');
    const attrs = src.attrs?.map((a) => req.ctx.compactIri(a));
    if (src.op === 'queryBatch') {
      const body = { type: 'Query', entities: [{ id, ...(type !== '' ? { type } : {}) }], ...(attrs ? { attrs } : {}) };
      return { method: 'POST', path: '/ngsi-ld/v1/entityOperations/query', body, context, via: req.via, incoming: req.incoming };
    }
    const query = new URLSearchParams({ id, ...(type !== '' ? { type } : {}), ...(attrs ? { attrs: attrs.join(',') } : {}) });
    return { method: 'GET', path: '/ngsi-ld/v1/entities', query, context, via: req.via, incoming: req.incoming };
  }
  const body = bodyFor(src, req);
  return { method: req.method, path: req.path, query: queryFor(src, req), context, via: req.via, incoming: req.incoming, ...(body ? { body } : {}) };
}

function loopCheck(deps: DistributedDeps, sources: MatchedSource[], via: string | undefined): MatchedSource[] {
  if (!deps.client.isLoop(via)) return sources;
  // NGSI-LD §6.3.18: a request that came back is served here only; when only a source could serve it, the loop is an error.
  if (sources.some((s) => AUTHORITATIVE.has(s.reg.mode) && s.attrs === undefined)) {
    throw new LoopDetectedError('Loop detected', 'The Via header names this broker: the request came back to it');
  }
  return [];
}

async function readAll(deps: DistributedDeps, tenant: string, req: ReadRequest, sources: MatchedSource[]): Promise<RemoteEntities> {
  const result: RemoteEntities = { entities: [], authoritative: new Set(), warnings: [] };
  const byId = new Map<string, Entity>();
  const replies = await Promise.all(sources.map(async (src) => {
    const sent = requestFor(src, req);
    const key = `${tenant}\u0000${src.reg.id}\u0000${keyOf(sent)}`;
    const etag = deps.replies.get(key)?.etag;
    const outcome = await deps.client.send(tenant, src.reg, etag === undefined ? sent : { ...sent, ifNoneMatch: etag });
    if (!outcome.ok) return { src, warning: formatWarning(outcome.warning) };
    try {
      return { src, relayed: outcome.relayed, entities: await remembered(deps, key, outcome, () => entitiesOf(deps, src, outcome, req.ctx)) };
    } catch (err) {
      const text = `the payload of the registration endpoint is not valid NGSI-LD: ${err instanceof Error ? err.message : String(err)}`;
      return { src, warning: formatWarning({ code: 111, agent: agentOf(src.reg), text }) };
    }
  }));
  for (const r of replies) {
    if (r.warning !== undefined) result.warnings.push(r.warning);
    if (r.relayed !== undefined) result.warnings.push(...r.relayed);
    for (const e of r.entities ?? []) {
      if (AUTHORITATIVE.has(r.src.reg.mode)) result.authoritative.add(e.id);
      const held = byId.get(e.id);
      byId.set(e.id, held === undefined ? e : mergeEntity(held, e, false));
    }
  }
  result.entities = [...byId.values()];
  return result;
}

const agentOf = (reg: Registration): string => {
  try {
    return new URL(reg.endpoint).host;
  } catch {
    return 'unknown';
  }
};

/** The body one source gets: the members it covers (and those every body keeps); undefined when it covers none. */
function slice(body: Record<string, unknown>, keys: Map<string, Iri>, src: MatchedSource, keep: readonly string[]): Record<string, unknown> | undefined {
  if (src.attrs === undefined) return body;
  const out: Record<string, unknown> = {};
  let any = false;
  for (const [key, value] of Object.entries(body)) {
    const iri = keys.get(key);
    if (iri === undefined ? keep.includes(key) || key === '@context' : src.attrs.includes(iri)) {
      out[key] = value;
      if (iri !== undefined) any = true;
    }
  }
  return any ? out : undefined;
}

export function createDistributedOps(options: Omit<DistributedDeps, 'replies'>): DistributedOps {
  const deps: DistributedDeps = { ...options, replies: createLru(REMEMBERED) };
  const { index, clock } = deps;
  return {
    active: (tenant) => deps.enabled && index.has(tenant),
    async read(tenant, req, op) {
      // NGSI-LD §5.7.1.4: a retrieval may be asked of a source as a query.
      const ops: Operation[] = op === 'retrieveEntity' ? ['retrieveEntity', 'queryEntity', 'queryBatch'] : [op];
      const sources = loopCheck(deps, index.match(tenant, ops, req.selector, clock.now()), req.via);
      if (sources.length === 0) return { entities: [], authoritative: new Set(), warnings: [] };
      return readAll(deps, tenant, req, sources);
    },
    write: (tenant, req) => writeAll(deps, tenant, req),
    batch: (tenant, req) => forwardBatch(deps, tenant, req),
  };
}

async function writeAll(deps: DistributedDeps, tenant: string, req: WriteRequest): Promise<ForwardedWrite> {
  const all = deps.index.match(tenant, req.op, req.selector, deps.clock.now()).filter((s) => s.reg.mode !== 'auxiliary');
  const sources = loopCheck(deps, all, req.via);
  const keys = req.body === undefined ? new Map<string, Iri>() : attributeKeys(req.body, req.ctx);
  const named = req.body !== undefined ? [...keys.values()] : [...(req.selector.attrs ?? [])];
  const out: ForwardedWrite = { forwarded: false, sources: 0, rest: req.body, remoteOnly: false, done: [], failures: [], warnings: [] };
  if (sources.length === 0) return out;
  const taken = new Set<Iri>();
  const sends = sources.flatMap((src) => {
    const body = req.body === undefined ? req.payload : slice(req.body, keys, src, req.keep ?? []);
    if (req.body !== undefined && body === undefined) return [];
    if (AUTHORITATIVE.has(src.reg.mode)) {
      if (src.attrs === undefined) out.remoteOnly = true;
      for (const a of src.attrs ?? named) taken.add(a);
    }
    const sent: SourceRequest = {
      method: req.method, path: req.path, context: contextUrlOf(req.ctx), via: req.via, incoming: req.incoming,
      ...(req.query ? { query: req.query } : {}), ...(body !== undefined ? { body: isPlainObject(body) ? withoutContext(body) : body } : {}),
    };
    return [deps.client.send(tenant, src.reg, sent).then((outcome) => ({ src, outcome }))];
  });
  out.forwarded = sends.length > 0;
  out.sources = sends.length;
  for (const { src, outcome } of await Promise.all(sends)) {
    const attrs = src.attrs ?? (named.length > 0 ? named : undefined);
    if (outcome.ok && outcome.status < 300 && outcome.status !== 207) {
      out.done.push(...(attrs ?? []));
      continue;
    }
    const status = outcome.ok ? outcome.status : (outcome.status ?? 503);
    const detail = !outcome.ok ? outcome.warning.text
      : outcome.status === 207 ? 'partial success at the registration endpoint' : `the registration endpoint answered ${outcome.status}`;
    out.failures.push({ registrationId: src.reg.id, status, detail, attrs });
    if (!outcome.ok) out.warnings.push(formatWarning(outcome.warning));
  }
  if (named.length > 0 && named.every((a) => taken.has(a))) out.remoteOnly = true;
  if (req.body !== undefined && taken.size > 0) {
    const rest: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(req.body)) if (!taken.has(keys.get(key) ?? '')) rest[key] = value;
    out.rest = rest;
  }
  return out;
}

function withoutContext(body: Record<string, unknown>): Record<string, unknown> {
  if (!('@context' in body)) return body;
  const { ['@context']: _drop, ...rest } = body;
  return rest;
}

/** One entity of a batch write: its id, types (when known), attribute names, the element as sent and its context. */
export interface BatchItem {
  id: string;
  types?: readonly Iri[];
  body: unknown;
  ctx: ResolvedContext | undefined;
}

export interface BatchForward {
  op: Operation;
  path: string;
  query?: URLSearchParams;
  items: readonly BatchItem[];
  via: string | undefined;
  /** The incoming request's headers (contextSourceInfo values `urn:ngsi-ld:request` copy them). */
  incoming: Incoming;
}

export interface ForwardedBatch {
  /** Per item: whether it is written here too (no exclusive or redirect source took it whole). */
  local: boolean[];
  /** Per item: what failed at its sources. */
  failures: Map<number, SourceFailure>;
}

/** The slice of a batch element one source gets; undefined when it covers none of its attributes. */
function sliceElement(item: BatchItem, src: MatchedSource): { body: unknown; whole: boolean } | undefined {
  // An id alone (a batch delete): the source takes the entity whole only when it registered every attribute.
  if (!isPlainObject(item.body)) return { body: item.body, whole: src.attrs === undefined };
  // NOTE: a source gets JSON with the context in Link: an element's own @context is left out.
  if (src.attrs === undefined || item.ctx === undefined) return { body: withoutContext(item.body), whole: src.attrs === undefined };
  const keys = attributeKeys(item.body, item.ctx);
  const body = slice(item.body, keys, src, ['id', 'type', 'scope']);
  if (body === undefined) return undefined;
  return { body: withoutContext(body), whole: [...keys.values()].every((a) => src.attrs?.includes(a)) };
}

/** NGSI-LD §5.6.7-§5.6.10, §5.6.20 with matching registrations: each source gets one batch of what it covers. */
async function forwardBatch(deps: DistributedDeps, tenant: string, req: BatchForward): Promise<ForwardedBatch> {
  const out: ForwardedBatch = { local: req.items.map(() => true), failures: new Map() };
  const groups = new Map<string, { src: MatchedSource; indexes: number[]; bodies: unknown[] }>();
  const now = deps.clock.now();
  req.items.forEach((item, i) => {
    const matched = deps.index.match(tenant, req.op, { id: item.id, ...(item.types ? { types: item.types } : {}) }, now)
      .filter((s) => s.reg.mode !== 'auxiliary');
    for (const src of loopCheck(deps, matched, req.via)) {
      const part = sliceElement(item, src);
      if (part === undefined) continue;
      if (AUTHORITATIVE.has(src.reg.mode) && part.whole) out.local[i] = false;
      const group = groups.get(src.reg.id) ?? { src, indexes: [], bodies: [] };
      group.indexes.push(i);
      group.bodies.push(part.body);
      groups.set(src.reg.id, group);
    }
  });
  await Promise.all([...groups.values()].map(async ({ src, indexes, bodies }) => {
    const context = req.items[indexes[0]!]?.ctx;
    const outcome = await deps.client.send(tenant, src.reg, {
      method: 'POST', path: req.path, body: bodies, context: context === undefined ? undefined : contextUrlOf(context), via: req.via, incoming: req.incoming,
      ...(req.query ? { query: req.query } : {}),
    });
    const failed = batchFailures(outcome, indexes.map((i) => req.items[i]!.id));
    for (const i of indexes) {
      const detail = failed.get(req.items[i]!.id) ?? failed.get('');
      if (detail !== undefined) out.failures.set(i, { registrationId: src.reg.id, status: detail.status, detail: detail.detail, attrs: undefined });
    }
  }));
  return out;
}

/** The entities a source's batch answer says failed (key '' for all of them). */
function batchFailures(outcome: SourceOutcome, ids: string[]): Map<string, { status: number; detail: string }> {
  const out = new Map<string, { status: number; detail: string }>();
  if (!outcome.ok) {
    out.set('', { status: outcome.status ?? 503, detail: outcome.warning.text });
    return out;
  }
  let body: unknown;
  try {
    body = outcome.status === 207 ? outcome.body : undefined;
  } catch (err) {
    out.set('', { status: 502, detail: err instanceof Error ? err.message : String(err) });
    return out;
  }
  if (isPlainObject(body) && Array.isArray(body['errors'])) {
    for (const e of body['errors']) {
      if (isPlainObject(e) && typeof e['entityId'] === 'string' && ids.includes(e['entityId'])) {
        const error = isPlainObject(e['error']) ? e['error'] : {};
        out.set(e['entityId'], { status: typeof error['status'] === 'number' ? error['status'] : 400, detail: typeof error['detail'] === 'string' ? error['detail'] : 'refused by the context source' });
      }
    }
    return out;
  }
  if (outcome.status >= 300) out.set('', { status: outcome.status, detail: `the registration endpoint answered ${outcome.status}` });
  return out;
}
