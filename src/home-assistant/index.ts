// The Home Assistant integration's public surface: MQTT discovery of the registered devices on the
// embedded broker, their states kept current, and Home Assistant's commands turned into writes.

export { COMMAND_DROPS, createHomeAssistant, type HomeAssistant, type HomeAssistantDeps } from './service.js';
/** The topics of the integration on the embedded broker (the broker's topic classes name them). */
export { HOME_ASSISTANT_PREFIX, parseCommandTopic } from './discovery.js';
/** The integration turned off: its retained messages go before the broker loads them. */
export { removeOwnRetained } from './retained.js';
