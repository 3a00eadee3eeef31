// The errors of the embedded broker: a listener that cannot be opened at start-up, and the refusal of
// a CONNECT whose credentials were right but whose will is not allowed.

/** A TCP or WebSocket listener of the embedded broker could not bind; `cause` is Node's error. */
export class MqttListenError extends Error {
  override name = 'MqttListenError';
  /** The option naming the port that failed: `mqtt.port`, `mqtt.ws-port` or `mqtt.tls-port`. */
  readonly option: 'mqtt.port' | 'mqtt.ws-port' | 'mqtt.tls-port';
  readonly host: string;
  readonly port: number;
  /** Node's error code (`EADDRINUSE`, `EACCES`, ...), or '' when there is none. */
  readonly code: string;

  constructor(option: 'mqtt.port' | 'mqtt.ws-port' | 'mqtt.tls-port', host: string, port: number, cause: unknown) {
    const code = cause instanceof Error && 'code' in cause ? String(cause.code) : '';
    super(`cannot listen on ${host}:${port} (${option}): ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.option = option;
    this.host = host;
    this.port = port;
    this.code = code;
  }
}

/**
 * A CONNECT refused although its credentials were right: its will names a topic its client may not
 * publish on (CONNACK 5, not authorized). Not a failed login: the lockout does not count it.
 */
export class MqttWillRefusedError extends Error {
  override name = 'MqttWillRefusedError';
  /** CONNACK 5 (MQTT 3.1.1 §3.2.2.3), which Aedes reads from here. */
  readonly returnCode = 5;
  constructor(readonly topic: string) {
    super('not authorized: the will names a topic this client may not publish on');
  }
}
