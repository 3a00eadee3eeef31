// The Subscription model (NGSI-LD §5.2.12, §5.2.14, §5.2.15) in expanded form: types and attribute
// names are IRIs; q, scopeQ and geoQ are kept parsed (and q/scopeQ as written, to show them back).

import type { DeliveryState } from '../store/index.js';
import type { EntityId, GeoQuery, Iri, Json, Member, QExpr, ScopeExpr, TypeExpr } from '../ngsi/index.js';

export type { DeliveryState };

export type SubscriptionId = string;

/** NGSI-LD §5.2.12 notificationTrigger values. */
export const NOTIFICATION_TRIGGERS = [
  'entityCreated', 'entityUpdated', 'entityDeleted', 'attributeCreated', 'attributeUpdated', 'attributeDeleted',
] as const;
export type NotificationTrigger = (typeof NOTIFICATION_TRIGGERS)[number];
/** NGSI-LD §5.2.12: the triggers when `notificationTrigger` is absent. */
export const DEFAULT_TRIGGERS: readonly NotificationTrigger[] = ['attributeCreated', 'attributeUpdated'];

/** NGSI-LD §5.2.14 format; `simplified` is `keyValues` and is kept as written. */
export const NOTIFICATION_FORMATS = ['normalized', 'keyValues', 'simplified', 'concise'] as const;
export type NotificationFormat = (typeof NOTIFICATION_FORMATS)[number];

/** NGSI-LD §5.2.15 accept. */
export const NOTIFICATION_ACCEPTS = ['application/json', 'application/ld+json', 'application/geo+json'] as const;
export type NotificationAccept = (typeof NOTIFICATION_ACCEPTS)[number];

/** Endpoint URI schemes edgeld delivers to (HTTP and MQTT bindings, NGSI-LD §5.2.15, Annex). */
export const ENDPOINT_SCHEMES = ['http', 'https', 'mqtt', 'mqtts'] as const;

/** NGSI-LD §5.2.33 EntitySelector: a type selection (or `*`), and optionally an id or an idPattern. */
export interface EntitySelector {
  type: TypeExpr | '*';
  id?: EntityId;
  idPattern?: string;
}

export interface KeyValuePair {
  key: string;
  value: string;
}

/** NGSI-LD §5.2.15 Endpoint. */
export interface Endpoint {
  uri: string;
  accept: NotificationAccept;
  /** Milliseconds. */
  timeout?: number;
  receiverInfo?: KeyValuePair[];
  notifierInfo?: KeyValuePair[];
}

/** NGSI-LD §5.2.14 NotificationParams (the read-only status members live in DeliveryState). */
export interface NotificationParams {
  attributes?: Iri[];
  pick?: Member[];
  omit?: Member[];
  format: NotificationFormat;
  sysAttrs: boolean;
  showChanges: boolean;
  /** NGSI-LD §4.5.23 linked entities: inlined in their relationships, or listed beside (flat). */
  join?: 'inline' | 'flat';
  /** Levels of linked entities (default 1). */
  joinLevel?: number;
  endpoint: Endpoint;
}

/** A query language expression as written and as parsed (expanded with the subscription's context). */
export interface Parsed<E> {
  text: string;
  expr: E;
}

/** The creator of a subscription as its permissions see it (a snapshot of its token's assignees). */
export interface SubscriptionOwner {
  subject: string;
  admin: boolean;
  assignees: string[];
}

/** NGSI-LD §5.2.21 TemporalQuery of a registration subscription, as written (its instants checked). */
export interface SubscriptionTemporalQ {
  timerel: 'before' | 'after' | 'between';
  timeAt: string;
  endTimeAt?: string;
  /** observedAt: matched against observationInterval; createdAt, modifiedAt: managementInterval. */
  timeproperty: 'observedAt' | 'createdAt' | 'modifiedAt';
}

/** What a subscription's owner may do as it is now (not as when it created the subscription). */
export interface OwnerRights {
  admin: boolean;
  assignees: readonly string[];
}

export interface Subscription {
  id: SubscriptionId;
  /** A context source registration subscription (NGSI-LD §5.11): notified of registrations, not entities. */
  csource?: true;
  subscriptionName?: string;
  description?: string;
  entities?: EntitySelector[];
  watchedAttributes?: Iri[];
  notificationTrigger?: NotificationTrigger[];
  /** Seconds. */
  timeInterval?: number;
  q?: Parsed<QExpr>;
  geoQ?: GeoQuery;
  scopeQ?: Parsed<ScopeExpr>;
  /** Registration subscriptions: a filter on the registrations' contextSourceInfo and properties (§5.2.12 csf). */
  csf?: Parsed<QExpr>;
  /** Registration subscriptions: matched against the registrations' time intervals. */
  temporalQ?: SubscriptionTemporalQ;
  isActive: boolean;
  expiresAt?: number;
  /** expiresAt as written: a registration subscription shows it back verbatim, as a registration does. */
  expiresAtText?: string;
  /** Seconds. */
  throttling?: number;
  lang?: string;
  datasetId?: string[];
  /** A context URL to compact notifications with instead of the creation request's context. */
  jsonldContext?: string;
  notification: NotificationParams;
  /** The @context of the request that created it (Link header or body); absent: core only. */
  context?: Json;
  /**
   * Who created it, with authentication on: only it (or an administrator) manages it, and its
   * notifications carry only entities it may read (behaviour §8). Absent: created without authentication.
   */
  owner?: SubscriptionOwner;
  createdAt: number;
  modifiedAt: number;
  delivery: DeliveryState;
}

export type SubscriptionStatus = 'active' | 'paused' | 'expired';

/** NGSI-LD §5.2.12 status: paused when not active, expired once expiresAt has passed. */
export function statusOf(sub: Subscription, now: number): SubscriptionStatus {
  if (!sub.isActive) return 'paused';
  if (sub.expiresAt !== undefined && sub.expiresAt <= now) return 'expired';
  return 'active';
}

/** The triggers a subscription fires on. */
export function triggersOf(sub: Subscription): readonly NotificationTrigger[] {
  return sub.notificationTrigger ?? DEFAULT_TRIGGERS;
}
