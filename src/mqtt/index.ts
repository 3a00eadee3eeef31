// The embedded MQTT broker (Aedes): listeners, in-process publish, the access hooks, and the test
// that tells whether an mqtt:// endpoint names this broker.

export { startMqttBroker, isPublishTopic, type MqttBroker, type MqttBrokerOptions } from './broker.js';
export {
  CONNECTION_REFUSALS, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits, type ConnectionRefusal, type ConnectionStats,
} from './connection-gate.js';
export type { MqttQos } from '../subscriptions/index.js';
export { createAnonymousHooks, type MqttAccessHooks } from './hooks.js';
export {
  createMqttAccess, deviceSubject, topicMatches, type HomeAssistantCommands, type MqttAccess, type MqttAccessDeps, type MqttAccessStats, type MqttAuthentication, type MqttSessionOwners,
} from './access.js';
export { mayNotifyOn, notifyPrefixOf } from './topic-classes.js';
export {
  createIngest, parseMeasurementTopic, type DropReason, type Ingest, type IngestDeps, type IngestOutcome, type IngestStats,
  type MeasurementTopic, type Publisher,
} from './ingest.js';
export { MqttListenError } from './errors.js';
export { commandProperties, commandTopic, type CommandPort, type MqttPublishProperties } from './commands.js';
export { isEmbeddedBrokerUrl } from './local-url.js';
export type { MqttSessionStore } from '../lib/index.js';
