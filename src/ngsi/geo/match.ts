// Evaluation of a geo-query against entities (NGSI-LD §4.10): an entity matches when any GeoProperty
// instance of the geoproperty stands in the georel to the query geometry.

import type { Entity } from '../model.js';
import { isPlainObject } from '../json.js';
import { distanceToShapeMetres, metresToPosition } from './distance.js';
import { relate, toJts } from './jts.js';
import type { GeoQuery } from './query.js';
import { toShape } from './shapes.js';

/** A geo-query made ready to test many entities (the query geometry is built once). */
export interface GeoMatcher {
  matchesEntity(entity: Entity): boolean;
  /** The same test over the geoproperty's instances as stored JSON (an array of attributes). */
  matchesInstances(instances: unknown): boolean;
  /** The same test for a GeoProperty instance whose value is the Point [lon, lat]. */
  matchesPosition(lon: number, lat: number): boolean;
}

/** Whether one GeoProperty value matches; values that are no valid geometry never match. */
function valueTest(query: GeoQuery): (value: unknown) => boolean {
  if (query.georel === 'near') {
    const { bound, metres } = query.distance;
    const center = query.geometry.coordinates;
    // NOTE: a tiny margin below minDistance lets the walk stop at the first closer edge; a distance
    // of exactly minDistance still matches because the exact minimum is computed otherwise.
    const stopAt = bound === 'maxDistance' ? metres : metres * (1 - 1e-12) - 1e-9;
    return (value) => {
      const shape = toShape(value);
      if (!shape) return false;
      const d = distanceToShapeMetres(center, shape, stopAt);
      return bound === 'maxDistance' ? d <= metres : d >= metres;
    };
  }
  const relation = query.georel;
  const target = toJts(query.geometry);
  return (value) => {
    const shape = toShape(value);
    const subject = shape && toJts(shape);
    return subject !== undefined && target !== undefined && relate(relation, subject, target);
  };
}

/**
 * `near` for one position, from its coordinates: the distance valueTest computes for a Point, without
 * building and checking the geometry (a near query over a shape index tests every candidate this way).
 * A position outside the valid ranges takes the full test, and its geometry check.
 */
function nearPosition(query: Extract<GeoQuery, { georel: 'near' }>, full: (lon: number, lat: number) => boolean): (lon: number, lat: number) => boolean {
  const { bound, metres } = query.distance;
  const center = query.geometry.coordinates;
  return (lon, lat) => {
    if (!(lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90)) return full(lon, lat);
    const d = metresToPosition(center, lon, lat);
    return bound === 'maxDistance' ? d <= metres : d >= metres;
  };
}

/** Compiles a geo-query for repeated use. */
export function compileGeoQuery(query: GeoQuery): GeoMatcher {
  const test = valueTest(query);
  const pointTest = (lon: number, lat: number): boolean => test({ type: 'Point', coordinates: [lon, lat] });
  return {
    matchesPosition: query.georel === 'near' ? nearPosition(query, pointTest) : pointTest,
    matchesEntity: (entity) =>
      (entity.attrs[query.geoproperty] ?? []).some((a) => a.kind === 'GeoProperty' && test(a.value)),
    matchesInstances: (instances) =>
      Array.isArray(instances) && instances.some((a) => isPlainObject(a) && a.kind === 'GeoProperty' && test(a.value)),
  };
}

/** Whether the entity matches the geo-query (NGSI-LD §4.10). */
export function matchesGeo(query: GeoQuery, entity: Entity): boolean {
  return compileGeoQuery(query).matchesEntity(entity);
}
