// The shape a subscription arrives in once the edge has checked its structure (member names and JSON
// types): compact names and texts, not yet expanded nor checked against the NGSI-LD rules.

export interface EntitySelectorInput {
  type?: string | undefined;
  id?: string | undefined;
  idPattern?: string | undefined;
}

export interface KeyValueInput {
  key: string;
  value: string;
}

export interface EndpointInput {
  uri?: string | undefined;
  accept?: string | undefined;
  timeout?: number | undefined;
  receiverInfo?: KeyValueInput[] | undefined;
  notifierInfo?: KeyValueInput[] | undefined;
}

export interface NotificationInput {
  attributes?: string[] | undefined;
  pick?: string[] | undefined;
  omit?: string[] | undefined;
  format?: string | undefined;
  sysAttrs?: boolean | undefined;
  showChanges?: boolean | undefined;
  join?: string | undefined;
  joinLevel?: number | undefined;
  endpoint?: EndpointInput | undefined;
}

export interface GeoQInput {
  georel?: unknown;
  geometry?: unknown;
  coordinates?: unknown;
  geoproperty?: unknown;
}

export interface TemporalQInput {
  timerel?: string | undefined;
  timeAt?: string | undefined;
  endTimeAt?: string | undefined;
  timeproperty?: string | undefined;
}

/** Every writable member of NGSI-LD §5.2.12 (the read-only ones are refused at the edge). */
export interface SubscriptionInput {
  id?: string | undefined;
  type?: string | undefined;
  subscriptionName?: string | undefined;
  description?: string | undefined;
  entities?: EntitySelectorInput[] | undefined;
  watchedAttributes?: string[] | undefined;
  notificationTrigger?: string[] | undefined;
  timeInterval?: number | undefined;
  q?: string | undefined;
  geoQ?: GeoQInput | undefined;
  scopeQ?: string | undefined;
  /** Registration subscriptions only. */
  csf?: string | undefined;
  /** Registration subscriptions only. */
  temporalQ?: TemporalQInput | undefined;
  isActive?: boolean | undefined;
  expiresAt?: string | undefined;
  throttling?: number | undefined;
  lang?: string | undefined;
  datasetId?: string[] | undefined;
  jsonldContext?: string | undefined;
  notification?: NotificationInput | undefined;
}

/** Members a client may not write: the broker maintains them (NGSI-LD §5.2.12, §5.2.14). */
export const READ_ONLY_MEMBERS = ['status', 'statusReason', 'createdAt', 'modifiedAt'] as const;
export const READ_ONLY_NOTIFICATION_MEMBERS = ['status', 'timesSent', 'lastNotification', 'lastSuccess', 'lastFailure', 'lastFailureReason'] as const;
