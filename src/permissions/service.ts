// Permission use cases (interface 4.7, 5; behaviour §8): create, read, update, delete and list
// permissions, each guarded by the rule that only an administrator of a permission's target may
// manage it. Permissions live in the store; the policy itself is pure (auth/).

import { actionIncludes, administers, checkPermissionRules } from '../auth/index.js';
import {
  AccessDeniedError, AlreadyExistsError, BadRequestDataError, ResourceNotFoundError, entityFactsOf, type Action, type Entity, type EntityFacts,
  type Permission, type PermissionTarget, type Principal, type ScopeExpr, evaluateScopeQ,
} from '../ngsi/index.js';
import type { Clock, IdGenerator } from '../lib/index.js';
import { readScopeOf, type Store } from '../store/index.js';

/** What a client gives to create a permission (expanded types). */
export interface PermissionInput {
  id?: string;
  target: PermissionTarget;
  assignee: string;
  action: Action;
}

/** What a PATCH changes: each member present replaces the stored one (`target` whole). */
export type PermissionPatch = Partial<Omit<PermissionInput, 'id'>>;

export interface PermissionQuery {
  targetIds?: string[];
  /** Expanded type IRIs, any of. */
  targetTypes?: string[];
  targetScopeQ?: ScopeExpr;
  assignee?: string;
  assigner?: string;
  /** Least action; default admin (interface 4.7). */
  action: Action;
  limit: number;
  offset: number;
  count: boolean;
}

export type CreateOutcome = { created: Permission } | { existing: Permission };

export interface PermissionService {
  /** Whether the permission model is on (authentication enabled). */
  readonly enabled: boolean;
  create(actor: Principal, input: PermissionInput): CreateOutcome;
  get(actor: Principal, id: string): Permission;
  update(actor: Principal, id: string, patch: PermissionPatch): CreateOutcome;
  delete(actor: Principal, id: string): void;
  /** Permissions the caller can administer, or (`assigned`) those assigned to it. */
  list(actor: Principal, query: PermissionQuery, assigned: boolean): { items: Permission[]; count?: number };
  /** The target entity of a permission, when it names one the caller may see (details=true). */
  targetEntity(actor: Principal, p: Permission): Entity | undefined;
}

export interface PermissionServiceDeps {
  store: Pick<Store, 'permissions' | 'entities' | 'transaction'>;
  clock: Clock;
  newId: IdGenerator;
  enabled: boolean;
  /** application.authentication.allow-public-permission */
  allowPublic: boolean;
}

function notFound(id: string): ResourceNotFoundError {
  return new ResourceNotFoundError('Permission not found', id);
}

type PermissionStore = PermissionServiceDeps['store'];

const entityFacts = (store: PermissionStore, tenant: string) => (id: string): EntityFacts | undefined => {
  const e = store.entities.get({ tenant }, id);
  return e && entityFactsOf(id, e);
};

/** The permissions the caller holds that could make it an administrator of some target. */
const heldAdmin = (store: PermissionStore, actor: Principal): Permission[] =>
  store.permissions.list(actor.tenant, { assignees: actor.assignees, minAction: 'admin' });

const mayAdminister = (store: PermissionStore, actor: Principal, target: PermissionTarget, held?: Permission[]): boolean =>
  actor.admin || administers(actor, target, held ?? heldAdmin(store, actor), entityFacts(store, actor.tenant));

/** Interface 5 rule 5: managing a permission needs admin on its target. */
function requireAdmin(store: PermissionStore, actor: Principal, target: PermissionTarget): void {
  if (!mayAdminister(store, actor, target)) throw new AccessDeniedError('Access denied', 'Managing this permission needs the admin right on its target');
}

function checkTarget(store: PermissionStore, tenant: string, target: PermissionTarget): void {
  if (target.id !== undefined && store.entities.get({ tenant }, target.id) === undefined) {
    throw new BadRequestDataError('Invalid permission target', `target.id: no entity ${target.id}`);
  }
}

function existing(store: PermissionStore, tenant: string, id: string): Permission {
  const p = store.permissions.get(tenant, id);
  if (!p) throw notFound(id);
  return p;
}

/** Whether a permission matches the action, targetType and targetScopeQ of a listing. */
function matches(store: PermissionStore, tenant: string, p: Permission, q: PermissionQuery): boolean {
  if (!actionIncludes(p.action, q.action)) return false;
  if (q.targetTypes !== undefined) {
    const types = p.target.id === undefined ? p.target.types : entityFacts(store, tenant)(p.target.id)?.types;
    if (types === undefined || !types.some((t) => q.targetTypes?.includes(t))) return false;
  }
  if (q.targetScopeQ !== undefined) {
    const scopes = p.target.id === undefined ? p.target.scopes : entityFacts(store, tenant)(p.target.id)?.scopes;
    if (scopes === undefined || !evaluateScopeQ(q.targetScopeQ, [...scopes])) return false;
  }
  return true;
}

function createPermission(deps: PermissionServiceDeps, actor: Principal, input: PermissionInput): CreateOutcome {
  const { store, clock, newId } = deps;
  checkPermissionRules(input, deps.allowPublic);
  return store.transaction(() => {
    const { tenant } = actor;
    checkTarget(store, tenant, input.target);
    requireAdmin(store, actor, input.target);
    // Interface 5 rule 6: the same assignee, action and target again is redundant (303).
    const same = store.permissions.findSame(tenant, input);
    if (same) return { existing: same };
    const now = clock.now();
    const p: Permission = {
      id: input.id ?? `urn:ngsi-ld:Permission:${newId()}`, target: input.target, assignee: input.assignee, action: input.action,
      createdAt: now, modifiedAt: now, ...(actor.subject === undefined ? {} : { assigner: actor.subject }),
    };
    if (store.permissions.get(tenant, p.id)) throw new AlreadyExistsError('Already exists', `Permission ${p.id} already exists`);
    store.permissions.insert(tenant, p);
    return { created: p };
  });
}

function updatePermission(deps: PermissionServiceDeps, actor: Principal, id: string, patch: PermissionPatch): CreateOutcome {
  const { store, clock } = deps;
  return store.transaction(() => {
    const { tenant } = actor;
    const old = existing(store, tenant, id);
    if (old.action === 'own') throw new BadRequestDataError('Forbidden permission', 'A permission with action own cannot be modified');
    requireAdmin(store, actor, old.target);
    const next = { target: patch.target ?? old.target, assignee: patch.assignee ?? old.assignee, action: patch.action ?? old.action };
    checkPermissionRules(next, deps.allowPublic);
    if (patch.target !== undefined) {
      checkTarget(store, tenant, next.target);
      requireAdmin(store, actor, next.target);
    }
    const same = store.permissions.findSame(tenant, next);
    if (same && same.id !== id) return { existing: same };
    // Interface 4.7: the caller becomes the assigner.
    const { assigner: _previous, ...rest } = old;
    const updated: Permission = {
      ...rest, ...next, modifiedAt: clock.now(), ...(actor.subject === undefined ? {} : { assigner: actor.subject }),
    };
    store.permissions.replace(tenant, updated);
    return { created: updated };
  });
}

function listPermissions(store: PermissionStore, actor: Principal, q: PermissionQuery, assigned: boolean): { items: Permission[]; count?: number } {
  const { tenant } = actor;
  const base = store.permissions.list(tenant, {
    ...(q.targetIds ? { targetIds: q.targetIds } : {}),
    ...(q.assignee !== undefined ? { assignees: [q.assignee] } : {}),
    ...(q.assigner !== undefined ? { assigner: q.assigner } : {}),
    minAction: q.action,
  });
  const held = assigned || actor.admin ? [] : heldAdmin(store, actor);
  const visible = base.filter((p) => (assigned ? actor.assignees.includes(p.assignee) : mayAdminister(store, actor, p.target, held))
    && matches(store, tenant, p, q));
  const items = visible.slice(q.offset, q.offset + q.limit);
  return q.count ? { items, count: visible.length } : { items };
}

export function createPermissionService(deps: PermissionServiceDeps): PermissionService {
  const { store, enabled } = deps;
  return {
    enabled,
    create: (actor, input) => createPermission(deps, actor, input),

    get(actor, id) {
      const p = existing(store, actor.tenant, id);
      // Interface 4.7: visible to its assignee and to administrators of its target.
      if (actor.assignees.includes(p.assignee) || mayAdminister(store, actor, p.target)) return p;
      throw new AccessDeniedError('Access denied', `Permission ${id} is neither assigned to the caller nor on a target it administers`);
    },

    update: (actor, id, patch) => updatePermission(deps, actor, id, patch),

    delete(actor, id) {
      store.transaction(() => {
        const p = existing(store, actor.tenant, id);
        if (p.action === 'own') throw new BadRequestDataError('Forbidden permission', 'A permission with action own cannot be deleted');
        requireAdmin(store, actor, p.target);
        store.permissions.delete(actor.tenant, id);
      });
    },

    list: (actor, q, assigned) => listPermissions(store, actor, q, assigned),

    targetEntity(actor, p) {
      if (p.target.id === undefined) return undefined;
      return store.entities.getMany(readScopeOf(actor), [p.target.id]).get(p.target.id);
    },
  };
}
