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

export function createPermissionService(deps: PermissionServiceDeps): PermissionService {
  const { store, clock, newId, enabled, allowPublic } = deps;
  const { permissions } = store;

  const entityFacts = (tenant: string) => (id: string): EntityFacts | undefined => {
    const e = store.entities.get({ tenant }, id);
    return e && entityFactsOf(id, e);
  };
  /** The permissions the caller holds that could make it an administrator of some target. */
  const heldAdmin = (actor: Principal): Permission[] =>
    permissions.list(actor.tenant, { assignees: actor.assignees, minAction: 'admin' });
  const mayAdminister = (actor: Principal, target: PermissionTarget, held?: Permission[]): boolean =>
    actor.admin || administers(actor, target, held ?? heldAdmin(actor), entityFacts(actor.tenant));

  /** Interface 5 rule 5: managing a permission needs admin on its target. */
  const requireAdmin = (actor: Principal, target: PermissionTarget): void => {
    if (!mayAdminister(actor, target)) throw new AccessDeniedError('Access denied', 'Managing this permission needs the admin right on its target');
  };

  const checkTarget = (tenant: string, target: PermissionTarget): void => {
    if (target.id !== undefined && store.entities.get({ tenant }, target.id) === undefined) {
      throw new BadRequestDataError('Invalid permission target', `target.id: no entity ${target.id}`);
    }
  };

  const existing = (tenant: string, id: string): Permission => {
    const p = permissions.get(tenant, id);
    if (!p) throw notFound(id);
    return p;
  };

  const matches = (tenant: string, p: Permission, q: PermissionQuery): boolean => {
    if (!actionIncludes(p.action, q.action)) return false;
    if (q.targetTypes !== undefined) {
      const types = p.target.id === undefined ? p.target.types : entityFacts(tenant)(p.target.id)?.types;
      if (types === undefined || !types.some((t) => q.targetTypes?.includes(t))) return false;
    }
    if (q.targetScopeQ !== undefined) {
      const scopes = p.target.id === undefined ? p.target.scopes : entityFacts(tenant)(p.target.id)?.scopes;
      if (scopes === undefined || !evaluateScopeQ(q.targetScopeQ, [...scopes])) return false;
    }
    return true;
  };

  return {
    enabled,

    create(actor, input) {
      checkPermissionRules(input, allowPublic);
      return store.transaction(() => {
        const { tenant } = actor;
        checkTarget(tenant, input.target);
        requireAdmin(actor, input.target);
        // Interface 5 rule 6: the same assignee, action and target again is redundant (303).
        const same = permissions.findSame(tenant, input);
        if (same) return { existing: same };
        const now = clock.now();
        const p: Permission = {
          id: input.id ?? `urn:ngsi-ld:Permission:${newId()}`, target: input.target, assignee: input.assignee, action: input.action,
          createdAt: now, modifiedAt: now, ...(actor.subject === undefined ? {} : { assigner: actor.subject }),
        };
        if (permissions.get(tenant, p.id)) throw new AlreadyExistsError('Already exists', `Permission ${p.id} already exists`);
        permissions.insert(tenant, p);
        return { created: p };
      });
    },

    get(actor, id) {
      const p = existing(actor.tenant, id);
      // Interface 4.7: visible to its assignee and to administrators of its target.
      if (actor.assignees.includes(p.assignee) || mayAdminister(actor, p.target)) return p;
      throw new AccessDeniedError('Access denied', `Permission ${id} is neither assigned to the caller nor on a target it administers`);
    },

    update(actor, id, patch) {
      return store.transaction(() => {
        const { tenant } = actor;
        const old = existing(tenant, id);
        if (old.action === 'own') throw new BadRequestDataError('Forbidden permission', 'A permission with action own cannot be modified');
        requireAdmin(actor, old.target);
        const next = { target: patch.target ?? old.target, assignee: patch.assignee ?? old.assignee, action: patch.action ?? old.action };
        checkPermissionRules(next, allowPublic);
        if (patch.target !== undefined) {
          checkTarget(tenant, next.target);
          requireAdmin(actor, next.target);
        }
        const same = permissions.findSame(tenant, next);
        if (same && same.id !== id) return { existing: same };
        // Interface 4.7: the caller becomes the assigner.
        const { assigner: _previous, ...rest } = old;
        const updated: Permission = {
          ...rest, ...next, modifiedAt: clock.now(), ...(actor.subject === undefined ? {} : { assigner: actor.subject }),
        };
        permissions.replace(tenant, updated);
        return { created: updated };
      });
    },

    delete(actor, id) {
      store.transaction(() => {
        const p = existing(actor.tenant, id);
        if (p.action === 'own') throw new BadRequestDataError('Forbidden permission', 'A permission with action own cannot be deleted');
        requireAdmin(actor, p.target);
        permissions.delete(actor.tenant, id);
      });
    },

    list(actor, q, assigned) {
      const { tenant } = actor;
      const base = permissions.list(tenant, {
        ...(q.targetIds ? { targetIds: q.targetIds } : {}),
        ...(q.assignee !== undefined ? { assignees: [q.assignee] } : {}),
        ...(q.assigner !== undefined ? { assigner: q.assigner } : {}),
        minAction: q.action,
      });
      const held = assigned || actor.admin ? [] : heldAdmin(actor);
      const visible = base.filter((p) => (assigned ? actor.assignees.includes(p.assignee) : mayAdminister(actor, p.target, held))
        && matches(tenant, p, q));
      const items = visible.slice(q.offset, q.offset + q.limit);
      return q.count ? { items, count: visible.length } : { items };
    },

    targetEntity(actor, p) {
      if (p.target.id === undefined) return undefined;
      return store.entities.getMany(readScopeOf(actor), [p.target.id]).get(p.target.id);
    },
  };
}

