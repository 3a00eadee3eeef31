// The embedded MQTT broker (Aedes): listeners, in-process publish, the access hooks, and the test
// that tells whether an mqtt:// endpoint names this broker.

export { startMqttBroker, isPublishTopic, type MqttBroker, type MqttBrokerOptions, type MqttQos } from './broker.js';
export { createAnonymousHooks, createTokenHooks, type MqttAccessHooks } from './hooks.js';
export { MqttListenError } from './errors.js';
export { isEmbeddedBrokerUrl } from './local-url.js';
export type { MqttSessionStore } from './session-store.js';
