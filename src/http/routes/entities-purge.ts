// DELETE /entities (NGSI-LD §5.6.21 Delete Entities): deletes every live entity of a
// selection by type, id and idPattern, as batch deletes; the other selectors are not implemented (501).

import { BadRequestDataError, compileIdPattern, isAbsoluteUri, type EntityFilter } from '../../ngsi/index.js';
import type { Actor, PurgeSelection } from '../../entities/index.js';
import type { AppContext, AppDeps } from '../app.js';
import { contextFromLink } from '../media.js';
import { csv, readParams } from '../params.js';
import { noContent } from '../respond.js';

/** Selectors of §5.6.21 edgeld does not implement for deletion. */
const UNIMPLEMENTED = ['q', 'attrs', 'scopeQ', 'georel', 'geometry', 'coordinates', 'geoproperty', 'geoQ', 'local'];

function idPatternFilter(pattern: string): EntityFilter {
  try {
    compileIdPattern(pattern);
  } catch (err) {
    throw new BadRequestDataError('Invalid idPattern', err instanceof Error ? err.message : pattern);
  }
  return { kind: 'idPattern', pattern };
}

/** Answers 204 once every selected entity is deleted; a selection is required (no accidental wipe). */
export async function purgeEntities(c: AppContext, deps: AppDeps, actor: Actor): Promise<Response> {
  const params = readParams(c.req.url, ['type', 'id', 'idPattern'], UNIMPLEMENTED);
  const typeNames = csv(params, 'type');
  const ids = csv(params, 'id');
  const pattern = params.get('idPattern');
  if (!typeNames && !ids && pattern === undefined) {
    throw new BadRequestDataError('Deleting entities needs a selection', 'Give type, id or idPattern');
  }
  if (typeNames?.some((t) => /[;|()]/.test(t))) {
    throw new BadRequestDataError('Type selections with ; | or parentheses are not supported here', 'Use a comma-separated list of types');
  }
  for (const id of ids ?? []) if (!isAbsoluteUri(id)) throw new BadRequestDataError(`Invalid entity id '${id}'`);
  const selection: PurgeSelection = {};
  if (typeNames && !typeNames.includes('*')) {
    const ctx = await deps.contexts.resolve(contextFromLink(c.req.header('link')));
    selection.types = typeNames.map((t) => ctx.expandTerm(t));
  }
  if (ids) selection.ids = ids;
  if (pattern !== undefined) selection.filters = [idPatternFilter(pattern)];
  await deps.batch.purge(actor, selection);
  return noContent();
}
