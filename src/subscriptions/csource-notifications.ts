// Notifications of context source registration subscriptions (NGSI-LD §5.11.7, §5.3.2
// CSourceNotification): each registration change (journaled by the registrations module) against
// the registration subscriptions of its tenant, with its triggerReason; and a notification of every
// registration that matches a subscription now (on its creation or update, and at each timeInterval).

import type { ChangeEvent } from '../events.js';
import type { Logger } from '../lib/index.js';
import { formatDateTime, type Json, type JsonObject, type TermMapper } from '../ngsi/index.js';
import type { Store } from '../store/index.js';
import type { QueuedMessage } from './delivery.js';
import { failureReason } from './failure-reason.js';
import { statusOf, type OwnerRights, type Subscription } from './model.js';
import { headersOf, type NotificationContext } from './notification.js';
import type { QueueItem } from './notification-items.js';
import type { SubscriptionRegistry } from './registry.js';

/**
 * What the notifier knows of registrations, injected by the composition root (the registrations
 * module owns their model). A registration is handed over as journaled: its stored form, as JSON.
 */
export interface RegistrationLens {
  /**
   * The registration as a notification of `sub` shows it (compacted with `mapper`), with only its
   * RegistrationInfo elements that match; undefined when it does not match `sub`.
   */
  show(state: Json, sub: Subscription, mapper: TermMapper): JsonObject | undefined;
  /** The subject that owns it; undefined when it was created without authentication. */
  ownerOf(state: Json): string | undefined;
}

/** NGSI-LD §5.3.2 triggerReason. */
export type TriggerReason = 'newlyMatching' | 'updated' | 'noLongerMatching';

export interface CsourceNotificationDeps {
  /** The registration subscriptions (a registry of their own: no entity change ever finds them). */
  registry: SubscriptionRegistry;
  lens: RegistrationLens;
  store: Pick<Store, 'registrations'>;
  contextOf(sub: Subscription): Promise<NotificationContext>;
  newId: () => string;
  log: Logger;
  /** With authentication on: the rights of a subscription's owner now; undefined: suspended. Absent: authentication off. */
  rightsOf?: ((sub: Subscription) => OwnerRights | undefined) | undefined;
}

export interface CsourceNotifications {
  /** The notifications of one registration change (none when no subscription is concerned). */
  ofChange(change: ChangeEvent, now: number): Promise<QueueItem[]>;
  /** The notification of every live registration matching `sub` now, as newlyMatching; undefined when none matches. */
  ofMatching(tenant: string, sub: Subscription, now: number): Promise<QueueItem | undefined>;
  /** Registration subscriptions with a timeInterval. */
  periodic(): Array<{ tenant: string; sub: Subscription }>;
  size(): number;
}

/** Most registrations one notification of what matches now lists. */
const MAX_LISTED = 1_000;

/**
 * Behaviour §8, as for registrations: a subscription's owner sees only its own registrations (an
 * administrator all), with the rights it has now; a suspended subscription sees none.
 */
function mayShow(deps: CsourceNotificationDeps, sub: Subscription, state: Json): boolean {
  if (deps.rightsOf === undefined) return true;
  const rights = deps.rightsOf(sub);
  if (rights === undefined) return false;
  return rights.admin || (sub.owner !== undefined && deps.lens.ownerOf(state) === sub.owner.subject);
}

export function createCsourceNotifications(deps: CsourceNotificationDeps): CsourceNotifications {
  const { registry, lens, log } = deps;
  /** When each subscription last had a notification queued (throttling). */
  const lastQueued = new Map<string, number>();

  const itemOf = async (tenant: string, sub: Subscription, data: JsonObject[], reason: TriggerReason, now: number): Promise<QueueItem | undefined> => {
    let context: NotificationContext;
    try {
      context = await deps.contextOf(sub);
    } catch (err) {
      log.warn('registration notification not built', { subscriptionId: sub.id, tenant, cause: failureReason(err) });
      return undefined;
    }
    const shown = data.map((d) => (sub.notification.endpoint.accept === 'application/ld+json' ? { ...d, '@context': context.bodyContext } : d));
    // NGSI-LD §5.3.2 CSourceNotification.
    const body: JsonObject = {
      id: `urn:ngsi-ld:Notification:${deps.newId()}`, type: 'ContextSourceNotification', subscriptionId: sub.id,
      notifiedAt: formatDateTime(now), data: shown, triggerReason: reason, '@context': context.bodyContext,
    };
    const { endpoint } = sub.notification;
    const message: QueuedMessage = { uri: endpoint.uri, headers: headersOf(sub, context, tenant) };
    if (endpoint.timeout !== undefined) message.timeout = endpoint.timeout;
    if (endpoint.notifierInfo !== undefined) message.notifierInfo = endpoint.notifierInfo;
    const json = JSON.stringify(message);
    return { row: { tenant, subscriptionId: sub.id, queuedAt: now, message: json, body: JSON.stringify(body) }, message };
  };

  /** What one subscription is told of one change: its reason and the registration shown, or nothing. */
  const verdict = async (change: ChangeEvent, sub: Subscription): Promise<{ reason: TriggerReason; shown: JsonObject } | undefined> => {
    const { before, after } = change.registration ?? {};
    const mapper = await deps.contextOf(sub);
    const was = before !== undefined && mayShow(deps, sub, before) ? lens.show(before, sub, mapper) : undefined;
    const is = after !== undefined && mayShow(deps, sub, after) ? lens.show(after, sub, mapper) : undefined;
    // NGSI-LD §5.11.7: newly matching, still matching (updated), or matching no more (deleted or expired included).
    if (is !== undefined) return { reason: was === undefined ? 'newlyMatching' : 'updated', shown: is };
    return was === undefined ? undefined : { reason: 'noLongerMatching', shown: was };
  };

  return {
    async ofChange(change, now) {
      const items: QueueItem[] = [];
      for (const { tenant, sub } of registry.all()) {
        // A periodic subscription is notified by the job, whatever changed (§5.11.7).
        if (tenant !== change.tenant || sub.timeInterval !== undefined || statusOf(sub, change.at) !== 'active') continue;
        const last = lastQueued.get(`${tenant}\n${sub.id}`);
        if (sub.throttling !== undefined && last !== undefined && change.at - last < sub.throttling * 1000) continue;
        let found;
        try {
          found = await verdict(change, sub);
        } catch (err) {
          log.warn('registration notification not built', { subscriptionId: sub.id, tenant, cause: failureReason(err) });
          continue;
        }
        if (found === undefined) continue;
        lastQueued.set(`${tenant}\n${sub.id}`, change.at);
        const item = await itemOf(tenant, sub, [found.shown], found.reason, now);
        if (item !== undefined) items.push(item);
      }
      return items;
    },
    async ofMatching(tenant, sub, now) {
      if (statusOf(sub, now) !== 'active') return undefined;
      const mapper = await deps.contextOf(sub);
      const data: JsonObject[] = [];
      for (const stored of deps.store.registrations.candidates(tenant, { now, limit: MAX_LISTED })) {
        // NOTE: a stored registration is JSON (its document and columns).
        const state = stored as unknown as Json;
        const shown = mayShow(deps, sub, state) ? lens.show(state, sub, mapper) : undefined;
        if (shown !== undefined) data.push(shown);
      }
      if (data.length === 0) return undefined;
      lastQueued.set(`${tenant}\n${sub.id}`, now);
      return itemOf(tenant, sub, data, 'newlyMatching', now);
    },
    periodic: () => registry.periodic(),
    size: () => registry.size(),
  };
}
