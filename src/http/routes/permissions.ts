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
import { resource, resourceBeside, type App, type AppContext, type AppDeps } from '../app-env.js';
import { readJsonBody } from '../body.js';
import { APP_JSON, APP_LD_JSON, negotiate } from '../media.js';
import { bool, csv, oneOf, page, readParams } from '../params.js';
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
function viewOf(params: ReturnType<typeof readParams>): { details: boolean; pick?: string[]; sysAttrs: boolean } {
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

export function registerPermissionRoutes(app: App, deps: AppDeps): void {
  const { permissions, subjects, contexts, config } = deps;

  const bodyOf = async (c: AppContext, allowMergePatch: boolean) => {
    const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth, allowMergePatch });
    return { raw: parseBody(body.body), ctx: await contexts.resolve(body.context) };
  };

  const render = (c: AppContext, p: Permission, mapper: TermMapper, view: { details: boolean; pick?: string[]; sysAttrs: boolean }): JsonObject => {
    const target: JsonObject = p.target.id !== undefined ? { id: p.target.id } : {};
    if (p.target.types !== undefined) target.types = p.target.types.map((t) => mapper.compactIri(t));
    if (p.target.scopes !== undefined) target.scopes = [...p.target.scopes];
    const out: JsonObject = { id: p.id, type: 'Permission', target, assignee: p.assignee };
    if (p.assigner !== undefined) out.assigner = p.assigner;
    out.action = p.action;
    if (view.details) {
      out.assignee = subjects.describe(p.assignee) as unknown as Json;
      if (p.assigner !== undefined) out.assigner = subjects.describe(p.assigner) as unknown as Json;
      const entity = permissions.targetEntity(actorOf(c), p);
      if (entity !== undefined) {
        const picked = new Set((view.pick ?? []).map((a) => mapper.expandTerm(a)));
        const shown = renderEntity({ ...entity, attrs: Object.fromEntries(Object.entries(entity.attrs).filter(([a]) => picked.has(a))) }, mapper,
          { format: 'normalized', sysAttrs: false });
        delete shown.scope;
        out.target = shown;
      }
    }
    if (view.sysAttrs) {
      out.createdAt = formatDateTime(p.createdAt);
      out.modifiedAt = formatDateTime(p.modifiedAt);
    }
    return out;
  };

  const listing = (assigned: boolean) => async (c: AppContext) => {
    const params = readParams(c.req.url, LIST_PARAMS);
    const mediaType = negotiate(c.req.header('accept'), OFFERED);
    const ctx = await linkContext(c, deps);
    const p = page(params, config);
    const action = oneOf(params, 'action', ['read', 'write', 'admin', 'own'] as const) ?? 'admin';
    const scopeQ = params.get('targetScopeQ');
    const view = viewOf(params);
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
    const found = permissions.list(actorOf(c), query, assigned);
    const payload = found.items.slice(0, p.limit).map((perm) => render(c, perm, ctx, view));
    return sendPayload(c, payload, ctx, mediaType, 200, pageHeaders(c.req.url, p, found.items.length > p.limit, found.count, mediaType));
  };

  for (const base of [`${BASE}/auth/permissions`, '/auth/permissions']) {
    const location = (id: string): string => `${base}/${idSegment(id)}`;
    const seeOther = (c: AppContext, existing: Permission): Response => {
      const headers = { Location: location(existing.id), 'Content-Type': 'application/json' };
      return c.body(JSON.stringify({
        type: 'https://uri.etsi.org/ngsi-ld/errors/AlreadyExists', title: 'Redundant permission', status: 303,
        detail: `Permission ${existing.id} already gives ${existing.action} to ${existing.assignee} on the same target`,
      }), 303, headers);
    };

    resource(app, base, {
      POST: async (c) => {
        readParams(c.req.url, []);
        const { raw, ctx } = await bodyOf(c, false);
        if (raw.target === undefined || raw.assignee === undefined || raw.action === undefined) {
          throw new BadRequestDataError('Invalid permission', 'target, assignee and action are required');
        }
        if (raw.id !== undefined && !isAbsoluteUri(raw.id)) throw new BadRequestDataError('Invalid permission', `id: '${raw.id}' is not an absolute URI`);
        const input: PermissionInput = { target: targetOf(raw.target, ctx), assignee: raw.assignee, action: actionOf(raw.action) };
        if (raw.id !== undefined) input.id = raw.id;
        const outcome = permissions.create(actorOf(c), input);
        if ('existing' in outcome) return seeOther(c, outcome.existing);
        return c.body(null, 201, { Location: location(outcome.created.id) });
      },
      GET: listing(false),
    });

    resourceBeside(app, `${base}/:id`, { assigned: { GET: listing(true) } }, {
      GET: async (c) => {
        const params = readParams(c.req.url, ['details', 'detailsPick', 'sysAttrs', 'options']);
        const mediaType = negotiate(c.req.header('accept'), OFFERED);
        const ctx = await linkContext(c, deps);
        const view = viewOf(params);
        const perm = permissions.get(actorOf(c), permissionIdParam(c));
        return sendPayload(c, render(c, perm, ctx, view), ctx, mediaType);
      },
      PATCH: async (c) => {
        readParams(c.req.url, []);
        const id = permissionIdParam(c);
        const { raw, ctx } = await bodyOf(c, true);
        if (raw.id !== undefined && raw.id !== id) throw new BadRequestDataError('Invalid permission', 'id cannot be changed');
        if ('assigner' in raw) throw new BadRequestDataError('Invalid permission', 'assigner is set by the service');
        const patch: PermissionPatch = {};
        if (raw.target !== undefined) patch.target = targetOf(raw.target, ctx);
        if (raw.assignee !== undefined) patch.assignee = raw.assignee;
        if (raw.action !== undefined) patch.action = actionOf(raw.action);
        if (Object.keys(patch).length === 0) throw new BadRequestDataError('Invalid permission', 'Nothing to change: give target, assignee or action');
        const outcome = permissions.update(actorOf(c), id, patch);
        if ('existing' in outcome) return seeOther(c, outcome.existing);
        return noContent();
      },
      DELETE: (c) => {
        readParams(c.req.url, []);
        permissions.delete(actorOf(c), permissionIdParam(c));
        return noContent();
      },
    });
  }

  // Interface 4.8: 204 when authentication is off.
  const userView = (u: ReturnType<typeof subjects.users>[number]): JsonObject => {
    const out: JsonObject = { id: u.id, type: 'User', username: { type: 'Property', value: u.username } };
    if (u.givenName !== undefined) out.givenName = { type: 'Property', value: u.givenName };
    if (u.familyName !== undefined) out.familyName = { type: 'Property', value: u.familyName };
    if (u.subjectInfo !== undefined) out.subjectInfo = { type: 'Property', value: u.subjectInfo as Json };
    return out;
  };
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
