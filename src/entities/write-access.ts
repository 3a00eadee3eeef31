// Permissions on the write path (behaviour §8), inside the write's transaction: the right each
// operation needs on the entity it touches, and the permissions a write creates (the owner of a new
// entity id, specificAccessPolicy) or removes (an entity gone for good).
// NOTE: writing into a scope grants nothing on the scope (docs/auth.md, Scopes): its first writer
// would otherwise own every entity others later put in it. Permissions by scope come from administrators.

import { actionIncludes, allows } from '../auth/index.js';
import {
  AUTHENTICATED_SUBJECT, AccessDeniedError, SPECIFIC_ACCESS_POLICY, entityFactsOf, isAction, type Action, type Entity, type EntityId,
  type Permission, type Principal,
} from '../ngsi/index.js';
import type { IdGenerator } from '../lib/index.js';
import type { Store } from '../store/index.js';

export interface WriteAccess {
  /** Throws AccessDenied (403) unless the actor may `action` on the entity (`entity`: its latest state). */
  require(actor: Principal, id: EntityId, entity: Entity | undefined, action: Action): void;
  /** Records what creating `entity` grants: its owner and its specificAccessPolicy. */
  created(actor: Principal, entity: Entity, now: number): void;
  /** The entity is gone for good: its permissions go too. */
  removed(tenant: string, id: EntityId): void;
}

export interface WriteAccessDeps {
  store: Pick<Store, 'permissions'>;
  newId: IdGenerator;
}

const permissionId = (newId: IdGenerator): string => `urn:ngsi-ld:Permission:${newId()}`;

/** Write access with the permission model on. */
export function createWriteAccess({ store, newId }: WriteAccessDeps): WriteAccess {
  const { permissions } = store;

  const grant = (tenant: string, p: Omit<Permission, 'id' | 'createdAt' | 'modifiedAt'>, now: number): void => {
    permissions.insert(tenant, { ...p, id: permissionId(newId), createdAt: now, modifiedAt: now });
  };

  /** The permissions on the id a create checked last: `created` right after needs the same. */
  let lastNew: { tenant: string; id: EntityId; permissions: Permission[] } | undefined;
  const targeting = (tenant: string, id: EntityId): Permission[] => {
    if (lastNew !== undefined && lastNew.tenant === tenant && lastNew.id === id) return lastNew.permissions;
    return permissions.targeting(tenant, id);
  };

  return {
    require(actor, id, entity, action) {
      if (entity === undefined) {
        // A new id: any authenticated subject may create it, unless it had a life before whose
        // permissions still stand (its history is kept): then only who may write it.
        const before = permissions.targeting(actor.tenant, id);
        lastNew = { tenant: actor.tenant, id, permissions: before };
        if (actor.admin) return;
        if (before.length === 0 && actor.subject !== undefined) return;
        if (before.some((p) => actionIncludes(p.action, 'write') && actor.assignees.includes(p.assignee))) return;
        throw new AccessDeniedError('Access denied', `Not allowed to create entity ${id}`);
      }
      lastNew = undefined;
      if (actor.admin) return;
      if (!allows(actor, action, entityFactsOf(id, entity), permissions.applicableTo(actor.tenant, actor.assignees, id))) {
        throw new AccessDeniedError('Access denied', `No ${action} permission on entity ${id}`);
      }
    },

    created(actor, entity, now) {
      const { tenant, subject } = actor;
      // Interface 2.6 rule 4: the creator of an entity id becomes its owner (once: a re-created id keeps its owner).
      const known = targeting(tenant, entity.id);
      lastNew = undefined;
      if (subject !== undefined && !known.some((p) => p.action === 'own')) permissions.own(tenant, entity.id, subject, now);
      // Interface 2.6 rule 5: specificAccessPolicy read/write opens the entity to every authenticated subject.
      const policy = entity.attrs[SPECIFIC_ACCESS_POLICY]?.[0];
      const action = policy?.kind === 'Property' ? policy.value : undefined;
      if (isAction(action) && (action === 'read' || action === 'write')) {
        const p = { target: { id: entity.id }, assignee: AUTHENTICATED_SUBJECT, action };
        if (!permissions.findSame(tenant, p)) grant(tenant, subject === undefined ? p : { ...p, assigner: subject }, now);
      }
    },

    removed(tenant, id) {
      permissions.removeForEntity(tenant, id);
    },
  };
}
