// Decides whether an mqtt:// endpoint names the gateway's own embedded broker, so that a
// notification to it is published in-process instead of over a loopback connection.

const LOOPBACK_OR_ANY = new Set(['127.0.0.1', 'localhost', '::1', '0.0.0.0', '::']);
const DEFAULT_MQTT_PORT = 1883;

/** `[::1]` → `::1`: URL keeps the brackets of an IPv6 host. */
function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * True when `url` is `mqtt://` (the embedded broker speaks no TLS) on a loopback or any-address host,
 * or on the configured listen host, and on the embedded broker's bound port (1883 when the URL has none).
 */
export function isEmbeddedBrokerUrl(url: URL, embedded: { port: number; host: string }): boolean {
  if (url.protocol !== 'mqtt:') return false;
  const port = url.port === '' ? DEFAULT_MQTT_PORT : Number(url.port);
  if (port !== embedded.port) return false;
  const host = bareHost(url.hostname).toLowerCase();
  return LOOPBACK_OR_ANY.has(host) || host === bareHost(embedded.host).toLowerCase();
}
