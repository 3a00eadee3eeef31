// Geo-queries (NGSI-LD §4.10): parsing, evaluation, distances and bounding boxes. Re-exported by
// ngsi/index.ts, the module's public surface.

export {
  MAX_GEO_QUERY_POSITIONS, hasGeoQueryMembers, parseGeoQuery, type GeoQuery, type GeoQueryInput, type NearDistance,
} from './query.js';
export { compileGeoQuery, matchesGeo, type GeoMatcher } from './match.js';
export { distanceToShapeMetres, haversineMetres } from './distance.js';
export { nearBounds, shapeBounds, type Bounds } from './bounds.js';
export { toShape, type Position, type QueryShape, type Shape } from './shapes.js';
export type { TopologicalRelation } from './jts.js';
