// The start-up line of a broker with authentication on over a database used without it: how many
// entities have no owner (admin-only until an administrator grants rights on them) and how many
// subscriptions have none (suspended until an administrator adopts them).

import type { Logger } from '../lib/index.js';
import type { Store } from '../store/index.js';
import type { SubscriptionRegistry } from '../subscriptions/index.js';

/** Logs the ownerless entities and subscriptions, when there are any; returns their counts. */
export function reportOwnerless(store: Pick<Store, 'countOwnerlessEntities'>, registry: Pick<SubscriptionRegistry, 'all'>, log: Logger):
  { entities: number; subscriptions: number } {
  const entities = store.countOwnerlessEntities();
  // The registry holds every subscription in memory (loaded at start): no query needed.
  let subscriptions = 0;
  for (const { sub } of registry.all()) if (sub.owner === undefined) subscriptions += 1;
  if (entities + subscriptions > 0) {
    log.warn(`${entities} entities and ${subscriptions} subscriptions have no owner: admin-only / suspended until adopted`, {
      entities, subscriptions, see: 'docs/auth.md#switching-authentication-on',
    });
  }
  return { entities, subscriptions };
}
