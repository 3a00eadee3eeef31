// The route label of a request for metrics: the pattern it was routed by, so a label has as many
// values as there are routes, whatever paths clients send.

import { routePath } from 'hono/route';
import type { AppContext } from './app-env.js';

/** What a request matched by no route is labelled (a 404 of an unknown path). */
const UNMATCHED_ROUTE = 'unmatched';

/**
 * The route pattern (`/ngsi-ld/v1/entities/:entityId`) of an answered request. NOTE: the last matched
 * route is the resource's own (its 405 handler comes after its method handlers, with the same
 * pattern); a wildcard there means only middleware matched.
 */
export function routeLabelOf(c: AppContext): string {
  const pattern = routePath(c, -1);
  return pattern === '' || pattern.endsWith('*') ? UNMATCHED_ROUTE : pattern;
}
