// Builders for the subscriptions unit tests: subscriptions and entities parsed from compact JSON with
// the fake term mapper, and ChangeEvents of each kind.

import type { ChangeEvent, ChangeKind } from '../../src/events.js';
import { parseEntity, type Entity, type Iri } from '../../src/ngsi/index.js';
import { parseSubscription, type Subscription, type SubscriptionInput } from '../../src/subscriptions/index.js';
import { mapper, T0 } from '../ngsi/fake-mapper.js';

export { mapper, T0 };
export { EX, dc } from '../ngsi/fake-mapper.js';

export const ENDPOINT = { uri: 'http://127.0.0.1:9/notify' };

export function subscription(members: Omit<SubscriptionInput, 'type' | 'notification'> & { notification?: SubscriptionInput['notification'] }, now = T0): Subscription {
  return parseSubscription(
    { type: 'Subscription', id: 'urn:ngsi-ld:Subscription:t', notification: { endpoint: ENDPOINT }, ...members },
    { mapper, now, newId: () => 'x' },
  );
}

export function entity(body: Record<string, unknown>, now = T0): Entity {
  return parseEntity({ id: 'urn:ngsi-ld:Building:b1', type: 'Building', ...body }, mapper, { now });
}

let seq = 0;

/** A change; `previous` keeps only the attributes written or deleted, as the write core journals it. */
export function change(kind: ChangeKind, opts: { before?: Entity; after?: Entity; written?: Iri[]; deleted?: Iri[]; at?: number }): ChangeEvent {
  const written = opts.written ?? [];
  const deleted = opts.deleted ?? [];
  const touched = new Set([...written, ...deleted]);
  const before = opts.before;
  const previous = before === undefined ? undefined
    : kind === 'entityDeleted' ? before
      : { ...before, attrs: Object.fromEntries(Object.entries(before.attrs).filter(([a]) => touched.has(a))) };
  const subject = opts.after ?? before;
  seq += 1;
  return {
    seq, tenant: '', kind, id: subject?.id ?? 'urn:ngsi-ld:Building:b1', at: opts.at ?? T0, written, deleted, instances: [],
    ...(previous ? { previous } : {}), ...(opts.after ? { entity: opts.after } : {}),
  };
}
