// Distributed operations (NGSI-LD §4.3.6, §5.6 and §5.7 "if there are matching registrations"):
// reads go to every matching source (any mode), writes by mode (exclusive and redirect: the
// source only; inclusive: the source and here; auxiliary: never), all sources of one request in
// parallel under one bounded wait; replies parsed as NGSI-LD entities or turned into warnings.

import type { Clock } from '../lib/index.js';
import { ENTITY_CORE_MEMBERS, LoopDetectedError, isPlainObject, parseEntity, type Entity, type Iri } from '../ngsi/index.js';
import type { ContextService, ResolvedContext } from '../jsonld/index.js';
import type { Operation, Registration } from './model.js';
import { formatWarning, type SourceClient, type SourceOutcome, type SourceRequest } from './source-client.js';
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
}

export interface SourceFailure {
  registrationId: string;
  status: number;
  detail: string;
  /** The attributes that went to it (undefined: the whole request). */
  attrs: Iri[] | undefined;
}

export interface ForwardedWrite {
  /** Whether any source took part. */
  forwarded: boolean;
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
}

export interface DistributedDeps {
  index: SourceIndex;
  client: SourceClient;
  contexts: ContextService;
  clock: Clock;
  enabled: boolean;
  /** Most entities read from one source for one query. */
  maxEntities: number;
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
  for (const doc of docs) {
    if (!isPlainObject(doc)) throw new Error('an entity is not an object');
    const own = doc['@context'];
    // NOTE: a reply's @context is untrusted JSON; the context service validates and bounds it.
    const replyCtx = own !== undefined ? await deps.contexts.resolve(own as never) : await contextOfLink(deps, outcome.link, ctx);
    const entity = parseEntity(doc, replyCtx, { now: 0 });
    const now = deps.clock.now();
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

/** The caller's query for one source: attrs narrowed to what it covers (§4.3.6.1). */
function queryFor(src: MatchedSource, req: ReadRequest): URLSearchParams {
  const query = new URLSearchParams(req.query);
  if (src.attrs !== undefined) query.set('attrs', src.attrs.map((a) => req.ctx.compactIri(a)).join(','));
  return query;
}

function bodyFor(src: MatchedSource, req: ReadRequest): Record<string, unknown> | undefined {
  if (req.body === undefined) return undefined;
  return src.attrs === undefined ? req.body : { ...req.body, attrs: src.attrs.map((a) => req.ctx.compactIri(a)) };
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
    const body = bodyFor(src, req);
    const sent: SourceRequest = {
      method: req.method, path: req.path, query: queryFor(src, req), context: contextUrlOf(req.ctx), via: req.via, ...(body ? { body } : {}),
    };
    const outcome = await deps.client.send(tenant, src.reg, sent);
    if (!outcome.ok) return { src, warning: formatWarning(outcome.warning) };
    try {
      return { src, entities: await entitiesOf(deps, src, outcome, req.ctx) };
    } catch (err) {
      const text = `the payload of the registration endpoint is not valid NGSI-LD: ${err instanceof Error ? err.message : String(err)}`;
      return { src, warning: formatWarning({ code: 111, agent: agentOf(src.reg), text }) };
    }
  }));
  for (const r of replies) {
    if (r.warning !== undefined) result.warnings.push(r.warning);
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

export function createDistributedOps(deps: DistributedDeps): DistributedOps {
  const { index, clock } = deps;
  return {
    active: (tenant) => deps.enabled && index.has(tenant),
    async read(tenant, req, op) {
      const sources = loopCheck(deps, index.match(tenant, op, req.selector, clock.now()), req.via);
      if (sources.length === 0) return { entities: [], authoritative: new Set(), warnings: [] };
      return readAll(deps, tenant, req, sources);
    },
    write: (tenant, req) => writeAll(deps, tenant, req),
  };
}

async function writeAll(deps: DistributedDeps, tenant: string, req: WriteRequest): Promise<ForwardedWrite> {
  const all = deps.index.match(tenant, req.op, req.selector, deps.clock.now()).filter((s) => s.reg.mode !== 'auxiliary');
  const sources = loopCheck(deps, all, req.via);
  const keys = req.body === undefined ? new Map<string, Iri>() : attributeKeys(req.body, req.ctx);
  const named = req.body !== undefined ? [...keys.values()] : [...(req.selector.attrs ?? [])];
  const out: ForwardedWrite = { forwarded: false, rest: req.body, remoteOnly: false, done: [], failures: [], warnings: [] };
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
      method: req.method, path: req.path, context: contextUrlOf(req.ctx), via: req.via,
      ...(req.query ? { query: req.query } : {}), ...(body !== undefined ? { body: isPlainObject(body) ? withoutContext(body) : body } : {}),
    };
    return [deps.client.send(tenant, src.reg, sent).then((outcome) => ({ src, outcome }))];
  });
  out.forwarded = sends.length > 0;
  for (const { src, outcome } of await Promise.all(sends)) {
    const attrs = src.attrs ?? (named.length > 0 ? named : undefined);
    if (outcome.ok && outcome.status < 300) {
      out.done.push(...(attrs ?? []));
      continue;
    }
    const status = outcome.ok ? outcome.status : (outcome.status ?? 503);
    const detail = outcome.ok ? `the registration endpoint answered ${outcome.status}` : outcome.warning.text;
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
