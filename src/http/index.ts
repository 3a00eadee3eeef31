// The HTTP edge: the Hono application serving the NGSI-LD API.
export { createApp } from './app.js';
export type { App, AppDeps, DashboardOptions, HttpConfig } from './app-env.js';
export { listenHttp, type HttpListener, type UpgradeHandler } from './listen.js';
export { listenRedirect, RedirectListenError, type RedirectListener } from './redirect.js';
/** The Prometheus metrics (prom-client): the broker's own, Node's process metrics, and added sources. */
export {
  createMetrics, type Metrics, type MetricsDeps, type MetricSample, type MetricsSource, type MqttStats, type NotificationStats, type StorageStats,
} from './metrics.js';
