// What a request says about itself, for every route: who asks (the principal), the entity id of
// its path, and the context of a request without a body.

import { BadRequestDataError, anonymousIn, isAbsoluteUri, type Principal } from '../ngsi/index.js';
import type { ResolvedContext } from '../jsonld/index.js';
import type { AppContext, AppDeps } from './app-env.js';
import { contextFromLink } from './media.js';

/** The principal of the request: its tenant, and with authentication its subject and assignees. */
export function actorOf(c: AppContext): Principal {
  return c.get('principal') ?? anonymousIn(c.get('tenant'));
}

export function entityIdParam(c: AppContext): string {
  const id = c.req.param('id') ?? '';
  if (!isAbsoluteUri(id)) throw new BadRequestDataError('Invalid entity id', `'${id}' is not an absolute URI`);
  return id;
}

/** The context of a request without a body: its Link header, else the core context. */
export async function linkContext(c: AppContext, deps: AppDeps): Promise<ResolvedContext> {
  return deps.contexts.resolve(contextFromLink(c.req.header('link')));
}
