// Subscriptions: the MQTT notification sender so far.
// NOTE: export lines only; the subscription use cases, registry and notifier add theirs here.

export {
  createMqttSender, parseMqttEndpoint, MqttEndpointError, MqttSendError,
  type MqttSender, type MqttSenderDeps, type MqttSendOptions, type MqttNotificationMessage, type MqttEndpoint,
  type MqttQos, type MqttVersion,
} from './mqtt-sender.js';
