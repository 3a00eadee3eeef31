// The embedded MQTT broker's access hooks: measurement ingestion through the write core and, with
// authentication, who may connect, subscribe and publish (the topics of notifications are the
// broker's own, each readable only by its subscription's owner).

import type { Authenticator } from '../auth/index.js';
import type { Config } from '../config/index.js';
import type { DeviceService } from '../devices/index.js';
import { createMeasurementService } from '../entities/index.js';
import type { WriteCore } from '../events.js';
import type { ContextInput, ContextService } from '../jsonld/index.js';
import { uuid, type Clock, type IdGenerator, type Logger, type LoginLimiter } from '../lib/index.js';
import { createIngest, createMqttAccess, isEmbeddedBrokerUrl, topicMatches, type Ingest, type MqttBroker } from '../mqtt/index.js';
import type { Principal } from '../ngsi/index.js';
import type { SubscriptionRegistry } from '../subscriptions/index.js';

export interface MqttWiringDeps {
  config: Config;
  log: Logger;
  clock: Clock;
  newId?: IdGenerator | undefined;
  core: WriteCore;
  contexts: ContextService;
  devices: DeviceService;
  registry: SubscriptionRegistry;
  auth: Authenticator | undefined;
  /** The embedded MQTT broker once started. */
  mqtt(): MqttBroker | undefined;
  /** Makes CONNECTs wait after repeated failed logins; undefined when off. */
  loginLimiter?: LoginLimiter | undefined;
}

type NotificationTopic = { topic: string; owner: string | undefined };

/** The topics notifications go to on the embedded broker, with the subject owning each subscription (kept until one changes). */
function createNotificationTopics(deps: Pick<MqttWiringDeps, 'config' | 'registry' | 'mqtt'>): () => NotificationTopic[] {
  let known: { revision: number; list: NotificationTopic[] } | undefined;
  return () => {
    const mqtt = deps.mqtt();
    if (mqtt === undefined) return [];
    const revision = deps.registry.revision();
    if (known !== undefined && known.revision === revision) return known.list;
    const embedded = { port: mqtt.port, host: deps.config.mqtt.host };
    const list: NotificationTopic[] = [];
    for (const { sub } of deps.registry.all()) {
      let uri: URL;
      try {
        uri = new URL(sub.notification.endpoint.uri);
      } catch {
        continue;
      }
      if (isEmbeddedBrokerUrl(uri, embedded)) list.push({ topic: decodeURIComponent(uri.pathname.slice(1)), owner: sub.owner?.subject });
    }
    known = { revision, list };
    return list;
  };
}

export function buildMqttAccess(deps: MqttWiringDeps): { ingest: Ingest; hooks: ReturnType<typeof createMqttAccess> } {
  const { config, log, clock, contexts, devices, auth } = deps;
  const authConfig = config.application.authentication;
  const measurements = createMeasurementService({ core: deps.core, newId: deps.newId ?? uuid });
  const ingest = createIngest({
    clock, log: log.child('mqtt-ingest'), maxPayload: config.mqtt.maxPayload, defaultEntityType: config.mqtt.defaultEntityType,
    autoprovision: config.mqtt.autoprovision === 'auto' ? !authConfig.enabled : config.mqtt.autoprovision === 'true',
    device: (tenant, deviceId) => devices.resolve(tenant, deviceId),
    mapper: (context) => (context === undefined ? contexts.core : contexts.resolve(context as ContextInput)),
    record: (actor, m, opts) => measurements.record(actor, m, opts),
  });
  const topics = createNotificationTopics(deps);
  /** Whether a subject may receive what is published on topics matching `filter`: not the notifications of another's subscription. */
  const maySubscribe = (filter: string, principal: Principal): boolean =>
    topics().every(({ topic, owner }) => !topicMatches(filter, topic) || (owner !== undefined && owner === principal.subject));
  /** Only the broker publishes on the topics of notifications (a client could otherwise forge them). */
  const mayPublish = (topic: string): boolean => topics().every((n) => n.topic !== topic);
  const hooks = createMqttAccess({
    log: log.child('mqtt'), ingest, ...(deps.loginLimiter ? { loginLimiter: deps.loginLimiter } : {}),
    ...(auth ? {
      auth: {
        principal: (token, tenant) => auth.authenticate(token, tenant),
        deviceSecret: (tenant, deviceId, secret) => devices.checkSecret(tenant, deviceId, secret),
        isDevice: (tenant, deviceId) => devices.resolve(tenant, deviceId) !== undefined,
        maySubscribe,
        mayPublish,
      },
    } : {}),
  });
  return { ingest, hooks };
}
