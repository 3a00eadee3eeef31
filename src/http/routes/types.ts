// Routes of the entity types resource (NGSI-LD §6.25-6.26, §5.7.5-5.7.7): the types of live
// entities, with their attribute names on request, and the information of one type.

import type { Json, TermMapper } from '../../ngsi/index.js';
import type { TypeAttributes, TypeInfo } from '../../entities/index.js';
import { resource, type App, type AppDeps } from '../app-env.js';
import { BASE, sendPayload } from '../respond.js';
import { compactNames, discoveryParams, nameParam } from './attributes.js';
import { actorOf, linkContext } from '../request-context.js';

/** An EntityType (NGSI-LD §5.2.25). */
function renderType(t: TypeAttributes, ctx: TermMapper): { typeName: string; body: Json } {
  const typeName = ctx.compactIri(t.type);
  return { typeName, body: { id: t.type, type: 'EntityType', typeName, attributeNames: compactNames(t.attrs, ctx) } };
}

/** An EntityTypeInfo (NGSI-LD §5.2.26), its attributeDetails sorted by name. */
function renderTypeInfo(info: TypeInfo, ctx: TermMapper): Json {
  const attributeDetails = info.attrs
    .map((a) => ({ id: a.attr, type: 'Attribute', attributeName: ctx.compactIri(a.attr), attributeTypes: a.kinds }))
    .sort((a, b) => (a.attributeName < b.attributeName ? -1 : a.attributeName > b.attributeName ? 1 : 0));
  return { id: info.type, type: 'EntityTypeInfo', typeName: ctx.compactIri(info.type), entityCount: info.entityCount, attributeDetails };
}

export function registerTypeRoutes(app: App, deps: AppDeps): void {
  const { discovery } = deps;

  resource(app, `${BASE}/types`, {
    // NGSI-LD §6.25.3.1 Retrieve Available Entity Types (§5.7.5), details=true: §5.7.6
    GET: async (c) => {
      const { details, mediaType } = discoveryParams(c, true);
      const ctx = await linkContext(c, deps);
      if (details) {
        const types = discovery.typeDetails(actorOf(c)).map((t) => renderType(t, ctx));
        types.sort((a, b) => (a.typeName < b.typeName ? -1 : a.typeName > b.typeName ? 1 : 0));
        return sendPayload(c, types.map((t) => t.body), ctx, mediaType);
      }
      const list = discovery.typeList(actorOf(c));
      return sendPayload(c, { id: list.id, type: 'EntityTypeList', typeList: compactNames(list.names, ctx) }, ctx, mediaType);
    },
  });

  resource(app, `${BASE}/types/:type`, {
    // NGSI-LD §6.26.3.1 Retrieve Available Entity Type Information (§5.7.7)
    GET: async (c) => {
      const { mediaType } = discoveryParams(c, false);
      const name = nameParam(c, 'type');
      const ctx = await linkContext(c, deps);
      const info = discovery.typeInfo(actorOf(c), ctx.expandTerm(name));
      return sendPayload(c, renderTypeInfo(info, ctx), ctx, mediaType);
    },
  });
}
