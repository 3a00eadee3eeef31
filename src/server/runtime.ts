// What the broker holds once it serves: the HTTP listener (and its redirect port), the embedded MQTT
// broker and the watch of the TLS certificate files, started by listen(), and whether it is shutting
// down. The parts built before read it through getters.

import type { HttpListener, RedirectListener } from '../http/index.js';
import type { TlsReloader } from '../lib/index.js';
import type { MqttBroker } from '../mqtt/index.js';

export interface Runtime {
  listener: HttpListener | undefined;
  mqtt: MqttBroker | undefined;
  /** The plain port that redirects to HTTPS (server.redirect-port). */
  redirect: RedirectListener | undefined;
  /** Reloads the TLS key and certificate pairs (SIGHUP, file changes); undefined without TLS. */
  tls: TlsReloader | undefined;
  /** The bound HTTP port once listening. */
  httpPort: number | undefined;
  closing: boolean;
}
