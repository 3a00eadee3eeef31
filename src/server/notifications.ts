// Notifications: the MQTT sender (in-process for the embedded broker) and the notifier, a consumer
// of the journal feed, with each subscription's context and, with authentication, the read check
// of its owner.

import type { Config } from '../config/index.js';
import { allows } from '../auth/index.js';
import type { ContextInput, ContextService } from '../jsonld/index.js';
import { uuid, type Clock, type IdGenerator, type Logger } from '../lib/index.js';
import { isEmbeddedBrokerUrl, type MqttBroker, type MqttQos } from '../mqtt/index.js';
import type { EntityFacts } from '../ngsi/index.js';
import type { JournalFeed, Store } from '../store/index.js';
import {
  createMqttSender, createNotifier, notificationContextInput, sendHttp, toNotificationContext, type MqttSender, type Notifier,
  type RegistrationLens, type SubscriptionOwners, type SubscriptionRegistry,
} from '../subscriptions/index.js';

export interface NotificationDeps {
  config: Config;
  log: Logger;
  clock: Clock;
  newId?: IdGenerator | undefined;
  store: Store;
  feed: JournalFeed;
  registry: SubscriptionRegistry;
  /** Context source registration subscriptions and what the notifier knows of registrations. */
  csource?: { registry: SubscriptionRegistry; lens: RegistrationLens };
  contexts: ContextService;
  /** The embedded MQTT broker once started. */
  mqtt(): MqttBroker | undefined;
  publicUrl(): string;
  /** With authentication on: the rights of subscription owners now, and which subscriptions are suspended. */
  owners: SubscriptionOwners | undefined;
}

export interface NotificationParts {
  notifier: Notifier;
  mqttSender: MqttSender;
  publishLocal(topic: string, payload: Buffer | string, qos: MqttQos): Promise<void>;
}

export function buildNotifications(deps: NotificationDeps): NotificationParts {
  const { config, log, clock, store, contexts } = deps;
  const expiry = config.mqtt.notificationExpiry;
  const publishLocal = (topic: string, payload: Buffer | string, qos: MqttQos): Promise<void> => {
    const mqtt = deps.mqtt();
    if (!mqtt) return Promise.reject(new Error('the embedded MQTT broker is not running'));
    // NOTE: a properties object of its own: Aedes sets the interval left in that of a queued message.
    return expiry === 0 ? mqtt.publish(topic, payload, qos) : mqtt.publish(topic, payload, qos, { properties: { messageExpiryInterval: expiry } });
  };
  const mqttSender = createMqttSender({
    isLocal: (url) => {
      const mqtt = deps.mqtt();
      return mqtt !== undefined && isEmbeddedBrokerUrl(url, { port: mqtt.port, host: config.mqtt.host });
    },
    publishLocal,
    connectTimeoutMs: config.mqtt.connectTimeout,
    log: log.child('mqtt-sender'),
  });
  const notifier = createNotifier({
    store, feed: deps.feed, registry: deps.registry, ...(deps.csource ? { csource: deps.csource } : {}), clock, log: log.child('notifier'), newId: deps.newId ?? uuid,
    // NOTE: a subscription's stored context was its creation request's ContextInput.
    contextOf: async (sub) => toNotificationContext(await contexts.resolve(notificationContextInput(sub) as ContextInput | undefined), deps.publicUrl()),
    sendHttp,
    sendMqtt: (uri, message, opts) => mqttSender.send(uri, message, opts),
    ...(deps.owners ? {
      mayRead: (tenant: string, assignees: readonly string[], entity: EntityFacts) =>
        allows({ tenant, admin: false, assignees, groups: [] }, 'read', entity, store.permissions.applicableTo(tenant, assignees, entity.id)),
      // Notifications follow the owner's rights at delivery: checked when matched and again before each send.
      owners: deps.owners, refusal: deps.owners.refusal,
    } : {}),
    options: {
      timeoutMs: config.notifications.timeout, maxAttempts: config.notifications.maxAttempts, retryBaseMs: config.notifications.retryBase,
      retryMaxMs: config.notifications.retryMax, maxPending: config.notifications.maxPending,
      periodicMaxEntities: config.notifications.periodicMaxEntities,
    },
  });
  return { notifier, mqttSender, publishLocal };
}
