// Geo-queries as domain values (NGSI-LD §4.10): parsing georel, geometry, coordinates and geoproperty
// from the query parameters or the POST query body into a GeoQuery, or a precise 400.

import { BadRequestDataError, TooComplexQueryError } from '../errors.js';
import { checkGeometry, MAX_GEOMETRY_DEPTH } from '../geometry.js';
import { isNestedDeeper } from '../json.js';
import type { Iri } from '../model.js';
import { isAbsoluteUri, nameProblem } from '../names.js';
import type { TermMapper } from '../terms.js';
import { LOCATION } from '../vocab.js';
import { toJts, topologyProblem, type TopologicalRelation } from './jts.js';
import { QUERY_GEOMETRY_TYPES, countPositions, toShape, type PointShape, type QueryShape } from './shapes.js';

/** `near;maxDistance==d` keeps entities at most d metres away; `near;minDistance==d` at least d. */
export interface NearDistance {
  bound: 'maxDistance' | 'minDistance';
  metres: number;
}

/** A parsed geo-query: `entity geometry <georel> query geometry`, over the GeoProperty `geoproperty`. */
export type GeoQuery =
  | { georel: 'near'; distance: NearDistance; geometry: PointShape; geoproperty: Iri }
  | { georel: TopologicalRelation; geometry: QueryShape; geoproperty: Iri };

/** The members of a geo-query as they arrive: URL parameters (text) or a POST query's `geoQ` (JSON). */
export interface GeoQueryInput {
  georel?: unknown;
  geometry?: unknown;
  /** JSON text of the coordinates array, or the array itself. */
  coordinates?: unknown;
  geoproperty?: unknown;
}

/** Most positions a query geometry may hold; above it the query is TooComplexQuery. */
export const MAX_GEO_QUERY_POSITIONS = 10_000;

const TOPOLOGICAL: readonly TopologicalRelation[] = ['within', 'contains', 'intersects', 'disjoint', 'equals', 'overlaps'];
const NEAR = /^near;(maxDistance|minDistance)==(.*)$/;
const NUMBER = /^\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const GEOREL_FORMS = 'near;maxDistance==<metres>, near;minDistance==<metres>, ' + TOPOLOGICAL.join(', ');

/** Whether the input asks for a geo-query at all (any of georel, geometry, coordinates). */
export function hasGeoQueryMembers(input: GeoQueryInput): boolean {
  return input.georel !== undefined || input.geometry !== undefined || input.coordinates !== undefined;
}

type ParsedGeorel = { georel: 'near'; distance: NearDistance } | { georel: TopologicalRelation };

function parseGeorel(georel: unknown): ParsedGeorel {
  const text = typeof georel === 'string' ? georel : JSON.stringify(georel);
  const topological = TOPOLOGICAL.find((r) => r === georel);
  if (topological) return { georel: topological };
  const near = typeof georel === 'string' ? NEAR.exec(georel) : null;
  if (!near) throw new BadRequestDataError('Invalid georel', `'${text}' is not one of ${GEOREL_FORMS}`);
  const [, bound, amount = ''] = near;
  const metres = Number(amount);
  if (!NUMBER.test(amount) || !Number.isFinite(metres)) {
    throw new BadRequestDataError('Invalid georel', `the distance in '${text}' must be a non-negative number of metres`);
  }
  return { georel: 'near', distance: { bound: bound === 'minDistance' ? 'minDistance' : 'maxDistance', metres } };
}

function parseGeometryType(geometry: unknown): QueryShape['type'] {
  const type = QUERY_GEOMETRY_TYPES.find((t) => t === geometry);
  if (type) return type;
  const text = typeof geometry === 'string' ? geometry : JSON.stringify(geometry);
  throw new BadRequestDataError('Invalid geometry', `'${text}' is not one of ${QUERY_GEOMETRY_TYPES.join(', ')}`);
}

function readCoordinates(coordinates: unknown): unknown[] {
  let value = coordinates;
  if (typeof coordinates === 'string') {
    if (isNestedDeeper(coordinates, MAX_GEOMETRY_DEPTH)) {
      throw new BadRequestDataError('Invalid coordinates', `coordinates nest ${MAX_GEOMETRY_DEPTH} levels at most`);
    }
    try {
      value = JSON.parse(coordinates);
    } catch (err) {
      throw new BadRequestDataError('Invalid coordinates', 'coordinates must be a JSON array of positions', { cause: err });
    }
  }
  if (!Array.isArray(value)) throw new BadRequestDataError('Invalid coordinates', 'coordinates must be a JSON array of positions');
  return value;
}

/** The query geometry, checked for shape, ranges, closed rings, size and OGC validity (NGSI-LD §4.7). */
function parseShape(type: QueryShape['type'], coordinates: unknown[]): QueryShape {
  const positions = countPositions(type, coordinates);
  if (positions > MAX_GEO_QUERY_POSITIONS) {
    throw new TooComplexQueryError('Geometry too complex', `the ${type} has ${positions} positions; at most ${MAX_GEO_QUERY_POSITIONS} are allowed`);
  }
  const check = checkGeometry({ type, coordinates });
  if (!check.ok) throw new BadRequestDataError('Invalid coordinates', `not a valid ${type}: ${check.reason}`);
  const shape = toShape(check.geometry);
  const jts = shape && toJts(shape);
  const problem = jts ? topologyProblem(jts) : 'it cannot be built';
  if (problem !== undefined || shape?.type !== type) {
    throw new BadRequestDataError('Invalid coordinates', `not a valid ${type}: ${problem ?? 'unexpected shape'}`);
  }
  return shape;
}

function parseGeoproperty(geoproperty: unknown, mapper: TermMapper): Iri {
  if (geoproperty === undefined) return LOCATION;
  if (typeof geoproperty !== 'string') throw new BadRequestDataError('Invalid geoproperty', 'geoproperty must be an attribute name');
  const problem = nameProblem(geoproperty);
  if (problem) throw new BadRequestDataError('Invalid geoproperty', problem);
  const iri = mapper.expandTerm(geoproperty);
  // NOTE: the store addresses the attribute inside the JSON document by this IRI; a URI never holds '"'.
  if (!isAbsoluteUri(iri)) throw new BadRequestDataError('Invalid geoproperty', `'${geoproperty}' does not expand to an IRI`);
  return iri;
}

/**
 * Parses a geo-query (NGSI-LD §4.10). georel, geometry and coordinates must all be present;
 * geoproperty defaults to `location`. Throws BadRequestDataError naming what is wrong, or
 * TooComplexQueryError when the geometry has more than MAX_GEO_QUERY_POSITIONS positions.
 */
export function parseGeoQuery(input: GeoQueryInput, mapper: TermMapper): GeoQuery {
  const missing = (['georel', 'geometry', 'coordinates'] as const).filter((m) => input[m] === undefined);
  if (missing.length > 0) {
    throw new BadRequestDataError('Incomplete geo-query', `georel, geometry and coordinates go together; missing: ${missing.join(', ')}`);
  }
  const rel = parseGeorel(input.georel);
  const type = parseGeometryType(input.geometry);
  const geometry = parseShape(type, readCoordinates(input.coordinates));
  const geoproperty = parseGeoproperty(input.geoproperty, mapper);
  if (rel.georel !== 'near') return { georel: rel.georel, geometry, geoproperty };
  if (geometry.type !== 'Point') {
    throw new BadRequestDataError('Invalid geo-query', `georel near needs a Point geometry, not a ${geometry.type}`);
  }
  return { georel: 'near', distance: rel.distance, geometry, geoproperty };
}
