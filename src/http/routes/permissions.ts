// Routes of the permission API (interface 4.7, behaviour §8) under /ngsi-ld/v1/auth/permissions and
// the same under /auth/permissions, and of the subject endpoints (interface 4.8).

import { z } from 'zod';
import { parseScopeQ } from '../../ngsi/index.js';
import {
  BadRequestDataError, InvalidRequestError, formatDateTime, isAbsoluteUri, isAction, type Action, type Json, type JsonObject, type Permission,
  type PermissionTarget, type TermMapper,
} from '../../ngsi/index.js';
import { renderEntity } from '../../ngsi/index.js';
import type { PermissionInput, PermissionPatch, PermissionQuery } from '../../permissions/index.js';
import type { ResolvedContext } from '../../jsonld/index.js';
import { resource, resourceBeside, type App, type AppContext, type AppDeps } from '../app-env.js';
import { readJsonBody } from '../body.js';
import { APP_JSON, APP_LD_JSON, negotiate } from '../media.js';
import { bool, csv, oneOf, page, readParams, type Params } from '../params.js';
import { BASE, idSegment, noContent, pageHeaders, sendPayload } from '../respond.js';
import { actorOf, linkContext } from '../request-context.js';

const OFFERED = [APP_JSON, APP_LD_JSON] as const;
const oneOrMany = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);
const TARGET = z.strictObject({ id: z.string().min(1), types: oneOrMany, scopes: oneOrMany }).partial();
const PERMISSION = z.strictObject({
  id: z.string().min(1), type: z.literal('Permission'), target: TARGET, assignee: z.string().min(1), action: z.string(),
  '@context': z.unknown(),
}).partial();

const LIST_PARAMS = [
  'targetId', 'targetType', 'targetScopeQ', 'assignee', 'assigner', 'action', 'details', 'detailsPick', 'sysAttrs', 'options', 'count', 'limit',
  'offset',
];

const asList = (v: string | string[]): string[] => (typeof v === 'string' ? [v] : v);

function parseBody(body: unknown): z.infer<typeof PERMISSION> {
  const parsed = PERMISSION.safeParse(body);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.') || 'permission'}: ${i.message}`).join('; ');
    throw new BadRequestDataError('Invalid permission', detail);
  }
  return parsed.data;
}

function targetOf(raw: z.infer<typeof TARGET>, mapper: TermMapper): PermissionTarget {
  if (raw.id !== undefined) {
    if (raw.types !== undefined || raw.scopes !== undefined) {
      throw new BadRequestDataError('Invalid permission target', 'target.id is only allowed without target.types and target.scopes');
    }
    if (!isAbsoluteUri(raw.id)) throw new BadRequestDataError('Invalid permission target', `target.id: '${raw.id}' is not an absolute URI`);
    return { id: raw.id };
  }
  const out: { types?: string[]; scopes?: string[] } = {};
  if (raw.types !== undefined) out.types = asList(raw.types).map((t) => mapper.expandTerm(t));
  if (raw.scopes !== undefined) out.scopes = asList(raw.scopes);
  return out;
}

function actionOf(value: string): Action {
  if (!isAction(value)) throw new BadRequestDataError('Invalid permission', `action: '${value}' is not one of read, write, admin, own`);
  return value;
}

/** details, detailsPick and sysAttrs (interface 4.7); detailsPick without details=true is refused, not ignored. */
function viewOf(params: Params): { details: boolean; pick?: string[]; sysAttrs: boolean } {
  const options = csv(params, 'options') ?? [];
  for (const o of options) if (o !== 'sysAttrs') throw new BadRequestDataError('Invalid options', `options: '${o}' is not supported here`);
  const details = bool(params, 'details');
  const pick = params.get('detailsPick') === undefined ? undefined : csv(params, 'detailsPick') ?? [];
  if (pick !== undefined && !details) throw new BadRequestDataError('Invalid detailsPick', 'detailsPick needs details=true');
  return { details, sysAttrs: bool(params, 'sysAttrs') || options.includes('sysAttrs'), ...(pick ? { pick } : {}) };
}

function permissionIdParam(c: AppContext): string {
  const id = c.req.param('id') ?? '';
  if (!isAbsoluteUri(id)) throw new BadRequestDataError('Invalid permission id', `'${id}' is not an absolute URI`);
  return id;
}

/** The view of a permission asked for (details, detailsPick, sysAttrs). */
type PermissionView = ReturnType<typeof viewOf>;

async function bodyOf(deps: AppDeps, c: AppContext, allowMergePatch: boolean): Promise<{ raw: z.infer<typeof PERMISSION>; ctx: ResolvedContext }> {
  const { config, contexts } = deps;
  const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth, allowMergePatch });
  return { raw: parseBody(body.body), ctx: await contexts.resolve(body.context) };
}

/** The target entity of a permission (details=true), its attributes limited to detailsPick. */
function targetEntityOf(deps: AppDeps, c: AppContext, p: Permission, mapper: TermMapper, view: PermissionView): JsonObject | undefined {
  const entity = deps.permissions.targetEntity(actorOf(c), p);
  if (entity === undefined) return undefined;
  const picked = new Set((view.pick ?? []).map((a) => mapper.expandTerm(a)));
  const shown = renderEntity({ ...entity, attrs: Object.fromEntries(Object.entries(entity.attrs).filter(([a]) => picked.has(a))) }, mapper,
    { format: 'normalized', sysAttrs: false });
  delete shown.scope;
  return shown;
}

function render(deps: AppDeps, c: AppContext, p: Permission, mapper: TermMapper, view: PermissionView): JsonObject {
  const { subjects } = deps;
  const target: JsonObject = p.target.id !== undefined ? { id: p.target.id } : {};
  if (p.target.types !== undefined) target.types = p.target.types.map((t) => mapper.compactIri(t));
  if (p.target.scopes !== undefined) target.scopes = [...p.target.scopes];
  const out: JsonObject = { id: p.id, type: 'Permission', target, assignee: p.assignee };
  if (p.assigner !== undefined) out.assigner = p.assigner;
  out.action = p.action;
  if (view.details) {
    out.assignee = subjects.describe(p.assignee) as unknown as Json;
    if (p.assigner !== undefined) out.assigner = subjects.describe(p.assigner) as unknown as Json;
    const shown = targetEntityOf(deps, c, p, mapper, view);
    if (shown !== undefined) out.target = shown;
  }
  if (view.sysAttrs) {
    out.createdAt = formatDateTime(p.createdAt);
    out.modifiedAt = formatDateTime(p.modifiedAt);
  }
  return out;
}

/** The query of a permission listing from its parameters, names expanded with the context. */
function queryOf(params: Params, p: { limit: number; offset: number; count: boolean }, ctx: TermMapper): PermissionQuery {
  const action = oneOf(params, 'action', ['read', 'write', 'admin', 'own'] as const) ?? 'admin';
  const scopeQ = params.get('targetScopeQ');
  const query: PermissionQuery = { action, limit: p.limit + 1, offset: p.offset, count: p.count };
  const targetIds = csv(params, 'targetId');
  if (targetIds) query.targetIds = targetIds;
  const targetTypes = csv(params, 'targetType');
  if (targetTypes) query.targetTypes = targetTypes.map((t) => ctx.expandTerm(t));
  if (scopeQ !== undefined) query.targetScopeQ = parseScopeQ(scopeQ);
  const assignee = params.get('assignee');
  if (assignee !== undefined) query.assignee = assignee;
  const assigner = params.get('assigner');
  if (assigner !== undefined) query.assigner = assigner;
  return query;
}

const listing = (deps: AppDeps, assigned: boolean) => async (c: AppContext): Promise<Response> => {
  const params = readParams(c.req.url, LIST_PARAMS);
  const mediaType = negotiate(c.req.header('accept'), OFFERED);
  const ctx = await linkContext(c, deps);
  const p = page(params, deps.config);
  const view = viewOf(params);
  const query = queryOf(params, p, ctx);
  const found = deps.permissions.list(actorOf(c), query, assigned);
  const payload = found.items.slice(0, p.limit).map((perm) => render(deps, c, perm, ctx, view));
  return sendPayload(c, payload, ctx, mediaType, 200, pageHeaders(c.req.url, p, found.items.length > p.limit, found.count, mediaType));
};

/** 303 See Other to the permission that already gives the same right (behaviour §8). */
function seeOther(c: AppContext, location: string, existing: Permission): Response {
  const headers = { Location: location, 'Content-Type': 'application/json' };
  return c.body(JSON.stringify({
    type: 'https://uri.etsi.org/ngsi-ld/errors/AlreadyExists', title: 'Redundant permission', status: 303,
    detail: `Permission ${existing.id} already gives ${existing.action} to ${existing.assignee} on the same target`,
  }), 303, headers);
}

/** The changes of a PATCH of permission `id`: target, assignee or action. */
function patchOf(raw: z.infer<typeof PERMISSION>, id: string, ctx: TermMapper): PermissionPatch {
  if (raw.id !== undefined && raw.id !== id) throw new BadRequestDataError('Invalid permission', 'id cannot be changed');
  if ('assigner' in raw) throw new BadRequestDataError('Invalid permission', 'assigner is set by the service');
  const patch: PermissionPatch = {};
  if (raw.target !== undefined) patch.target = targetOf(raw.target, ctx);
  if (raw.assignee !== undefined) patch.assignee = raw.assignee;
  if (raw.action !== undefined) patch.action = actionOf(raw.action);
  if (Object.keys(patch).length === 0) throw new BadRequestDataError('Invalid permission', 'Nothing to change: give target, assignee or action');
  return patch;
}

/** The permissions under `base`: create and list, and one permission (read, patch, delete) beside `assigned`. */
function registerPermissionResource(app: App, deps: AppDeps, base: string): void {
  const { permissions } = deps;
  const location = (id: string): string => `${base}/${idSegment(id)}`;

  resource(app, base, {
    POST: async (c) => {
      readParams(c.req.url, []);
      const { raw, ctx } = await bodyOf(deps, c, false);
      if (raw.target === undefined || raw.assignee === undefined || raw.action === undefined) {
        throw new BadRequestDataError('Invalid permission', 'target, assignee and action are required');
      }
      if (raw.id !== undefined && !isAbsoluteUri(raw.id)) throw new BadRequestDataError('Invalid permission', `id: '${raw.id}' is not an absolute URI`);
      const input: PermissionInput = { target: targetOf(raw.target, ctx), assignee: raw.assignee, action: actionOf(raw.action) };
      if (raw.id !== undefined) input.id = raw.id;
      const outcome = permissions.create(actorOf(c), input);
      if ('existing' in outcome) return seeOther(c, location(outcome.existing.id), outcome.existing);
      return c.body(null, 201, { Location: location(outcome.created.id) });
    },
    GET: listing(deps, false),
  });

  resourceBeside(app, `${base}/:id`, { assigned: { GET: listing(deps, true) } }, {
    GET: async (c) => {
      const params = readParams(c.req.url, ['details', 'detailsPick', 'sysAttrs', 'options']);
      const mediaType = negotiate(c.req.header('accept'), OFFERED);
      const ctx = await linkContext(c, deps);
      const view = viewOf(params);
      const perm = permissions.get(actorOf(c), permissionIdParam(c));
      return sendPayload(c, render(deps, c, perm, ctx, view), ctx, mediaType);
    },
    PATCH: async (c) => {
      readParams(c.req.url, []);
      const id = permissionIdParam(c);
      const { raw, ctx } = await bodyOf(deps, c, true);
      const outcome = permissions.update(actorOf(c), id, patchOf(raw, id, ctx));
      if ('existing' in outcome) return seeOther(c, location(outcome.existing.id), outcome.existing);
      return noContent();
    },
    DELETE: (c) => {
      readParams(c.req.url, []);
      permissions.delete(actorOf(c), permissionIdParam(c));
      return noContent();
    },
  });
}

function userView(u: ReturnType<AppDeps['subjects']['users']>[number]): JsonObject {
  const out: JsonObject = { id: u.id, type: 'User', username: { type: 'Property', value: u.username } };
  if (u.givenName !== undefined) out.givenName = { type: 'Property', value: u.givenName };
  if (u.familyName !== undefined) out.familyName = { type: 'Property', value: u.familyName };
  if (u.subjectInfo !== undefined) out.subjectInfo = { type: 'Property', value: u.subjectInfo as Json };
  return out;
}

/** The subject endpoints (interface 4.8): 204 when authentication is off. */
function registerSubjectRoutes(app: App, deps: AppDeps): void {
  const { permissions, subjects } = deps;
  resource(app, `${BASE}/auth/subjects/groups`, {
    GET: async (c) => {
      readParams(c.req.url, []);
      if (!permissions.enabled) return c.body(null, 204);
      const mediaType = negotiate(c.req.header('accept'), OFFERED);
      const ctx = await linkContext(c, deps);
      const payload = subjects.groups(actorOf(c)).map((g): JsonObject => ({
        id: g.id, type: 'Group', name: { type: 'Property', value: g.name },
        ...(g.isMemberOf === undefined ? {} : { isMemberOf: { type: 'Property', value: g.isMemberOf } }),
      }));
      return sendPayload(c, payload, ctx, mediaType);
    },
  });
  resource(app, `${BASE}/auth/subjects/users`, {
    GET: async (c) => {
      readParams(c.req.url, []);
      if (!permissions.enabled) return c.body(null, 204);
      const mediaType = negotiate(c.req.header('accept'), OFFERED);
      const ctx = await linkContext(c, deps);
      return sendPayload(c, subjects.users(actorOf(c)).map(userView), ctx, mediaType);
    },
  });
  resource(app, `${BASE}/auth/subjects/users/:sub`, {
    DELETE: async (c) => {
      readParams(c.req.url, []);
      if (!permissions.enabled) return c.body(null, 204);
      const sub = c.req.param('sub') ?? '';
      if (sub === '') throw new InvalidRequestError('Invalid user id', 'The user id is missing');
      await subjects.deleteUser(actorOf(c), sub);
      return noContent();
    },
  });
}

export function registerPermissionRoutes(app: App, deps: AppDeps): void {
  for (const base of [`${BASE}/auth/permissions`, '/auth/permissions']) registerPermissionResource(app, deps, base);
  registerSubjectRoutes(app, deps);
}
