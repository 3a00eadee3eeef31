// The pure NGSI-LD domain: vocabulary, error catalogue, entity model, parsing of compact input,
// update rules and representations. Other modules import from here only.

export * from './model.js';
export * from './vocab.js';
export * from './terms.js';
export * from './errors.js';

export type {
  AttributeDeletion, AttributeFragment, AttributeInput, AttributeInputs, ExpiresAt, EntityFragment, EntityMembers, FragmentInput, FragmentValue,
  PayloadMember,
} from './fragment.js';
export { isDeletion } from './fragment.js';
export {
  assertSameEntityId, parseAttribute, parseAttributeFragment, parseAttributes, parseEntity, parseEntityFragment, parseEntityMembers,
  type ParseOptions,
} from './parse.js';

export type { Change, NotUpdated, UpdateOutcome } from './draft.js';
export {
  appendAttributes, deleteAttribute, dropAttributes, mergeEntity, replaceAttribute, replaceEntity, updateAttributePartial,
  updateAttributes,
} from './update.js';

export { expiryOf, isExpired } from './expiry.js';
export { renderEntity, type RenderOptions, type RepresentationFormat } from './render.js';
export { isProjected, parseProjection, type Member, type ProjectionTree } from './projection.js';
export { followLinks, type LinkedLoader, type Reached } from './linked-entities.js';
export {
  compareOrderValues, orderValue, ordersByIdOnly, parseOrderBy, type OrderKey, type OrderValue,
} from './order-by.js';
export { renderFeatureCollection, renderGeoJson, type GeoJsonOptions } from './geojson.js';
export { isLanguagePreference, type LanguagePreference } from './lang.js';

export { checkGeometry, type Geometry, type GeometryCheck } from './geometry.js';
export { formatDateTime, isOutputForm, parseDateTime } from './time.js';
export { isAbsoluteUri, nameProblem } from './names.js';
/** Milliseconds of a fixed ISO 8601 duration (weeks to seconds), or undefined. */
export { parseFixedDuration } from './fixed-duration.js';
export { compactValueKeys, isNestedDeeper, isPlainObject, type JsonObject } from './json.js';
export { INSTANCE_PREFIX, instanceIdAt, instantOfInstanceId } from './instance-id.js';
export type { HistoryInstance } from './history-instance.js';
export { changesOfEntity, deletionsOfEntity, historyOfChanges } from './history-of-changes.js';
export { AUTHENTICATED_SUBJECT, PUBLIC_SUBJECT, anonymousIn, isTenantName, type Principal } from './principal.js';
export { observedHistory, withNewest, type ObservedInstance } from './newest.js';
export { nullPayloadOf } from './null-payload.js';
export { compileIdPattern, type EntityFilter } from './filters.js';
export { compilePattern, PatternSyntaxError, type Pattern } from './pattern.js';
export {
  MAX_GEO_QUERY_POSITIONS, compileGeoQuery, distanceToShapeMetres, hasGeoQueryMembers, haversineMetres,
  matchesGeo, nearBounds, parseGeoQuery, shapeBounds, toShape, type Bounds, type GeoMatcher, type GeoQuery,
  type GeoQueryInput, type NearDistance, type Position, type QueryShape, type Shape, type TopologicalRelation,
} from './geo/index.js';
export {
  DATE_SHAPE, Q_LIMITS, TIME_SHAPE, compileQPattern, evaluateQ, evaluateScopeQ, evaluateTypeSelection, instantOf,
  isInstantMember, isPlainPath, matchesFilter, parseQ, parseScopeQ, parseTypeSelection, scopeTermTest, splitOp,
  valueElements, type QCompareOp, type QElement, type QExpr, type QKey, type QMember, type QPath, type QPositiveOp,
  type QScalar, type QValue, type ScopeExpr, type ScopeTerm, type TypeExpr,
} from './query/index.js';

/** The temporal domain and its representations. */
export * from './temporal/index.js';
export {
  ACTIONS, NO_SCOPE, actionRank, entityFactsOf, isAction, type Action, type EntityFacts, type Permission, type PermissionTarget,
} from './permission.js';
