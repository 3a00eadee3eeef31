// The embedded MQTT broker's access hooks: measurement ingestion through the write core and, with
// authentication, who may connect, subscribe, publish and receive (the topics of notifications are
// the broker's own, each readable only by its subscription's owner), and the check that a
// subscription's MQTT endpoint on the embedded broker names its subscriber's own topics.

import type { Authenticator } from '../auth/index.js';
import type { Config } from '../config/index.js';
import type { DeviceService } from '../devices/index.js';
import { createMeasurementService } from '../entities/index.js';
import type { WriteCore } from '../events.js';
import type { ContextInput, ContextService } from '../jsonld/index.js';
import { uuid, type Clock, type IdGenerator, type Logger, type LoginLimiter } from '../lib/index.js';
import {
  createIngest, createMqttAccess, type CommandPort, type HomeAssistantCommands, isEmbeddedBrokerUrl, mayNotifyOn, notifyPrefixOf, topicMatches, type Ingest, type MqttAccess, type MqttBroker, type MqttSessionOwners,
} from '../mqtt/index.js';
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
  /** The subscriptions whose endpoints may name topics of the embedded broker. */
  registry: Pick<SubscriptionRegistry, 'revision' | 'all'>;
  auth: Authenticator | undefined;
  /** The embedded MQTT broker once started. */
  mqtt(): MqttBroker | undefined;
  /** Where the principal each MQTT session belongs to is kept (with the sessions). */
  sessions: MqttSessionOwners;
  /** Makes CONNECTs wait after repeated failed logins; undefined when off. */
  loginLimiter?: LoginLimiter | undefined;
  /** Where answers on cmdexe go. */
  commands: CommandPort;
  /** Where Home Assistant's commands go; undefined when the integration is off. */
  homeAssistant: HomeAssistantCommands | undefined;
}

/** The topics notifications go to on the embedded broker, each with the subjects owning its subscriptions ('' for an ownerless one). */
interface NotificationTopics {
  list: ReadonlyArray<{ topic: string; owner: string }>;
  owners: ReadonlyMap<string, ReadonlySet<string>>;
}

const NO_TOPICS: NotificationTopics = { list: [], owners: new Map() };

/** The topic an mqtt:// endpoint names on the embedded broker; undefined for any other endpoint. */
function embeddedTopicOf(uri: string, embedded: { port: number; host: string }): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (!isEmbeddedBrokerUrl(url, embedded)) return undefined;
  try {
    return decodeURIComponent(url.pathname.slice(1));
  } catch {
    return undefined;
  }
}

/** The topics notifications go to on the embedded broker (kept until a subscription changes). */
function createNotificationTopics(deps: Pick<MqttWiringDeps, 'config' | 'registry' | 'mqtt'>): () => NotificationTopics {
  let known: { revision: number; port: number; topics: NotificationTopics } | undefined;
  return () => {
    const mqtt = deps.mqtt();
    if (mqtt === undefined) return NO_TOPICS;
    const revision = deps.registry.revision();
    if (known !== undefined && known.revision === revision && known.port === mqtt.port) return known.topics;
    const embedded = { port: mqtt.port, host: deps.config.mqtt.host };
    const list: Array<{ topic: string; owner: string }> = [];
    const owners = new Map<string, Set<string>>();
    for (const { sub } of deps.registry.all()) {
      const topic = embeddedTopicOf(sub.notification.endpoint.uri, embedded);
      if (topic === undefined) continue;
      const owner = sub.owner?.subject ?? '';
      list.push({ topic, owner });
      owners.set(topic, (owners.get(topic) ?? new Set()).add(owner));
    }
    known = { revision, port: mqtt.port, topics: { list, owners } };
    return known.topics;
  };
}

/**
 * With authentication on, the check of a subscription's endpoint: on the embedded broker, only the
 * subscriber's own notification topics (`edgeld/notify/<subject>/…`, or a dashboard topic nobody
 * else notifies on; administrators: any topic but the devices' and the system's). Returns why not.
 */
export function createEndpointCheck(deps: Pick<MqttWiringDeps, 'config' | 'registry' | 'mqtt' | 'auth'>): ((actor: Principal, uri: string) => string | undefined) | undefined {
  if (deps.auth === undefined) return undefined;
  const topics = createNotificationTopics(deps);
  return (actor, uri) => {
    const mqtt = deps.mqtt();
    if (mqtt === undefined) return undefined;
    const topic = embeddedTopicOf(uri, { port: mqtt.port, host: deps.config.mqtt.host });
    if (topic === undefined || mayNotifyOn(topic, actor.subject, actor.admin, topics().owners.get(topic))) return undefined;
    const own = actor.subject === undefined ? 'edgeld/notify/<subject>/' : notifyPrefixOf(actor.subject);
    return `An MQTT endpoint on the embedded broker names one of the subscriber's own notification topics (${own}...); '${topic}' is not one`;
  };
}

export function buildMqttAccess(deps: MqttWiringDeps): { ingest: Ingest; hooks: MqttAccess } {
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
  const maySubscribe = (filter: string, subject: string | undefined): boolean =>
    topics().list.every(({ topic, owner }) => !topicMatches(filter, topic) || (subject !== undefined && owner === subject));
  const hooks = createMqttAccess({
    log: log.child('mqtt'), ingest, sessions: deps.sessions, ...(deps.loginLimiter ? { loginLimiter: deps.loginLimiter } : {}),
    commands: { port: deps.commands, maxPayload: config.mqtt.maxPayload },
    homeAssistant: deps.homeAssistant,
    ...(auth ? {
      auth: {
        principal: (token, tenant) => auth.authenticate(token, tenant),
        deviceSecret: (tenant, deviceId, secret) => devices.checkSecret(tenant, deviceId, secret),
        isDevice: (tenant, deviceId) => devices.resolve(tenant, deviceId) !== undefined,
        maySubscribe,
        owners: (topic) => topics().owners.get(topic),
      },
    } : {}),
  });
  return { ingest, hooks };
}
