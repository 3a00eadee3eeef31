// Geo-query filters (NGSI-LD §4.10) in SQL: an R*Tree prefilter on bounding boxes, then the exact
// predicate through ngsi_geo() (or, for `near` on a single position, ngsi_geo_point() over the shape
// index), so paging and counts stay exact.

import type BetterSqlite3 from 'better-sqlite3';
import {
  compileGeoQuery, nearBounds, shapeBounds, type Bounds, type EntityFilter, type GeoMatcher, type GeoQuery,
} from '../../ngsi/index.js';
import { MATCH_NOTHING, type FilterContext, type SqlFragment } from '../sql-fragment.js';

/**
 * Slack in degrees around every search box: the R*Tree keeps 32-bit floats (a step of ~1.5e-5° at
 * ±180°, rounded outwards), and a geometry touching the box's edge must still reach the exact test.
 */
const BOX_SLACK_DEG = 1e-4;
const MATCHER_CACHE_SIZE = 64;

/** How a candidate's box relates to a search box: inside it, around it, both, or overlapping it. */
type BoxMode = 'inside' | 'around' | 'same' | 'overlap';
type Constraint = [column: 'minLon' | 'maxLon' | 'minLat' | 'maxLat', op: '<=' | '>=', value: number];

/**
 * The boxes that bound every match, and how: a match within the query geometry has its box inside
 * the query's box, one containing it has its box around it, an equal one has the same box. None
 * bounds disjoint or minDistance matches.
 */
function searchBoxes(query: GeoQuery): { mode: BoxMode; boxes: Bounds[] } | undefined {
  if (query.georel === 'near') {
    return query.distance.bound === 'maxDistance'
      ? { mode: 'overlap', boxes: nearBounds(query.geometry.coordinates, query.distance.metres) }
      : undefined;
  }
  const bounds = shapeBounds(query.geometry);
  if (!bounds) return undefined;
  switch (query.georel) {
    case 'within': return { mode: 'inside', boxes: [bounds] };
    case 'contains': return { mode: 'around', boxes: [bounds] };
    case 'equals': return { mode: 'same', boxes: [bounds] };
    case 'intersects': case 'overlaps': return { mode: 'overlap', boxes: [bounds] };
    case 'disjoint': return undefined;
  }
}

/** R*Tree constraints on a candidate box for one search box, each widened by the slack. */
function constraints(mode: BoxMode, b: Bounds): Constraint[] {
  const s = BOX_SLACK_DEG;
  switch (mode) {
    case 'inside':
      return [['minLon', '>=', b.minLon - s], ['maxLon', '<=', b.maxLon + s], ['minLat', '>=', b.minLat - s], ['maxLat', '<=', b.maxLat + s]];
    case 'around':
      return [['minLon', '<=', b.minLon + s], ['maxLon', '>=', b.maxLon - s], ['minLat', '<=', b.minLat + s], ['maxLat', '>=', b.maxLat - s]];
    case 'same':
      return [...constraints('inside', b), ...constraints('around', b)];
    case 'overlap':
      return [['minLon', '<=', b.maxLon + s], ['maxLon', '>=', b.minLon - s], ['minLat', '<=', b.maxLat + s], ['maxLat', '>=', b.minLat - s]];
  }
}

/** SQL functions of geo-queries, registered once per connection. */
export function registerGeoSqlFunctions(db: BetterSqlite3.Database): void {
  const matchers = new Map<string, GeoMatcher>();
  // NOTE: every row of a statement passes the same query text; comparing it with the last one is
  // cheaper than hashing it again for the map.
  let last: { queryJson: string; matcher: GeoMatcher } | undefined;
  const matcherOf = (queryJson: string): GeoMatcher => {
    if (last?.queryJson === queryJson) return last.matcher;
    let matcher = matchers.get(queryJson);
    if (!matcher) {
      // The text is a bound parameter that translateGeoFilter wrote from a parsed GeoQuery.
      matcher = compileGeoQuery(JSON.parse(queryJson) as GeoQuery);
      if (matchers.size >= MATCHER_CACHE_SIZE) matchers.clear();
      matchers.set(queryJson, matcher);
    }
    last = { queryJson, matcher };
    return matcher;
  };
  // ngsi_geo(query JSON, the geoproperty's instances as JSON): 1 when any instance matches.
  db.function('ngsi_geo', { deterministic: true }, (queryJson: unknown, instancesJson: unknown) => {
    // json_extract() gives the instances array as JSON text, or NULL when the entity lacks the attribute.
    if (typeof queryJson !== 'string' || typeof instancesJson !== 'string' || !instancesJson.startsWith('[')) return 0;
    const instances: unknown = JSON.parse(instancesJson);
    return matcherOf(queryJson).matchesInstances(instances) ? 1 : 0;
  });
  // ngsi_geo_point(query JSON, lon, lat): 1 when a GeoProperty instance at that one position matches.
  db.function('ngsi_geo_point', { deterministic: true }, (queryJson: unknown, lon: unknown, lat: unknown) => {
    if (typeof queryJson !== 'string' || typeof lon !== 'number' || typeof lat !== 'number') return 0;
    return matcherOf(queryJson).matchesPosition(lon, lat) ? 1 : 0;
  });
}

/**
 * The exact `near` test of one candidate shape `s`: a shape whose box is a single position lies all at
 * that position (a Point, or a degenerate shape), so its distance is that position's, taken from the
 * box columns (exact doubles) without parsing the document. Other shapes read their entity's document.
 */
function nearOfShape(queryParam: string, docTest: string): string {
  const isPosition = 's.min_lon = s.max_lon AND s.min_lat = s.max_lat';
  return `CASE WHEN ${isPosition} THEN ngsi_geo_point(${queryParam}, s.min_lon, s.min_lat) ELSE ${docTest} END`;
}

/**
 * NGSI-LD §4.10 geo-query: candidates from the R*Tree (or, without a bounding box, every entity with
 * a GeoProperty instance of the geoproperty), then the exact predicate on the stored instances.
 * NOTE: a candidate's shape row is found by the R*Tree row's id (the shape's own), and its entity and
 * attribute read there: the R*Tree's auxiliary columns (entity, attr) are not read, as each read of
 * them is a look-up in a table of its own (that halved the candidate search). A `near` candidate is
 * tested inside the list, so the entities walked are the matches only.
 */
export function translateGeoFilter(filter: EntityFilter, ctx: FilterContext): SqlFragment | undefined {
  if (filter.kind !== 'geo') return undefined;
  const { query } = filter;
  const attr = ctx.iris.lookup(query.geoproperty);
  if (attr === undefined) return MATCH_NOTHING;
  const params: Record<string, unknown> = {};
  const bind = (prefix: string, value: unknown): string => {
    const name = ctx.param(prefix);
    params[name] = value;
    return `@${name}`;
  };
  const attrParam = bind('geoa', attr);
  const queryParam = bind('geoq', JSON.stringify(query));
  // NOTE: parseGeoQuery guarantees the IRI is a URI, so it never holds the '"' that ends a path label.
  const pathParam = bind('geop', `$.attrs."${query.geoproperty}"`);
  const docTest = (doc: string): string => `ngsi_geo(${queryParam}, json_extract(${doc}, ${pathParam}))`;
  const isNear = query.georel === 'near';
  const search = searchBoxes(query);
  const candidates = (b: Bounds, mode: BoxMode): string => {
    const where = constraints(mode, b).map(([column, op, value]) => `g.${column} ${op} ${bind('geob', value)}`);
    const exact = isNear ? ` AND ${nearOfShape(queryParam, docTest('(SELECT x.doc FROM entities x WHERE x.rowid = s.entity)'))}` : '';
    return `SELECT s.entity FROM geo_index g CROSS JOIN geo_shapes s ON s.id = g.id WHERE ${where.join(' AND ')} AND s.attr = ${attrParam}${exact}`;
  };
  if (search) {
    const list = `e.rowid IN (${search.boxes.map((b) => candidates(b, search.mode)).join(' UNION ALL ')})`;
    return { sql: isNear ? list : `${list} AND ${docTest('e.doc')}`, params, isRowidList: true };
  }
  // No box bounds the matches (disjoint, minDistance): every entity with a shape of the geoproperty.
  const shapes = 'FROM geo_shapes s WHERE s.entity = e.rowid AND s.attr = ' + attrParam;
  if (isNear) return { sql: `EXISTS (SELECT 1 ${shapes} AND ${nearOfShape(queryParam, docTest('e.doc'))})`, params };
  return { sql: `EXISTS (SELECT 1 ${shapes}) AND ${docTest('e.doc')}`, params };
}
