// Routes of the subscriptions resource (NGSI-LD §6.10, §6.11): create, query, retrieve, update,
// delete of entity subscriptions, over the shared subscription edge.

import type { App, AppDeps } from '../app-env.js';
import { registerSubscriptionResource } from '../subscription-routes.js';

export function registerSubscriptionRoutes(app: App, deps: AppDeps): void {
  registerSubscriptionResource(app, deps, { path: 'subscriptions', service: deps.subscriptions, csource: false });
}
