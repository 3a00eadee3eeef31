// The optional request budget of each authenticated subject (application.budget): past it, 429
// TooManyRequests with Retry-After. Administrators are exempt (they must be able to repair a gateway
// whose budget is too tight); an anonymous request (public reads) is counted by its address.
// Registered only when a budget is set, so a gateway without one pays nothing per request.

import type { MiddlewareHandler } from 'hono';
import { addressGroup, type RequestBudget } from '../lib/index.js';
import { TooManyRequestsError } from '../ngsi/index.js';
import type { AppEnv } from './app-env.js';
import { peerAddressOf } from './peer-address.js';

/** Keys of subjects and of addresses in the one budget: an address can never pass for a subject. */
const SUBJECT_KEY = 's ';
const ADDRESS_KEY = 'a ';

export function requestBudget(budget: RequestBudget): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    const principal = c.get('principal');
    if (principal === undefined || principal.admin) return next();
    let key: string;
    if (principal.subject !== undefined) key = SUBJECT_KEY + principal.subject;
    else {
      const address = peerAddressOf(c);
      if (address === undefined) return next();
      key = ADDRESS_KEY + addressGroup(address);
    }
    const waitMs = budget.take(key);
    if (waitMs === 0) return next();
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    const err = new TooManyRequestsError('Request budget exceeded', `This subject's requests per minute are used up; retry after ${seconds} s`);
    err.retryAfter = seconds;
    throw err;
  };
}
