// Routes of entity attributes (NGSI-LD §6.6 and §6.7): append, update, partial update,
// replace and delete of attributes.

import {
  appendAttributes, deleteAttribute, parseAttributeFragment, parseAttributes, parseEntityMembers, replaceAttribute,
  updateAttributePartial, updateAttributes, BadRequestDataError, nameProblem,
} from '../../ngsi/index.js';
import { resource, type App, type AppContext, type AppDeps } from '../app-env.js';
import { readJsonBody } from '../body.js';
import { bool, csv, readParams } from '../params.js';
import { BASE, noContent } from '../respond.js';
import { updateResponse } from './entities.js';
import { actorOf, entityIdParam, linkContext } from '../request-context.js';
import { distributedWrite, entityPath } from '../distributed.js';

/** NOTE: readJsonBody guarantees an object for these routes. */
const asObject = (body: unknown): Record<string, unknown> => body as Record<string, unknown>;

function attrNameParam(c: AppContext): string {
  const name = c.req.param('attr') ?? '';
  const problem = nameProblem(name);
  if (problem !== undefined) throw new BadRequestDataError('Invalid attribute name', problem);
  return name;
}

export function registerEntityAttributeRoutes(app: App, deps: AppDeps): void {
  const { entities, contexts, config } = deps;

  resource(app, `${BASE}/entities/:id/attrs`, {
    // NGSI-LD §6.6.3.1 Append Entity Attributes
    POST: async (c) => {
      const params = readParams(c.req.url, ['options', 'local']);
      const options = new Set(csv(params, 'options') ?? []);
      for (const o of options) if (o !== 'noOverwrite') throw new BadRequestDataError(`Unknown option '${o}'`, 'Allowed: noOverwrite');
      const id = entityIdParam(c);
      // NOTE: clients (ngsijs) send application/merge-patch+json here, a partial update like PATCH: read as JSON.
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth, allowMergePatch: true });
      const ctx = await contexts.resolve(body.context);
      const query = new URLSearchParams(options.size > 0 ? { options: [...options].join(',') } : {});
      return distributedWrite(c, deps, {
        op: 'appendAttrs', selector: { id }, method: 'POST', path: entityPath(id, '/attrs'), query,
        body: asObject(body.body), ctx,
      }, async (rest) => {
        const attrs = parseAttributes(rest, ctx, { now: entities.now(), allowNull: false });
        const members = parseEntityMembers(rest, ctx, { now: entities.now(), allowNull: false });
        const result = await entities.update(actorOf(c), id,
          (current, now) => appendAttributes(current, attrs, { noOverwrite: options.has('noOverwrite'), now, members }));
        return updateResponse(result, ctx);
      });
    },
    // NGSI-LD §6.6.3.2 Update Entity Attributes
    PATCH: async (c) => {
      readParams(c.req.url, ['local']);
      const id = entityIdParam(c);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth, allowMergePatch: true });
      const ctx = await contexts.resolve(body.context);
      return distributedWrite(c, deps, {
        op: 'updateAttrs', selector: { id }, method: 'PATCH', path: entityPath(id, '/attrs'),
        body: asObject(body.body), ctx,
      }, async (rest) => {
        const attrs = parseAttributes(rest, ctx, { now: entities.now(), allowNull: true });
        const members = parseEntityMembers(rest, ctx, { now: entities.now(), allowNull: true });
        const result = await entities.update(actorOf(c), id, (current, now) => updateAttributes(current, attrs, now, members));
        return updateResponse(result, ctx);
      });
    },
  });

  registerAttributeRoutes(app, deps);
}

/** The routes of one attribute (NGSI-LD §6.7). */
function registerAttributeRoutes(app: App, deps: AppDeps): void {
  const { entities, contexts, config } = deps;
  resource(app, `${BASE}/entities/:id/attrs/:attr`, {
    // NGSI-LD §6.7.3.1 Partial Attribute Update
    PATCH: async (c) => {
      readParams(c.req.url, ['local']);
      const id = entityIdParam(c);
      const name = attrNameParam(c);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth, allowMergePatch: true });
      const ctx = await contexts.resolve(body.context);
      const attr = ctx.expandTerm(name);
      const fragment = parseAttributeFragment(body.body, ctx, { now: entities.now(), attr });
      return distributedWrite(c, deps, {
        op: 'updateAttrs', selector: { id, attrs: [attr] }, method: 'PATCH', path: entityPath(id, `/attrs/${encodeURIComponent(name)}`),
        payload: body.body, ctx,
      }, async () => {
        await entities.update(actorOf(c), id, (current, now) => updateAttributePartial(current, attr, fragment, now));
        return noContent();
      });
    },
    // NGSI-LD §6.7.3.3 Replace Attribute
    PUT: async (c) => {
      readParams(c.req.url, ['local']);
      const id = entityIdParam(c);
      const name = attrNameParam(c);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth });
      const ctx = await contexts.resolve(body.context);
      const attr = ctx.expandTerm(name);
      // NOTE: some clients send the attribute keyed by its name ({"speed": {...}}): taken as the attribute.
      const doc = body.body as Record<string, unknown>;
      const raw = doc['type'] === undefined && typeof doc[name] === 'object' && doc[name] !== null ? doc[name] : body.body;
      const parsed = parseAttributes({ [name]: raw }, ctx, { now: entities.now(), allowNull: false });
      const instances = parsed[attr];
      if (!Array.isArray(instances) || instances.length !== 1) {
        throw new BadRequestDataError('The body must be one attribute');
      }
      const attribute = instances[0]!;
      return distributedWrite(c, deps, {
        op: 'replaceAttrs', selector: { id, attrs: [attr] }, method: 'PUT', path: entityPath(id, `/attrs/${encodeURIComponent(name)}`),
        payload: raw, ctx,
      }, async () => {
        await entities.update(actorOf(c), id, (current, now) => replaceAttribute(current, attr, attribute, now));
        return noContent();
      });
    },
    // NGSI-LD §6.7.3.2 Delete Attribute
    DELETE: async (c) => {
      const params = readParams(c.req.url, ['datasetId', 'deleteAll', 'local']);
      const id = entityIdParam(c);
      const name = attrNameParam(c);
      const ctx = await linkContext(c, deps);
      const attr = ctx.expandTerm(name);
      const datasetId = params.get('datasetId');
      const deleteAll = bool(params, 'deleteAll');
      if (datasetId !== undefined && deleteAll) throw new BadRequestDataError('datasetId and deleteAll=true exclude each other');
      const query = new URLSearchParams();
      if (datasetId !== undefined) query.set('datasetId', datasetId);
      if (deleteAll) query.set('deleteAll', 'true');
      return distributedWrite(c, deps, {
        op: 'deleteAttrs', selector: { id, attrs: [attr] }, method: 'DELETE', path: entityPath(id, `/attrs/${encodeURIComponent(name)}`), query, ctx,
      }, async () => {
        await entities.update(actorOf(c), id, (current, now) =>
          deleteAttribute(current, attr, { ...(datasetId !== undefined ? { datasetId } : {}), deleteAll, now }));
        return noContent();
      });
    },
  });
}
