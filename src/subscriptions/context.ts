// The context notifications of a subscription are compacted with (NGSI-LD §5.2.12 jsonldContext,
// else the creation request's @context), made ready for the notification builder.

import type { ResolvedContext } from '../jsonld/index.js';
import type { Json } from '../ngsi/index.js';
import type { Subscription } from './model.js';
import type { NotificationContext } from './notification.js';

/** What to resolve with the context service; undefined means the core context. */
export function notificationContextInput(sub: Subscription): Json | undefined {
  return sub.jsonldContext ?? sub.context;
}

/**
 * A resolved context as the builder needs it. A context that is not one URL is served by the broker
 * itself at /ngsi-ld/v1/jsonldContexts/{id}: `baseUrl` is the broker's origin as receivers reach it.
 */
export function toNotificationContext(resolved: ResolvedContext, baseUrl: string): NotificationContext {
  const linkUrl = resolved.linkUrl ?? `${baseUrl.replace(/\/$/, '')}/ngsi-ld/v1/jsonldContexts/${resolved.hostedId ?? ''}`;
  return {
    // NOTE: a request context is JSON (URLs and objects of JSON) by construction.
    bodyContext: resolved.bodyContext as Json,
    linkUrl,
    expandTerm: (t) => resolved.expandTerm(t),
    compactIri: (i) => resolved.compactIri(i),
  };
}
