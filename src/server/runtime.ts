// What the broker holds once it serves: the HTTP listener and the embedded MQTT broker, started by
// listen(), and whether it is shutting down. The parts built before read it through getters.

import type { HttpListener } from '../http/index.js';
import type { MqttBroker } from '../mqtt/index.js';

export interface Runtime {
  listener: HttpListener | undefined;
  mqtt: MqttBroker | undefined;
  /** The bound HTTP port once listening. */
  httpPort: number | undefined;
  closing: boolean;
}
