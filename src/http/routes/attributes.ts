// Routes of the attributes resource (NGSI-LD §6.27-6.28, §5.7.8-5.7.9): the attribute names of
// live entities, with details (kinds, entity types, instance count) on request or for one name.

import { BadRequestDataError, nameProblem, type Iri, type Json, type TermMapper } from '../../ngsi/index.js';
import type { AttributeInfo } from '../../entities/index.js';
import { resource, type App, type AppContext, type AppDeps } from '../app-env.js';
import { APP_JSON, APP_LD_JSON, negotiate, type ResponseMediaType } from '../media.js';
import { bool, readParams } from '../params.js';
import { BASE, sendPayload } from '../respond.js';
import { actorOf, linkContext } from '../request-context.js';

/** Discovery answers are JSON or JSON-LD; GeoJSON has nothing to show (406). */
const DISCOVERY_MEDIA = [APP_JSON, APP_LD_JSON] as const;

/** Compact names (the request context's terms, else the expanded IRI), sorted. */
export function compactNames(iris: readonly Iri[], ctx: TermMapper): string[] {
  return iris.map((i) => ctx.compactIri(i)).sort();
}

/** The name in a discovery path, checked like any attribute or type name (NGSI-LD §4.6.2). */
export function nameParam(c: AppContext, param: string): string {
  const name = c.req.param(param) ?? '';
  const problem = nameProblem(name);
  if (problem !== undefined) throw new BadRequestDataError('Invalid name', problem);
  return name;
}

/** The discovery parameters: `details`, and `local` (this broker only holds local entities). */
export function discoveryParams(c: AppContext, withDetails: boolean): { details: boolean; mediaType: ResponseMediaType } {
  const params = readParams(c.req.url, withDetails ? ['details', 'local'] : ['local']);
  bool(params, 'local');
  return { details: bool(params, 'details'), mediaType: negotiate(c.req.header('accept'), DISCOVERY_MEDIA) };
}

/**
 * An Attribute (NGSI-LD §5.2.28). NOTE: attributeCount counts attribute instances, as §5.2.28 words
 * it: every datasetId instance of the attribute in every live entity.
 */
function renderAttribute(info: AttributeInfo, ctx: TermMapper): Json {
  return {
    id: info.attr,
    type: 'Attribute',
    attributeName: ctx.compactIri(info.attr),
    attributeTypes: info.kinds,
    typeNames: compactNames(info.types, ctx),
    attributeCount: info.instanceCount,
  };
}

const byName = (a: AttributeInfo, b: AttributeInfo, ctx: TermMapper): number => {
  const x = ctx.compactIri(a.attr);
  const y = ctx.compactIri(b.attr);
  return x < y ? -1 : x > y ? 1 : 0;
};

export function registerAttributeRoutes(app: App, deps: AppDeps): void {
  const { discovery } = deps;

  resource(app, `${BASE}/attributes`, {
    // NGSI-LD §6.27.3.1 Retrieve Available Attributes (§5.7.8), details=true: §5.7.9
    GET: async (c) => {
      const { details, mediaType } = discoveryParams(c, true);
      const ctx = await linkContext(c, deps);
      if (details) {
        const infos = discovery.attributeDetails(actorOf(c)).sort((a, b) => byName(a, b, ctx));
        return sendPayload(c, infos.map((i) => renderAttribute(i, ctx)), ctx, mediaType);
      }
      const list = discovery.attributeList(actorOf(c));
      return sendPayload(c, { id: list.id, type: 'AttributeList', attributeList: compactNames(list.names, ctx) }, ctx, mediaType);
    },
  });

  resource(app, `${BASE}/attributes/:attr`, {
    // NGSI-LD §6.28.3.1 Retrieve Available Attribute Information (§5.7.9)
    GET: async (c) => {
      const { mediaType } = discoveryParams(c, false);
      const name = nameParam(c, 'attr');
      const ctx = await linkContext(c, deps);
      const info = discovery.attributeInfo(actorOf(c), ctx.expandTerm(name));
      return sendPayload(c, renderAttribute(info, ctx), ctx, mediaType);
    },
  });
}
