// Subscriptions (NGSI-LD §5.8, §5.11): the model, parsing and rendering of the API form, the
// in-memory registry, the pure matcher and notification builder, and the use cases.

export {
  DEFAULT_TRIGGERS, ENDPOINT_SCHEMES, NOTIFICATION_ACCEPTS, NOTIFICATION_FORMATS, NOTIFICATION_TRIGGERS, statusOf, triggersOf,
  type DeliveryState, type Endpoint, type EntitySelector, type KeyValuePair, type NotificationAccept, type NotificationFormat,
  type NotificationParams, type NotificationTrigger, type Parsed, type Subscription, type SubscriptionId, type SubscriptionStatus,
} from './model.js';
export {
  READ_ONLY_MEMBERS, READ_ONLY_NOTIFICATION_MEMBERS,
  type EndpointInput, type EntitySelectorInput, type GeoQInput, type KeyValueInput, type NotificationInput, type SubscriptionInput,
} from './input.js';
/** Create / Update Subscription inputs to the model; 400 BadRequestData naming the member. */
export { checkSubscription, parseSubscription, patchSubscription, type ParseSubscriptionOptions } from './parse.js';
/** The API form of a subscription, compacted with a request's context. */
export { renderSubscription, typeSelectionText } from './render.js';
/** Candidate subscriptions of a change, by tenant and entity type or watched attribute. */
export { createSubscriptionRegistry, typesSelectedBy, type SubscriptionRegistry } from './registry.js';
/** Whether one change notifies one subscription. */
export { createMatchCache, matchSubscription, selectsEntity, type MatchCache, type MatchOptions, type SubscriptionMatch } from './matcher.js';
export { changeTriggers, type AttributeEvent, type ChangeTriggers } from './triggers.js';
/** The Notification body and headers for one subscription and its matching entities. */
export {
  buildNotification, renderOptionsOf, type BuildNotificationInput, type BuiltNotification, type NotificationContext, type NotifiedEntity,
} from './notification.js';
export { notificationContextInput, toNotificationContext } from './context.js';
/** With authentication on: the rights of subscription owners at delivery, and suspended subscriptions. */
export { createSubscriptionOwners, type SubscriptionOwners } from './owners.js';
/** The use cases, and the registry's contents at start-up. */
export {
  createSubscriptionService, loadSubscriptions,
  type RequestContext, type SubscriptionPage, type SubscriptionService, type SubscriptionServiceDeps,
} from './service.js';
/** The notifier: journal → matching → durable queue → HTTP / MQTT delivery with retries. */
/** Registration subscriptions' notifications: what the notifier is told of registrations. */
export type { RegistrationLens } from './csource-notifications.js';
export { createNotifier, NOTIFIER_READER, type Notifier, type NotifierDeps, type NotifierOptions, type NotifierStats } from './notifier.js';
export { sendHttp, type HttpDelivery } from './http-sender.js';
export { matchesEntity } from './matcher.js';
/** Notifications over MQTT: the embedded broker in-process, outside brokers through pooled clients. */
export {
  createMqttSender, parseMqttEndpoint, MqttEndpointError, MqttSendError,
  type MqttSender, type MqttSenderDeps, type MqttSendOptions, type MqttNotificationMessage, type MqttEndpoint,
  type MqttQos, type MqttVersion,
} from './mqtt-sender.js';
