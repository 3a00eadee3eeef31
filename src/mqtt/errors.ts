// The one error the embedded broker reports at start-up: a listener that cannot be opened.

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
