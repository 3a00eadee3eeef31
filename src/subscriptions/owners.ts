// With authentication on, a subscription's notifications follow the rights its owner has at
// delivery, not those it had when it created the subscription (behaviour §8). A subscription is
// suspended (neither matched nor sent, shown `paused` with its reason) while it has no owner: made
// while authentication was off, or its owner was deleted; an administrator adopts it by updating it.

import type { Principal } from '../ngsi/index.js';
import type { OwnerRights, Subscription, SubscriptionOwner } from './model.js';
import type { SubscriptionRegistry } from './registry.js';

/** Why a subscription made while authentication was off is not notified. */
const OWNERLESS_REASON =
  'suspended: no owner (created while authentication was off); an administrator adopts it by updating it (PATCH)';
/** Why a subscription whose owner was deleted is not notified. */
const OWNER_GONE_REASON = 'suspended: its owner was deleted; an administrator adopts it by updating it (PATCH)';

export interface SubscriptionOwnersDeps {
  /** The rights of a subject now; `fallback`: those it had at creation, when nothing newer is known; undefined: deleted. */
  rightsOf(subject: string, fallback: OwnerRights): OwnerRights | undefined;
  /** Why an owner may not name this notification endpoint (the check made at creation); undefined: it may. */
  checkEndpoint?: ((owner: Principal, uri: string) => string | undefined) | undefined;
  registry: Pick<SubscriptionRegistry, 'get'>;
}

export interface SubscriptionOwners {
  /** The rights of its owner now; undefined: suspended. One map lookup once its owner is known. */
  rightsOf(sub: Subscription): OwnerRights | undefined;
  /** Why it is suspended; undefined: it is not. */
  suspension(sub: Subscription): string | undefined;
  /**
   * Why a notification of the subscription may not be sent now: suspended, or its MQTT endpoint on
   * the embedded broker is no longer one its owner may name (stored before that rule, or the owner
   * lost the admin role). Undefined: it may be sent.
   */
  refusal(tenant: string, subscriptionId: string, uri: string): string | undefined;
}

const rightsOfOwner = (deps: SubscriptionOwnersDeps, owner: SubscriptionOwner | undefined): OwnerRights | undefined =>
  owner === undefined ? undefined : deps.rightsOf(owner.subject, owner);

export function createSubscriptionOwners(deps: SubscriptionOwnersDeps): SubscriptionOwners {
  const suspension = (sub: Subscription): string | undefined => {
    if (sub.owner === undefined) return OWNERLESS_REASON;
    return rightsOfOwner(deps, sub.owner) === undefined ? OWNER_GONE_REASON : undefined;
  };
  return {
    rightsOf: (sub) => rightsOfOwner(deps, sub.owner),
    suspension,
    refusal(tenant, subscriptionId, uri) {
      const sub = deps.registry.get(tenant, subscriptionId);
      // Deleted meanwhile: delivery drops what it had pending.
      if (sub === undefined) return undefined;
      const rights = rightsOfOwner(deps, sub.owner);
      if (rights === undefined || sub.owner === undefined) return suspension(sub);
      if (deps.checkEndpoint === undefined || !/^mqtts?:/i.test(uri)) return undefined;
      const owner: Principal = { tenant, subject: sub.owner.subject, admin: rights.admin, assignees: [...rights.assignees], groups: [] };
      const why = deps.checkEndpoint(owner, uri);
      return why === undefined ? undefined : `not published: ${why}`;
    },
  };
}
