// Sends one planned batch upstream: the batch upsert of the entities' latest state, then the older
// instances through the temporal API, then deletions. A 4xx for one entity parks that entity; any
// other failure throws UpstreamError, and the whole batch is sent again later.

import type { JsonObject, TermMapper } from '../ngsi/index.js';
import { upsertEntity, temporalBodies } from './bodies.js';
import { UPSTREAM_SOCKETS, type UpstreamClient, type UpstreamReply } from './client.js';
import { UpstreamError } from './errors.js';
import { observedAttribute, instancesOf, type EntityPlan } from './plan.js';
import { BATCH_RESULT, ENTITY_LIST, PROBLEM, describeReply } from './replies.js';

const BASE = '/ngsi-ld/v1';
/** Entities looked up upstream in one query when reconciling. */
const RECONCILE_CHUNK = 50;
/**
 * Entities whose history and deletions are sent at once: one a socket of the upstream client.
 * NOTE: after an outage, a plant of fewer entities than federation.batch-size has several instances
 * of each in a batch, so a batch is one temporal request per entity: over a 300 ms round trip, 4 at a
 * time carried 200 entities' history in 15-20 s a batch, slower than a small plant writes.
 */
const REST_CONCURRENCY = UPSTREAM_SOCKETS;
/** Longest payload kept with parked changes. */
const MAX_PARKED_PAYLOAD = 65_536;

export interface SendContext {
  client: UpstreamClient;
  mapper: TermMapper;
  link: string;
  signal: AbortSignal;
}

export interface ParkedEntity {
  plan: EntityPlan;
  /** ProblemDetails JSON text. */
  error: string;
  payload: string;
}

export interface SendOutcome {
  parked: ParkedEntity[];
  sentEntities: number;
  sentInstances: number;
}

const seg = (s: string): string => encodeURIComponent(s);
const isOk = (status: number): boolean => status >= 200 && status < 300;
/** A refusal of this request that sending it again will not change (408 and 429 will; 401 is the token). */
const isRefusal = (status: number): boolean => status >= 400 && status < 500 && status !== 401 && status !== 408 && status !== 429;

function failure(what: string, reply: UpstreamReply): UpstreamError {
  return new UpstreamError(`${what}: ${describeReply(reply.status, reply.body, reply.text)}`);
}

/** The ProblemDetails of a refusal, as JSON text (a made-up one when the reply carried none). */
function problemText(reply: UpstreamReply): string {
  const parsed = PROBLEM.safeParse(reply.body);
  const problem = parsed.success ? parsed.data : { status: reply.status, title: reply.text.slice(0, 300) };
  return JSON.stringify({ ...problem, status: problem.status ?? reply.status });
}

const bounded = (json: unknown): string => JSON.stringify(json).slice(0, MAX_PARKED_PAYLOAD);

/**
 * After a failure or a restart the upstream may already hold what a batch sends: the latest
 * instance the upsert would write again (a second history instance upstream) goes through the
 * temporal API instead, which replaces an instance with the same observedAt.
 */
export async function reconcile(plans: readonly EntityPlan[], ctx: SendContext): Promise<void> {
  const upserts = plans.filter((p) => p.upsert && p.latest.size > 0);
  for (let at = 0; at < upserts.length; at += RECONCILE_CHUNK) {
    const chunk = upserts.slice(at, at + RECONCILE_CHUNK);
    const ids = chunk.map((p) => seg(p.id)).join(',');
    // NGSI-LD §5.7.2: a query needs more than ids; the attributes sent are what matters here.
    const attrs = [...new Set(chunk.flatMap((p) => [...p.latest.values()].map((i) => seg(ctx.mapper.compactIri(i.attr)))))].join(',');
    const reply = await ctx.client.send({
      method: 'GET', path: `${BASE}/entities?id=${ids}&attrs=${attrs}&limit=${chunk.length}`, link: ctx.link, signal: ctx.signal,
    });
    if (!isOk(reply.status)) throw failure('query before resending', reply);
    const parsed = ENTITY_LIST.safeParse(reply.body);
    if (!parsed.success) throw new UpstreamError('query before resending: not a list of entities');
    const found = new Map(parsed.data.map((e) => [e.id, e.attrs]));
    for (const plan of chunk) {
      const attrs = found.get(plan.id);
      if (attrs !== undefined) moveKnown(plan, attrs, ctx.mapper);
    }
  }
}

function moveKnown(plan: EntityPlan, upstream: Map<string, Array<{ observedAt?: string | undefined; datasetId?: string | undefined }>>, mapper: TermMapper): void {
  for (const [key, inst] of plan.latest) {
    const ours = observedAttribute(inst)?.observedAt;
    const theirs = upstream.get(mapper.compactIri(inst.attr))?.find((u) => u.datasetId === inst.datasetId)?.observedAt;
    if (ours === undefined || theirs === undefined) continue;
    const t = Date.parse(theirs);
    if (Number.isFinite(t) && t >= ours) {
      plan.latest.delete(key);
      plan.history.push(inst);
    }
  }
}

/** Upserts the plans' entities; returns the refused ones (the others succeeded). */
async function upsert(plans: readonly EntityPlan[], ctx: SendContext): Promise<Map<EntityPlan, ParkedEntity>> {
  const refused = new Map<EntityPlan, ParkedEntity>();
  if (plans.length === 0) return refused;
  const bodies = plans.map((p) => upsertEntity(p, ctx.mapper));
  // NGSI-LD §6.15.3.1 Batch Entity Upsert, options=update: attributes not sent are kept.
  const reply = await ctx.client.send({
    method: 'POST', path: `${BASE}/entityOperations/upsert?options=update`, body: bodies, link: ctx.link, signal: ctx.signal,
  });
  if (reply.status === 207) {
    const result = BATCH_RESULT.safeParse(reply.body);
    if (!result.success) throw new UpstreamError('batch upsert: 207 without a batch operation result');
    const errors = new Map(result.data.errors.map((e) => [e.entityId, e.error]));
    const ok = new Set(result.data.success);
    plans.forEach((plan, i) => {
      const error = errors.get(plan.id);
      if (ok.has(plan.id) && error === undefined) return;
      const status = error?.status;
      if (error === undefined || status === undefined || !isRefusal(status)) {
        throw new UpstreamError(`batch upsert: ${plan.id}: ${error === undefined ? 'not in the result' : `${status ?? ''} ${error.title ?? ''}`}`);
      }
      refused.set(plan, { plan, error: JSON.stringify(error), payload: bounded(bodies[i]) });
    });
    return refused;
  }
  if (isOk(reply.status)) return refused;
  if (!isRefusal(reply.status)) throw failure('batch upsert', reply);
  if (plans.length === 1) {
    refused.set(plans[0]!, { plan: plans[0]!, error: problemText(reply), payload: bounded(bodies[0]) });
    return refused;
  }
  // The whole batch was refused without saying for which entity: each is sent alone.
  for (const plan of plans) for (const [p, parked] of await upsert([plan], ctx)) refused.set(p, parked);
  return refused;
}

/** Sends an entity's history and deletions; a ParkedEntity when the upstream refused one of them. */
async function sendRest(plan: EntityPlan, ctx: SendContext): Promise<ParkedEntity | undefined> {
  const send = async (method: 'POST' | 'DELETE', path: string, body?: JsonObject, notFoundIsDone = false): Promise<ParkedEntity | undefined> => {
    const reply = await ctx.client.send({ method, path, link: ctx.link, signal: ctx.signal, ...(body !== undefined ? { body } : {}) });
    if (isOk(reply.status) || (notFoundIsDone && reply.status === 404)) return undefined;
    if (isRefusal(reply.status)) return { plan, error: problemText(reply), payload: bounded(body ?? { method, path }) };
    throw failure(`${method} ${path.split('?')[0]}`, reply);
  };
  const entityPath = `${BASE}/entities/${seg(plan.id)}`;
  // NGSI-LD §6.20.3.1: instances with their observedAt; the upstream replaces one it holds at the same observedAt.
  for (const body of temporalBodies(plan, plan.history, ctx.mapper)) {
    const parked = await send('POST', `${BASE}/temporal/entities/${seg(plan.id)}/attrs`, body);
    if (parked !== undefined) return parked;
  }
  for (const d of plan.deletions) {
    const query = d.datasetId === undefined ? '' : `?datasetId=${seg(d.datasetId)}`;
    const parked = await send('DELETE', `${entityPath}/attrs/${seg(ctx.mapper.compactIri(d.attr))}${query}`, undefined, true);
    if (parked !== undefined) return parked;
  }
  if (plan.deleteEntity) return send('DELETE', entityPath, undefined, true);
  return undefined;
}

/**
 * Sends a batch; throws UpstreamError when it must be sent again. The history and deletions of
 * different entities go REST_CONCURRENCY at a time (each entity's own requests in order): one at a
 * time, a drain after an outage on a link with a long round trip is bound by it, one entity a round
 * trip, and falls behind the load. On a failure the requests under way finish, then it throws.
 */
export async function sendPlans(plans: readonly EntityPlan[], ctx: SendContext): Promise<SendOutcome> {
  const refused = await upsert(plans.filter((p) => p.upsert), ctx);
  const outcome: SendOutcome = { parked: [...refused.values()], sentEntities: 0, sentInstances: 0 };
  const pending = plans.filter((plan) => !refused.has(plan));
  let next = 0;
  let failure: unknown;
  const worker = async (): Promise<void> => {
    while (next < pending.length && failure === undefined) {
      const plan = pending[next++]!;
      try {
        const parked = await sendRest(plan, ctx);
        if (parked !== undefined) {
          outcome.parked.push(parked);
          continue;
        }
      } catch (err) {
        failure ??= err;
        return;
      }
      if (plan.upsert) outcome.sentEntities += 1;
      outcome.sentInstances += instancesOf(plan);
    }
  };
  await Promise.all(Array.from({ length: Math.min(REST_CONCURRENCY, pending.length) }, worker));
  if (failure !== undefined) throw failure;
  return outcome;
}

