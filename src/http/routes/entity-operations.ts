// Routes of batch entity operations (NGSI-LD §6.14-6.17, §6.31): create, upsert, update, merge and
// delete of many entities; each is parsed with its own context and fails on its own (BatchOperationResult).

import {
  BadRequestDataError, InvalidRequestError, isAbsoluteUri, isPlainObject, parseAttributes, parseEntity, parseEntityMembers,
  parseEntityFragment, ERROR_TYPE_BASE, type Entity, type EntityId, type Iri, type Json, type NotUpdated,
} from '../../ngsi/index.js';
import type { Operation, SourceFailure } from '../../registrations/index.js';
import { incomingOf, viaOf } from '../distributed.js';
import type { BatchOutcome, UpsertMode } from '../../entities/index.js';
import type { ContextInput, ResolvedContext } from '../../jsonld/index.js';
import { requestIdOf, resource, type App, type AppContext, type AppDeps } from '../app-env.js';
import { parseJsonText, readBytes, readJsonBody } from '../body.js';
import { requestMediaType } from '../media.js';
import { csv, readParams, type Params } from '../params.js';
import { problemOf, toNgsiError } from '../problem.js';
import { BASE, noContent, sendJson } from '../respond.js';
import { actorOf } from '../request-context.js';

/** One element of a batch body: parsed into a value, or already failed. */
type Slot<T> =
  | { ok: true; id: EntityId; value: T; ctx: ResolvedContext | undefined; raw: unknown }
  | { ok: false; entityId: Json; error: unknown };

type Parse<T> = (element: unknown, ctx: ResolvedContext, now: number) => { id: EntityId; value: T };

/** The id reported for an element: its `id` when it is a string, else the element itself. */
function reportedId(element: unknown): Json {
  if (typeof element === 'string') return element;
  if (isPlainObject(element) && typeof element['id'] === 'string') return element['id'];
  return element as Json; // NOTE: the element comes from JSON.parse, so it is JSON
}

function requireId(id: unknown): EntityId {
  if (id === undefined) throw new BadRequestDataError('Entity id is missing');
  if (typeof id !== 'string' || !isAbsoluteUri(id)) throw new BadRequestDataError('Invalid entity id', `'${String(id)}' is not an absolute URI`);
  return id;
}

/** Empty and oversized batches are refused before anything is written (behaviour §4). */
function checkSize(elements: unknown[], max: number): void {
  if (elements.length === 0) throw new BadRequestDataError('The batch is empty');
  if (elements.length > max) throw new BadRequestDataError('Too many entities in the batch', `At most ${max}, got ${elements.length}`);
}

/**
 * Reads the array body and parses every element with its own context (ld+json: the element's
 * @context; json: the Link header). A context that cannot be loaded fails the whole request.
 */
async function readBatch<T>(c: AppContext, deps: AppDeps, parse: Parse<T>): Promise<Array<Slot<T>>> {
  const body = await readJsonBody(c.req.raw, { limit: deps.config.bodyLimit, maxDepth: deps.config.maxJsonDepth, isArray: true });
  const elements = body.body as unknown[]; // NOTE: readJsonBody with isArray guarantees an array
  checkSize(elements, deps.config.batchMaxSize);
  const resolved = new Map<string, Promise<ResolvedContext>>();
  const resolve = (input: ContextInput | undefined): Promise<ResolvedContext> => {
    const key = JSON.stringify(input ?? null);
    let ctx = resolved.get(key);
    if (!ctx) {
      ctx = deps.contexts.resolve(input);
      resolved.set(key, ctx);
    }
    return ctx;
  };
  const now = deps.entities.now();
  const slots: Array<Slot<T>> = [];
  for (const [i, element] of elements.entries()) {
    try {
      const given = body.elementContexts?.[i];
      if (given instanceof Error) throw given;
      const ctx = await resolve(given);
      const { id, value } = parse(element, ctx, now);
      slots.push({ ok: true, id, value, ctx, raw: element });
    } catch (err) {
      slots.push({ ok: false, entityId: reportedId(element), error: err });
    }
  }
  return slots;
}

/** Entity ids of a delete body: strings, in application/json or application/ld+json alike (no context needed). */
async function readIds(c: AppContext, deps: AppDeps): Promise<Array<Slot<null>>> {
  requestMediaType(c.req.header('content-type'), false);
  const body = parseJsonText(await readBytes(c.req.raw, deps.config.bodyLimit), deps.config.maxJsonDepth);
  if (!Array.isArray(body)) throw new InvalidRequestError('The body must be a JSON array');
  checkSize(body, deps.config.batchMaxSize);
  return body.map((element: unknown): Slot<null> => {
    try {
      return { ok: true, id: requireId(element), value: null, ctx: undefined, raw: element };
    } catch (err) {
      return { ok: false, entityId: reportedId(element), error: err };
    }
  });
}

function notUpdatedError(notUpdated: NotUpdated[], ctx: ResolvedContext | undefined): BadRequestDataError {
  const names = notUpdated.map((n) => `${ctx ? ctx.compactIri(n.attr) : n.attr}: ${n.reason}`);
  return new BadRequestDataError('Some attributes were not updated', names.join('; '));
}

interface BatchReport {
  success: EntityId[];
  created: EntityId[];
  errors: Array<{ entityId: Json; error: Json }>;
}

/** Runs the writes of the valid slots and lines their outcomes up with the failed ones, in input order. */
async function runBatch<T>(
  c: AppContext, deps: AppDeps, slots: Array<Slot<T>>, write: (items: Array<{ id: EntityId; value: T }>) => Promise<BatchOutcome[]>,
): Promise<BatchReport> {
  const valid = slots.flatMap((s) => (s.ok ? [s] : []));
  const outcomes = valid.length > 0 ? await write(valid) : [];
  const byItem = new Map(valid.map((s, i) => [s, outcomes[i]]));
  const report: BatchReport = { success: [], created: [], errors: [] };
  // An id repeated in a batch (upsert) is listed once, where it first succeeded.
  const succeeded = new Set<EntityId>();
  const created = new Set<EntityId>();
  const fail = (entityId: Json, err: unknown): void => {
    const problem = problemOf(toNgsiError(err, deps.log, requestIdOf(c)));
    report.errors.push({ entityId, error: { ...problem } });
  };
  for (const slot of slots) {
    if (!slot.ok) {
      fail(slot.entityId, slot.error);
      continue;
    }
    const outcome = byItem.get(slot);
    if (!outcome) continue;
    if (outcome.status === 'failed') fail(slot.id, outcome.error);
    else if (outcome.status === 'partial') fail(slot.id, notUpdatedError(outcome.notUpdated, slot.ctx));
    else {
      succeeded.add(slot.id);
      if (outcome.created) created.add(slot.id);
    }
  }
  report.success = [...succeeded];
  report.created = [...created];
  return report;
}

/** The ProblemDetails of an entity a context source did not write. */
function sourceProblem(f: SourceFailure): Json {
  const type = f.status === 404 ? 'ResourceNotFound' : f.status === 409 ? 'AlreadyExists' : f.status < 500 ? 'BadRequestData' : 'InternalError';
  return { type: ERROR_TYPE_BASE + type, title: 'Not written at the context source', status: f.status, detail: f.detail, registrationId: f.registrationId };
}

/**
 * NGSI-LD §5.6.7-§5.6.10, §5.6.20 with matching registrations: the valid entities go to their
 * sources by mode; those an exclusive or redirect source took whole are not written here.
 */
async function forwardSlots<T>(
  c: AppContext, deps: AppDeps, op: Operation, name: string, slots: Array<Slot<T>>, query?: URLSearchParams,
): Promise<{ local: Array<Slot<T>>; remote: BatchReport }> {
  const remote: BatchReport = { success: [], created: [], errors: [] };
  const tenant = actorOf(c).tenant;
  if (!deps.distributed.active(tenant) || c.req.query('local') === 'true') return { local: slots, remote };
  const valid = slots.flatMap((s) => (s.ok ? [s] : []));
  // Ids alone (delete, update, merge) are matched with the types the entity has here, when it is here.
  const held = deps.entities.getMany(actorOf(c), valid.filter((s) => !isEntity(s.value)).map((s) => s.id));
  const typesOf = (s: (typeof valid)[number]): readonly Iri[] | undefined => (isEntity(s.value) ? s.value.types : held.get(s.id)?.types);
  const fb = await deps.distributed.batch(tenant, {
    op, path: `/ngsi-ld/v1/entityOperations/${name}`, via: viaOf(c), incoming: incomingOf(c), ...(query ? { query } : {}),
    items: valid.map((s) => {
      const types = typesOf(s);
      return { id: s.id, body: s.raw, ctx: s.ctx, ...(types ? { types } : {}) };
    }),
  });
  const local = new Set<Slot<T>>(slots.filter((s) => !s.ok));
  valid.forEach((slot, i) => {
    const failure = fb.failures.get(i);
    if (failure !== undefined) remote.errors.push({ entityId: slot.id, error: sourceProblem(failure) });
    if (fb.local[i]) local.add(slot);
    else if (failure === undefined) remote.success.push(slot.id);
  });
  return { local: slots.filter((s) => local.has(s)), remote };
}

/** The local report with the sources' one: an entity failed anywhere is listed as an error, not a success. */
function withRemote(report: BatchReport, remote: BatchReport): BatchReport {
  const failed = new Set(remote.errors.map((e) => e.entityId));
  return {
    success: [...new Set([...report.success, ...remote.success])].filter((id) => !failed.has(id)),
    created: report.created, errors: [...report.errors, ...remote.errors],
  };
}

/** 204 when everything succeeded, else 207 with the BatchOperationResult (NGSI-LD §5.2.16). */
function batchResponse(report: BatchReport): Response {
  if (report.errors.length === 0) return noContent();
  return sendJson({ success: report.success, errors: report.errors }, 207);
}

/** Whether a parsed batch element is a whole entity (create, upsert). */
const isEntity = (v: unknown): v is Entity => isPlainObject(v) && Array.isArray(v['types']) && typeof v['id'] === 'string';

/** The `options` a source gets as they were given. */
function optionsQuery(params: Params): URLSearchParams | undefined {
  const value = params.get('options');
  return value === undefined ? undefined : new URLSearchParams({ options: value });
}

/** The `options` of a batch route, out of a closed set (400 BadRequestData otherwise). */
function options<T extends string>(params: Params, allowed: readonly T[]): Set<T> {
  const out = new Set<T>();
  for (const o of csv(params, 'options') ?? []) {
    const hit = allowed.find((a) => a === o);
    if (hit === undefined) throw new BadRequestDataError(`Unknown option '${o}'`, `Allowed: ${allowed.join(', ')}`);
    out.add(hit);
  }
  return out;
}

const parseWhole: Parse<Entity> = (element, ctx, now) => {
  const entity = parseEntity(element, ctx, { now });
  return { id: entity.id, value: entity };
};

export function registerEntityOperationRoutes(app: App, deps: AppDeps): void {
  const { batch } = deps;
  const at = (op: string): string => `${BASE}/entityOperations/${op}`;

  resource(app, at('create'), {
    // NGSI-LD §6.14.3.1 Create Batch of Entities (§5.6.7)
    POST: async (c) => {
      readParams(c.req.url, ['local']);
      const fw = await forwardSlots(c, deps, 'createBatch', 'create', await readBatch(c, deps, parseWhole));
      const report = withRemote(await runBatch(c, deps, fw.local, (items) => batch.create(actorOf(c), items.map((i) => i.value))), fw.remote);
      return report.errors.length === 0 ? sendJson(report.success, 201) : batchResponse(report);
    },
  });

  resource(app, at('upsert'), {
    // NGSI-LD §6.15.3.1 Upsert Batch of Entities (§5.6.8)
    POST: async (c) => {
      const params = readParams(c.req.url, ['options', 'local']);
      const chosen = options(params, ['replace', 'update'] as const);
      if (chosen.size > 1) throw new BadRequestDataError('options=replace and options=update exclude each other');
      const mode: UpsertMode = chosen.has('update') ? 'update' : 'replace';
      const fw = await forwardSlots(c, deps, 'upsertBatch', 'upsert', await readBatch(c, deps, parseWhole), optionsQuery(params));
      const report = withRemote(await runBatch(c, deps, fw.local, (items) => batch.upsert(actorOf(c), items.map((i) => i.value), mode)), fw.remote);
      if (report.errors.length > 0) return batchResponse(report);
      return report.created.length > 0 ? sendJson(report.created, 201) : noContent();
    },
  });

  resource(app, at('update'), {
    // NGSI-LD §6.16.3.1 Update Batch of Entities (§5.6.9)
    POST: async (c) => {
      const params = readParams(c.req.url, ['options', 'local']);
      const noOverwrite = options(params, ['noOverwrite'] as const).has('noOverwrite');
      const slots = await readBatch(c, deps, (element, ctx, now) => {
        if (!isPlainObject(element)) throw new BadRequestDataError('An entity must be a JSON object');
        const id = requireId(element['id']);
        const value = {
          attrs: parseAttributes(element, ctx, { now, allowNull: true }),
          members: parseEntityMembers(element, ctx, { now, allowNull: true }),
        };
        return { id, value };
      });
      const fw = await forwardSlots(c, deps, 'updateBatch', 'update', slots, optionsQuery(params));
      const report = withRemote(await runBatch(c, deps, fw.local,
        (items) => batch.update(actorOf(c), items.map((i) => ({ id: i.id, ...i.value })), { noOverwrite })), fw.remote);
      return batchResponse(report);
    },
  });

  resource(app, at('merge'), {
    // NGSI-LD §6.31.3.1 Merge Batch of Entities (§5.6.20)
    POST: async (c) => {
      readParams(c.req.url, ['local']);
      const slots = await readBatch(c, deps, (element, ctx, now) => {
        const fragment = parseEntityFragment(element, ctx, { now });
        return { id: requireId(fragment.id), value: fragment };
      });
      const fw = await forwardSlots(c, deps, 'mergeBatch', 'merge', slots);
      const report = withRemote(await runBatch(c, deps, fw.local,
        (items) => batch.merge(actorOf(c), items.map((i) => ({ id: i.id, fragment: i.value })))), fw.remote);
      return batchResponse(report);
    },
  });

  resource(app, at('delete'), {
    // NGSI-LD §6.17.3.1 Delete Batch of Entities (§5.6.10)
    POST: async (c) => {
      readParams(c.req.url, ['local']);
      const fw = await forwardSlots(c, deps, 'deleteBatch', 'delete', await readIds(c, deps));
      const report = withRemote(await runBatch(c, deps, fw.local, (items) => batch.delete(actorOf(c), items.map((i) => i.id))), fw.remote);
      return batchResponse(report);
    },
  });
}
