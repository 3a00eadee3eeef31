// The @context resource (NGSI-LD §6.30, §5.13): add, list, serve and evict contexts.

import { AccessDeniedError, BadRequestDataError, InvalidRequestError, ResourceNotFoundError, isPlainObject } from '../../ngsi/index.js';
import { actorOf } from '../request-context.js';
import type { ContextEntryInfo } from '../../jsonld/index.js';
import { resource, type App, type AppContext, type AppDeps } from '../app-env.js';
import { isContextInput, parseJsonText, readBytes } from '../body.js';
import { APP_JSON, APP_LD_JSON, negotiate, requestMediaType } from '../media.js';
import { bool, oneOf, readParams } from '../params.js';
import { BASE, created, idSegment, noContent, sendJson } from '../respond.js';

/** The detailed form of one context (§5.13.3 ContextInfo). */
function detailsOf(e: ContextEntryInfo): Record<string, string | number> {
  const out: Record<string, string | number> = { URL: e.url, localId: e.id, kind: e.kind };
  if (e.createdAt !== undefined) out['createdAt'] = new Date(e.createdAt).toISOString();
  if (e.lastUsage !== undefined) out['lastUsage'] = new Date(e.lastUsage).toISOString();
  if (e.numberOfHits !== undefined) out['numberOfHits'] = e.numberOfHits;
  return out;
}

/**
 * Whether the caller sees only what it gave: with authentication on, a request without a token
 * (public access, or a served context fetched by a receiver). Such a caller is not shown Cached
 * contexts: what the broker fetched is for those who hold a token (an allowed host may still be one
 * of the operator's on the LAN).
 */
function isAnonymous(c: AppContext, deps: AppDeps): boolean {
  if (deps.auth === undefined) return false;
  const principal = c.get('principal');
  return principal === undefined || (principal.subject === undefined && !principal.admin);
}

export function registerContextRoutes(app: App, deps: AppDeps): void {
  const { contexts } = deps;
  /** The context's info unless the caller may not see it (a Cached one, to an anonymous caller). */
  const visibleInfo = (c: AppContext, id: string): ContextEntryInfo | undefined => {
    const info = contexts.info(id);
    return info?.kind === 'Cached' && isAnonymous(c, deps) ? undefined : info;
  };

  resource(app, `${BASE}/jsonldContexts`, {
    // NGSI-LD §5.13.2 Add @context: `{"@context": …}` stored with kind Hosted, 201 with its Location
    POST: async (c) => {
      readParams(c.req.url, []);
      // The body is a context document itself: no request context rules apply to it.
      requestMediaType(c.req.header('content-type'), false);
      const doc = parseJsonText(await readBytes(c.req.raw, deps.config.bodyLimit), deps.config.maxJsonDepth);
      if (!isPlainObject(doc) || !('@context' in doc)) {
        throw new InvalidRequestError('Not a @context document', 'The body is {"@context": a URL, an object, or an array of them}');
      }
      if (!isContextInput(doc['@context'])) {
        throw new BadRequestDataError('Invalid @context', 'A context is a URL, an object, or an array of them');
      }
      const id = await contexts.add(doc['@context']);
      return created(`${BASE}/jsonldContexts/${idSegment(id)}`);
    },
    // NGSI-LD §5.13.3 List @contexts
    GET: (c) => {
      const params = readParams(c.req.url, ['details', 'kind']);
      negotiate(c.req.header('accept'), [APP_JSON, APP_LD_JSON]);
      const kind = oneOf(params, 'kind', ['Hosted', 'Cached', 'ImplicitlyCreated'] as const);
      const all = contexts.list(kind ? { kind } : {});
      const list = isAnonymous(c, deps) ? all.filter((e) => e.kind !== 'Cached') : all;
      if (!bool(params, 'details', false, 'BadRequestData')) return sendJson(list.map((e) => e.url));
      return sendJson(list.map(detailsOf));
    },
  });

  resource(app, `${BASE}/jsonldContexts/:id`, {
    // NGSI-LD §5.13.4 Serve @context
    GET: (c) => {
      const params = readParams(c.req.url, ['details']);
      // §5.13.4: the body is served as application/json unless JSON-LD is asked for.
      const mediaType = negotiate(c.req.header('accept'), [APP_JSON, APP_LD_JSON]);
      const id = c.req.param('id') ?? '';
      const details = bool(params, 'details', false, 'BadRequestData');
      const info = visibleInfo(c, id);
      if (!info) throw new ResourceNotFoundError('Unknown @context', id);
      // §5.13.4: with details=true, what is known of the context instead of its body.
      if (details) return sendJson(detailsOf(info));
      const body = contexts.get(id);
      if (!body) throw new ResourceNotFoundError('Unknown @context', id);
      return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': mediaType } });
    },
    // NGSI-LD §5.13.5 Delete and Reload @context
    DELETE: async (c) => {
      const params = readParams(c.req.url, ['reload']);
      const id = c.req.param('id') ?? '';
      // Behaviour §8: only an administrator removes contexts others may rely on (existence first: 404).
      if (!actorOf(c).admin) {
        if (contexts.info(id) === undefined) throw new ResourceNotFoundError('Unknown @context', id);
        throw new AccessDeniedError('Access denied', 'Deleting an @context needs the admin role');
      }
      const found = await contexts.delete(id, { reload: bool(params, 'reload', false, 'BadRequestData') });
      if (!found) throw new ResourceNotFoundError('Unknown @context', id);
      return noContent();
    },
  });
}
