// The permission policy of the NGSI-LD authorization model, pure: which permissions cover an
// entity, what a principal may do on it, and which permissions may exist at all. Each rule cites
// the clause of the service interface (2.6, 5) or behaviour §8 it implements.

import {
  AUTHENTICATED_SUBJECT, AccessDeniedError, BadRequestDataError, type EntityId, NO_SCOPE, PUBLIC_SUBJECT, actionRank, type Action, type EntityFacts, type Permission,
  type PermissionTarget, type Principal,
} from '../ngsi/index.js';

/** Interface 2.6 rule 3: write implies read, admin includes write, own is admin. */
export function actionIncludes(held: Action, needed: Action): boolean {
  return actionRank(held) >= actionRank(needed);
}

/**
 * Interface 2.6 `target`: an id targets that entity; otherwise the entity must have one of the
 * types (absent: every type) AND one of the scopes (absent: every scope; `@none`: entities without
 * a scope) — rule 1.
 */
function targetCovers(target: PermissionTarget, entity: EntityFacts): boolean {
  if (target.id !== undefined) return target.id === entity.id;
  if (target.types !== undefined && !target.types.some((t) => entity.types.includes(t))) return false;
  if (target.scopes === undefined) return true;
  return target.scopes.some((s) => (s === NO_SCOPE ? entity.scopes.length === 0 : entity.scopes.includes(s)));
}

/**
 * Whether `principal` may do `action` on `entity` given the permissions assigned to it.
 * Behaviour §8: the admin role (or authentication off) allows everything; otherwise one permission
 * of an including action must cover the entity on its own (2.6 rule 2: never combined).
 */
export function allows(principal: Principal, action: Action, entity: EntityFacts, permissions: Iterable<Permission>): boolean {
  if (principal.admin) return true;
  for (const p of permissions) {
    if (actionIncludes(p.action, action) && principal.assignees.includes(p.assignee) && targetCovers(p.target, entity)) return true;
  }
  return false;
}

/**
 * Whether the permissions held by `principal` let it administer `target` (interface 5 rule 5: managing
 * a permission needs admin on its target). One held permission must cover the whole target
 * (2.6 rule 2): an id target is covered by a permission on that id or by one whose types and scopes
 * include the entity's (`entityOf` gives them); a types/scopes target by a permission whose types
 * are a superset (or absent) and whose scopes are a superset (or absent).
 */
export function administers(
  principal: Principal, target: PermissionTarget, held: Iterable<Permission>, entityOf: (id: string) => EntityFacts | undefined,
): boolean {
  if (principal.admin) return true;
  const entity = target.id === undefined ? undefined : entityOf(target.id);
  for (const p of held) {
    if (!actionIncludes(p.action, 'admin') || !principal.assignees.includes(p.assignee)) continue;
    if (target.id !== undefined) {
      if (p.target.id === target.id || (p.target.id === undefined && entity !== undefined && targetCovers(p.target, entity))) return true;
      continue;
    }
    if (p.target.id !== undefined) continue;
    const typesOk = p.target.types === undefined || (target.types !== undefined && target.types.every((t) => p.target.types?.includes(t)));
    const scopesOk = p.target.scopes === undefined || (target.scopes !== undefined && target.scopes.every((s) => p.target.scopes?.includes(s)));
    if (typesOk && scopesOk) return true;
  }
  return false;
}

/** The assignees of a request (behaviour §8): `sub`, the claim values and "authenticated"; public when anonymous. */
export function assigneesOf(subject: string | undefined, claims: readonly string[]): string[] {
  if (subject === undefined) return [PUBLIC_SUBJECT];
  return [...new Set([subject, ...claims, AUTHENTICATED_SUBJECT, PUBLIC_SUBJECT])];
}

/**
 * Interface 5 rule 6 and 2.6: the permissions nobody may create or change into. Throws
 * BadRequestData naming the rule.
 */
export function checkPermissionRules(p: Pick<Permission, 'action' | 'assignee' | 'target'>, allowPublic: boolean): void {
  if (p.action === 'own') throw new BadRequestDataError('Forbidden permission', 'A permission with action own is created by the service only');
  if (p.assignee === AUTHENTICATED_SUBJECT && p.action === 'admin') {
    throw new BadRequestDataError('Forbidden permission', `Action admin cannot be given to ${AUTHENTICATED_SUBJECT}`);
  }
  if (p.assignee === PUBLIC_SUBJECT) {
    if (!allowPublic) throw new BadRequestDataError('Forbidden permission', 'Public permissions are off (application.authentication.allow-public-permission)');
    if (p.action !== 'read') throw new BadRequestDataError('Forbidden permission', `Only action read can be given to ${PUBLIC_SUBJECT}`);
  }
  const t = p.target;
  if (t.id !== undefined && (t.types !== undefined || t.scopes !== undefined)) {
    throw new BadRequestDataError('Invalid permission target', 'target.id is only allowed without target.types and target.scopes');
  }
}

/** The permissions of some assignees that may apply to one entity (the store's lookup). */
export type HeldPermissions = (tenant: string, assignees: readonly string[], entityId: EntityId) => Permission[];

/** Throws AccessDenied (403) unless `principal` may `action` on the entity. */
export function requireRight(principal: Principal, action: Action, entity: EntityFacts, held: HeldPermissions): void {
  if (principal.admin) return;
  if (!allows(principal, action, entity, held(principal.tenant, principal.assignees, entity.id))) {
    throw new AccessDeniedError('Access denied', `No ${action} permission on entity ${entity.id}`);
  }
}
