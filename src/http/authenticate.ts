// Authentication of NGSI-LD and permission requests (interface 5): a Bearer JWT gives the request
// its principal; without one, only the reads that public permissions allow. The token itself never
// reaches a log line or an error body.

import type { MiddlewareHandler } from 'hono';
import { UnauthorizedError } from '../ngsi/index.js';
import type { Authenticator } from '../auth/index.js';
import type { AppEnv } from './app-env.js';

const BEARER = /^Bearer +([A-Za-z0-9\-_~+/.]+=*) *$/i;
const READS = new Set(['GET', 'HEAD']);
/**
 * One served @context (NGSI-LD §6.3.5): notification receivers and clients dereference the Link
 * URL of a hosted or implicitly created context without any token; a context is vocabulary, not
 * data. Listing them and changing them still need a token.
 */
const SERVED_CONTEXT = /^\/ngsi-ld\/v1\/jsonldContexts\/[^/]+$/;
/**
 * Behaviour §8: without a token, only the reads public permissions can allow: entities, their
 * history, discovery, and the @contexts (vocabulary). Anything else, a listing of subscriptions or
 * permissions say, needs a token (401), even where its answer to nobody would be an empty list.
 */
const PUBLIC_READS = /^\/ngsi-ld\/v1\/(?:entities|temporal\/entities|types|attributes|jsonldContexts)(?:\/[^/]+)?\/?$/;

export function authenticate(auth: Authenticator): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const tenant = c.get('tenant') ?? '';
    const header = c.req.header('authorization');
    if (header === undefined && READS.has(c.req.method) && SERVED_CONTEXT.test(c.req.path)) return next();
    if (header === undefined) {
      if (auth.anonymous === undefined || !READS.has(c.req.method) || !PUBLIC_READS.test(c.req.path)) {
        throw new UnauthorizedError('Authentication required', 'This request needs an access token (Authorization: Bearer <token>)');
      }
      c.set('principal', auth.anonymous(tenant));
      return next();
    }
    const token = BEARER.exec(header)?.[1];
    if (token === undefined) throw new UnauthorizedError('Invalid Authorization header', 'Expected Authorization: Bearer <token>');
    c.set('principal', await auth.authenticate(token, tenant));
    return next();
  };
}
