// DELETE /entities (NGSI-LD v1.9 §5.6.21 Purge Entities): every live entity of a selection (type, id,
// idPattern, attrs, q, scopeQ, geo-query, local) is deleted as by batch delete, or with `drop` /
// `keep` only some of its attributes are.

import { BadRequestDataError, type Iri, type Principal } from '../../ngsi/index.js';
import type { PurgeProjection } from '../../entities/index.js';
import type { AppContext, AppDeps } from '../app-env.js';
import { buildEntityQuery, ENTITY_QUERY_PARAMS, entityQueryInputFromParams } from '../entity-query.js';
import { contextFromLink } from '../media.js';
import { csv, readParams } from '../params.js';
import { noContent } from '../respond.js';
import { distributedWrite } from '../distributed.js';

/** Answers 204 once the selection is purged; a selection is required (no accidental wipe). */
export async function purgeEntities(c: AppContext, deps: AppDeps, actor: Principal): Promise<Response> {
  const params = readParams(c.req.url, [...ENTITY_QUERY_PARAMS, 'keep', 'drop']);
  if (!ENTITY_QUERY_PARAMS.some((p) => params.get(p) !== undefined)) {
    throw new BadRequestDataError('Purging entities needs a selection', `Give one of ${ENTITY_QUERY_PARAMS.join(', ')}`);
  }
  const keep = csv(params, 'keep');
  const drop = csv(params, 'drop');
  if (keep && drop) throw new BadRequestDataError('keep and drop exclude each other', 'Give the attributes to keep, or those to drop');
  const ctx = await deps.contexts.resolve(contextFromLink(c.req.header('link')));
  // NOTE: an id or idPattern alone is a selection here, unlike in Query Entities (§5.7.2): local
  // stands in for the rule's other selectors (every query of this broker is local).
  const query = buildEntityQuery({ ...entityQueryInputFromParams(params), local: true }, ctx);
  const expand = (names: string[]): Iri[] => names.map((n) => ctx.expandTerm(n));
  const projection: PurgeProjection | undefined = keep ? { keep: expand(keep) } : drop ? { drop: expand(drop) } : undefined;
  // NGSI-LD §5.6.21 with matching registrations: the same selection goes to the sources (by type).
  const forwarded = new URL(c.req.url).searchParams;
  forwarded.delete('local');
  return distributedWrite(c, deps, {
    op: 'purgeEntity', selector: query.types ? { types: query.types } : {}, method: 'DELETE', path: '/ngsi-ld/v1/entities', query: forwarded, ctx,
  }, async () => {
    await deps.batch.purge(actor, query, projection);
    return noContent();
  });
}
