// Operations endpoints outside the NGSI-LD API, with no tenant and no token: liveness (/health),
// readiness (/ready) and the Prometheus metrics (/metrics, when on).

import type { App, AppDeps } from '../app-env.js';

export function registerHealthRoutes(app: App, deps: Pick<AppDeps, 'notReady' | 'metrics'>): void {
  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.get('/ready', (c) => {
    const waiting = deps.notReady();
    return waiting.length === 0 ? c.json({ status: 'ready' }) : c.json({ status: 'not ready', notReady: waiting }, 503);
  });
  const { metrics } = deps;
  if (metrics) {
    app.get('/metrics', async (c) => c.body(await metrics.render(), 200, { 'Content-Type': metrics.contentType }));
  }
}
