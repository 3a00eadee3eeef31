// The @context cache resource (NGSI-LD §6.30, §5.13): list, retrieve and evict contexts.

import { ResourceNotFoundError } from '../../ngsi/index.js';
import { resource, type App, type AppDeps } from '../app.js';
import { APP_JSON, APP_LD_JSON, negotiate } from '../media.js';
import { bool, oneOf, readParams } from '../params.js';
import { BASE, noContent, sendJson } from '../respond.js';

export function registerContextRoutes(app: App, deps: AppDeps): void {
  const { contexts } = deps;

  resource(app, `${BASE}/jsonldContexts`, {
    // NGSI-LD §5.13.3 List @contexts
    GET: (c) => {
      const params = readParams(c.req.url, ['details', 'kind']);
      negotiate(c.req.header('accept'), [APP_JSON, APP_LD_JSON]);
      const kind = oneOf(params, 'kind', ['Hosted', 'Cached', 'ImplicitlyCreated'] as const);
      const list = contexts.list(kind ? { kind } : {});
      if (!bool(params, 'details')) return sendJson(list.map((e) => e.url));
      return sendJson(list.map((e) => {
        const out: Record<string, string | number> = { URL: e.url, localId: e.id, kind: e.kind };
        if (e.createdAt !== undefined) out['createdAt'] = new Date(e.createdAt).toISOString();
        if (e.lastUsage !== undefined) out['lastUsage'] = new Date(e.lastUsage).toISOString();
        if (e.numberOfHits !== undefined) out['numberOfHits'] = e.numberOfHits;
        return out;
      }));
    },
  });

  resource(app, `${BASE}/jsonldContexts/:id`, {
    // NGSI-LD §5.13.4 Serve @context
    GET: (c) => {
      readParams(c.req.url, []);
      const mediaType = negotiate(c.req.header('accept'), [APP_LD_JSON, APP_JSON]);
      const id = c.req.param('id') ?? '';
      const body = contexts.get(id);
      if (!body) throw new ResourceNotFoundError('Unknown @context', id);
      return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': mediaType } });
    },
    // NGSI-LD §5.13.5 Delete and Reload @context
    DELETE: async (c) => {
      const params = readParams(c.req.url, ['reload']);
      const id = c.req.param('id') ?? '';
      const found = await contexts.delete(id, { reload: bool(params, 'reload') });
      if (!found) throw new ResourceNotFoundError('Unknown @context', id);
      return noContent();
    },
  });
}
