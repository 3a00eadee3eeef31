// Create Subscription and Update Subscription inputs to the model (NGSI-LD §5.8.1, §5.8.2): every
// member parsed and expanded, then the rules that tie members together checked on the result.

import { isAbsoluteUri, type Json, type TermMapper } from '../ngsi/index.js';
import type { SubscriptionInput } from './input.js';
import type { Subscription } from './model.js';
import {
  invalidMember, parseDatasetIds, parseEntities, parseExpiresAt, parseGeoQMember, parseLang, parseNames, parseNotification,
  parseQMember, parseScopeQMember, parseSeconds, parseTriggers, parseUri,
} from './parse-members.js';
import { checkCsourceSubscription, checkEntitySubscription, parseTemporalQ } from './parse-csource.js';

export interface ParseSubscriptionOptions {
  /** Expands the names of the request (its Link header or body @context). */
  mapper: TermMapper;
  /** The request's @context as given; absent when the request used the core context only. */
  context?: Json | undefined;
  now: number;
  /** Draws a uuid for a subscription created without id. */
  newId: () => string;
  /** A context source registration subscription (NGSI-LD §5.11.2). */
  csource?: boolean | undefined;
}

/** Members an update may replace: all writable ones but id and type. */
type Writable = Omit<Subscription, 'id' | 'createdAt' | 'modifiedAt' | 'delivery' | 'context' | 'csource'>;

/** The members present in the input, parsed; absent members stay absent. */
function parseGiven(input: SubscriptionInput, mapper: TermMapper, now: number): Partial<Writable> {
  const out: Partial<Writable> = {};
  if (input.subscriptionName !== undefined) out.subscriptionName = input.subscriptionName;
  if (input.description !== undefined) out.description = input.description;
  if (input.entities !== undefined) out.entities = parseEntities(input.entities, mapper);
  if (input.watchedAttributes !== undefined) out.watchedAttributes = parseNames('watchedAttributes', input.watchedAttributes, mapper);
  if (input.notificationTrigger !== undefined) out.notificationTrigger = parseTriggers(input.notificationTrigger);
  if (input.timeInterval !== undefined) out.timeInterval = parseSeconds('timeInterval', input.timeInterval);
  if (input.q !== undefined) out.q = { text: input.q, expr: parseQMember(input.q, mapper) };
  if (input.geoQ !== undefined) out.geoQ = parseGeoQMember(input.geoQ, mapper);
  if (input.scopeQ !== undefined) out.scopeQ = { text: input.scopeQ, expr: parseScopeQMember(input.scopeQ) };
  if (input.csf !== undefined) out.csf = { text: input.csf, expr: parseQMember(input.csf, mapper, 'csf') };
  if (input.temporalQ !== undefined) out.temporalQ = parseTemporalQ(input.temporalQ);
  if (input.isActive !== undefined) out.isActive = input.isActive;
  if (input.expiresAt !== undefined) {
    out.expiresAt = parseExpiresAt(input.expiresAt, now);
    out.expiresAtText = input.expiresAt;
  }
  if (input.throttling !== undefined) out.throttling = parseSeconds('throttling', input.throttling);
  if (input.lang !== undefined) out.lang = parseLang(input.lang);
  if (input.datasetId !== undefined) out.datasetId = parseDatasetIds(input.datasetId);
  if (input.jsonldContext !== undefined) out.jsonldContext = parseUri('jsonldContext', input.jsonldContext);
  if (input.notification !== undefined) out.notification = parseNotification(input.notification, mapper);
  return out;
}

/**
 * The rules between members (NGSI-LD §5.2.12): entities or watchedAttributes (a periodic subscription
 * may have neither); timeInterval excludes watchedAttributes and throttling.
 */
export function checkSubscription(sub: Subscription): void {
  if (sub.csource === true) checkCsourceSubscription(sub);
  else checkEntitySubscription(sub);
  if (sub.timeInterval !== undefined) {
    if (sub.watchedAttributes !== undefined) throw invalidMember('timeInterval', 'timeInterval and watchedAttributes cannot both be given');
    if (sub.throttling !== undefined) throw invalidMember('timeInterval', 'timeInterval and throttling cannot both be given');
  } else if (sub.entities === undefined && sub.watchedAttributes === undefined) {
    throw invalidMember('entities', 'one of entities or watchedAttributes is required');
  }
}

/** NGSI-LD §5.8.1 Create Subscription: the whole subscription, defaults applied. */
export function parseSubscription(input: SubscriptionInput, opts: ParseSubscriptionOptions): Subscription {
  if (input.type !== 'Subscription') {
    throw invalidMember('type', input.type === undefined ? 'type is required and must be Subscription' : `'${input.type}' is not Subscription`);
  }
  let id = input.id;
  if (id === undefined) id = `urn:ngsi-ld:Subscription:${opts.newId()}`;
  else if (!isAbsoluteUri(id)) throw invalidMember('id', `'${id}' is not an absolute URI`);
  const given = parseGiven(input, opts.mapper, opts.now);
  if (given.notification === undefined) throw invalidMember('notification', 'a subscription needs notification parameters');
  const sub: Subscription = {
    ...given, id, isActive: given.isActive ?? true, notification: given.notification,
    createdAt: opts.now, modifiedAt: opts.now, delivery: { timesSent: 0 },
  };
  if (opts.context !== undefined) sub.context = opts.context;
  if (opts.csource === true) sub.csource = true;
  checkSubscription(sub);
  return sub;
}

/**
 * NGSI-LD §5.8.2 Update Subscription: each member given replaces the stored one whole (notification
 * included); the delivery counters, the creation context and id stay.
 */
export function patchSubscription(current: Subscription, input: SubscriptionInput, opts: Omit<ParseSubscriptionOptions, 'newId' | 'context' | 'csource'>): Subscription {
  if (input.type !== undefined && input.type !== 'Subscription') throw invalidMember('type', `'${input.type}' is not Subscription`);
  if (input.id !== undefined && input.id !== current.id) throw invalidMember('id', `the id ${input.id} differs from ${current.id}`);
  const given = parseGiven(input, opts.mapper, opts.now);
  const next: Subscription = { ...current, ...given, modifiedAt: opts.now };
  checkSubscription(next);
  return next;
}
