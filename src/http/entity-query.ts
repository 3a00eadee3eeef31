// The entity filters of Query Entities (NGSI-LD §5.7.2, §6.4.3.2) and of the POST query body
// (§5.2.23 Query): type selection, id, idPattern, attrs, q, geo-query, scopeQ and local, turned into
// one store query. Shared by entity and temporal queries.

import { bool, csv, type Params } from './params.js';
import { checkAttrName } from './retrieval.js';
import {
  BadRequestDataError, InvalidRequestError, compileIdPattern, hasGeoQueryMembers, isAbsoluteUri, parseGeoQuery, parseQ, parseScopeQ,
  parseTypeSelection, type EntityFilter, type GeoQueryInput, type Iri, type TermMapper,
} from '../ngsi/index.js';

/** One entry of `entities` in a POST query, or the type/id/idPattern parameters of a GET. */
export interface QuerySelectorInput {
  type?: string | undefined;
  id?: string | string[] | undefined;
  idPattern?: string | undefined;
}

export interface EntityQueryInput {
  selectors: QuerySelectorInput[];
  attrs?: string[] | undefined;
  q?: string | undefined;
  geo?: GeoQueryInput | undefined;
  scopeQ?: string | undefined;
  local?: boolean | undefined;
}

/** What the store needs (any-of types and ids, attributes, and the other filters). */
export interface EntityQuery {
  types?: Iri[];
  ids?: string[];
  attrs?: Iri[];
  filters: EntityFilter[];
}

function checkId(id: string): string {
  if (!isAbsoluteUri(id)) throw new BadRequestDataError(`Invalid entity id '${id}'`);
  return id;
}

function checkPattern(pattern: string): string {
  try {
    compileIdPattern(pattern);
  } catch (err) {
    throw new BadRequestDataError(`Invalid idPattern '${pattern}'`, err instanceof Error ? err.message : undefined);
  }
  return pattern;
}

/** The filters of one selector (AND); types as plain IRIs when the selection is a simple list. */
function selectorFilters(sel: QuerySelectorInput, mapper: TermMapper): { types?: Iri[]; ids?: string[]; filters: EntityFilter[] } {
  const out: { types?: Iri[]; ids?: string[]; filters: EntityFilter[] } = { filters: [] };
  if (sel.type !== undefined && sel.type.trim() !== '*') {
    const expr = parseTypeSelection(sel.type, mapper);
    if (expr !== '*') {
      if (expr.kind === 'type') out.types = [expr.iri];
      else if (expr.kind === 'or' && expr.terms.every((t) => t.kind === 'type')) {
        out.types = expr.terms.flatMap((t) => (t.kind === 'type' ? [t.iri] : []));
      } else out.filters.push({ kind: 'types', expr });
    }
  }
  if (sel.id !== undefined) out.ids = (Array.isArray(sel.id) ? sel.id : [sel.id]).map(checkId);
  if (sel.idPattern !== undefined) out.filters.push({ kind: 'idPattern', pattern: checkPattern(sel.idPattern) });
  return out;
}

/**
 * Builds the store query. NGSI-LD §5.7.2: one of type, attrs, q, geo-query or local=true is required
 * (an `entities` selector carries a type). Several selectors (POST body) are alternatives.
 */
export function buildEntityQuery(input: EntityQueryInput, mapper: TermMapper): EntityQuery {
  const hasGeo = input.geo !== undefined && hasGeoQueryMembers(input.geo);
  const hasType = input.selectors.some((s) => s.type !== undefined);
  if (!hasType && !input.attrs && input.q === undefined && !hasGeo && input.local !== true) {
    throw new BadRequestDataError('A query needs one of type, attrs, q, a geo-query or local=true');
  }
  const query: EntityQuery = { filters: [] };
  const selectors = input.selectors.map((s) => selectorFilters(s, mapper));
  if (selectors.length === 1) {
    const [only] = selectors;
    if (only?.types) query.types = only.types;
    if (only?.ids) query.ids = only.ids;
    query.filters.push(...(only?.filters ?? []));
  } else if (selectors.length > 1) {
    query.filters.push({
      kind: 'anyOf',
      alternatives: selectors.map((s) => [
        ...(s.types ? [{ kind: 'typeIris' as const, iris: s.types }] : []),
        ...(s.ids ? [{ kind: 'ids' as const, ids: s.ids }] : []),
        ...s.filters,
      ]),
    });
  }
  if (input.attrs) query.attrs = input.attrs.map((a) => mapper.expandTerm(checkAttrName(a)));
  if (input.q !== undefined) query.filters.push({ kind: 'q', expr: parseQ(input.q, mapper) });
  if (input.scopeQ !== undefined) query.filters.push({ kind: 'scopeQ', expr: parseScopeQ(input.scopeQ) });
  if (hasGeo && input.geo) query.filters.push({ kind: 'geo', query: parseGeoQuery(input.geo, mapper) });
  return query;
}

/** Reads the `entities` member of a POST query body (§5.2.23): an array of EntitySelector. */
export function selectorsFromBody(value: unknown): QuerySelectorInput[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length === 0) throw new BadRequestDataError('entities must be a non-empty array of EntitySelector');
  return value.map((v, i) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new BadRequestDataError(`entities[${i}] must be an object`);
    const sel = v as Record<string, unknown>; // NOTE: checked to be a plain object just above
    for (const k of Object.keys(sel)) {
      if (!['type', 'id', 'idPattern'].includes(k)) throw new BadRequestDataError(`entities[${i}] has an unknown member '${k}'`);
    }
    const out: QuerySelectorInput = {};
    if (typeof sel['type'] !== 'string') throw new BadRequestDataError(`entities[${i}].type must be a string`);
    out.type = sel['type'];
    if (sel['id'] !== undefined) {
      if (typeof sel['id'] !== 'string') throw new BadRequestDataError(`entities[${i}].id must be a string`);
      out.id = sel['id'];
    }
    if (sel['idPattern'] !== undefined) {
      if (typeof sel['idPattern'] !== 'string') throw new BadRequestDataError(`entities[${i}].idPattern must be a string`);
      out.idPattern = sel['idPattern'];
    }
    return out;
  });
}

/** A string member of a query body, or undefined. */
export function stringMember(body: Record<string, unknown>, name: string): string | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new BadRequestDataError(`${name} must be a string`);
  return v;
}

/** A list member given as an array of strings or a comma-separated string. */
export function listMember(body: Record<string, unknown>, name: string): string[] | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  const items = typeof v === 'string' ? v.split(',') : v;
  if (!Array.isArray(items) || !items.every((s) => typeof s === 'string' && s.trim() !== '')) {
    throw new InvalidRequestError(`${name} must be a list of names`);
  }
  return items.map((s: string) => s.trim());
}

/** The URL query parameters that carry entity filters (Query Entities, temporal query). */
export const ENTITY_QUERY_PARAMS = [
  'type', 'id', 'idPattern', 'attrs', 'q', 'georel', 'geometry', 'coordinates', 'geoproperty', 'scopeQ', 'local',
] as const;

/** The entity filters given as URL parameters (GET), not yet checked. */
export function entityQueryInputFromParams(params: Params): EntityQueryInput {
  return {
    selectors: [{ type: params.get('type'), id: csv(params, 'id'), idPattern: params.get('idPattern') }],
    attrs: csv(params, 'attrs'),
    q: params.get('q'),
    geo: { georel: params.get('georel'), geometry: params.get('geometry'), coordinates: params.get('coordinates'), geoproperty: params.get('geoproperty') },
    scopeQ: params.get('scopeQ'),
    local: bool(params, 'local'),
  };
}

/** The store query of the entity filters given as URL parameters (GET). */
export function entityQueryFromParams(params: Params, mapper: TermMapper): EntityQuery {
  return buildEntityQuery(entityQueryInputFromParams(params), mapper);
}
