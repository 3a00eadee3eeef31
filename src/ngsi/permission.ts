// Permissions of the NGSI-LD authorization model (interface 2.6): who (assignee) may do what
// (action) on which entities (target). Types here are the domain's; the policy is in auth/.

import type { Entity, EntityId, Iri } from './model.js';

/** Actions, each including those before it (interface 2.6 rule 3): own is admin, created by the service. */
export const ACTIONS = ['read', 'write', 'admin', 'own'] as const;
export type Action = (typeof ACTIONS)[number];

/** The scope value that targets entities without any scope (interface 2.6). */
export const NO_SCOPE = '@none';

/** An entity id, or types AND scopes (either absent: every type / every scope). */
export type PermissionTarget =
  | { readonly id: EntityId; readonly types?: undefined; readonly scopes?: undefined }
  | { readonly id?: undefined; readonly types?: readonly Iri[]; readonly scopes?: readonly string[] };

export interface Permission {
  readonly id: string;
  readonly target: PermissionTarget;
  readonly assignee: string;
  /** The subject that created or last changed it; absent for the service's own (owner) permissions. */
  readonly assigner?: string;
  readonly action: Action;
  readonly createdAt: number;
  readonly modifiedAt: number;
}

/** What the policy needs to know of an entity. */
export interface EntityFacts {
  readonly id: EntityId;
  readonly types: readonly Iri[];
  readonly scopes: readonly string[];
}

/** The facts of an entity as the policy sees them (`entity`: its latest state; none for a new id). */
export function entityFactsOf(id: EntityId, entity: Pick<Entity, 'types' | 'scope'> | undefined): EntityFacts {
  return { id, types: entity?.types ?? [], scopes: entity?.scope ?? [] };
}

/** The rank of an action: a permission of action `held` allows `needed` when rank(held) >= rank(needed). */
export function actionRank(action: Action): number {
  return ACTIONS.indexOf(action);
}

export function isAction(value: unknown): value is Action {
  return typeof value === 'string' && (ACTIONS as readonly string[]).includes(value);
}
