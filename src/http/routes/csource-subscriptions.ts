// Routes of the context source registration subscriptions resource (NGSI-LD §6.12, §6.13): create,
// query, retrieve, update, delete, over the shared subscription edge; their notifications are the
// notifier's (subscriptions/).

import type { App, AppDeps } from '../app-env.js';
import { registerSubscriptionResource } from '../subscription-routes.js';

export function registerCsourceSubscriptionRoutes(app: App, deps: AppDeps): void {
  registerSubscriptionResource(app, deps, { path: 'csourceSubscriptions', service: deps.csourceSubscriptions, csource: true });
}
