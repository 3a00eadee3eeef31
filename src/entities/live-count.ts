// The number of live entities, kept without a scan per read: counted once, then followed through
// the change events (every write that makes an entity live or not goes through the write core).

import type { ChangeEmitter } from '../events.js';
import type { Store } from '../store/index.js';

/**
 * Counts the live entities now and returns a reader of the count. Call it before any write can run
 * (while the broker is built), so that no change is missed or counted twice.
 */
export function trackLiveEntities(store: Pick<Store, 'countLiveEntities'>, events: ChangeEmitter): () => number {
  let live = store.countLiveEntities();
  events.on((change) => {
    if (change.kind === 'entityCreated') live += 1;
    else if (change.kind === 'entityDeleted') live -= 1;
  });
  return () => live;
}
