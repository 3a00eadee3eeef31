// Distances on the WGS84 sphere for `near` geo-queries (NGSI-LD §4.10): haversine between points, and
// the minimum distance from a point to any geometry, whose edges are straight in lon/lat (RFC 7946 §3.1.1).

import { assertNever } from '../model.js';
import type { Position, Shape } from './shapes.js';

/** Mean Earth radius (IUGG R1) in metres: the sphere NGSI-LD distances are measured on. */
export const EARTH_RADIUS_M = 6371008.8;

const RAD = Math.PI / 180;
/** Sampling step along an edge, in degrees, before refining around the closest sample. */
const SAMPLE_STEP_DEG = 1;
const MAX_SAMPLES = 360;
const REFINE_STEPS = 40;
const GOLDEN = (Math.sqrt(5) - 1) / 2;

/** Central angle in radians between two points given in degrees (haversine formula). */
function centralAngle(lon1: number, lat1: number, lon2: number, lat2: number): number {
  const sinLat = Math.sin((lat2 - lat1) * RAD / 2);
  const sinLon = Math.sin((lon2 - lon1) * RAD / 2);
  const h = sinLat * sinLat + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * sinLon * sinLon;
  return 2 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Great-circle distance in metres between two positions. */
export function haversineMetres(a: Position, b: Position): number {
  return centralAngle(a[0], a[1], b[0], b[1]) * EARTH_RADIUS_M;
}

/** haversineMetres(a, [lon, lat]), without making the position: what distanceToShapeMetres gives for a Point. */
export function metresToPosition(a: Position, lon: number, lat: number): number {
  return centralAngle(a[0], a[1], lon, lat) * EARTH_RADIUS_M;
}

/**
 * Minimum central angle from p to the edge a→b, straight in lon/lat. The angle is not unimodal
 * along long edges near the poles, so the edge is sampled every degree first and the closest
 * sample's neighbourhood refined by golden-section search.
 */
function edgeAngle(p: Position, a: Position, b: Position): number {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const at = (t: number): number => centralAngle(p[0], p[1], a[0] + t * dx, a[1] + t * dy);
  const n = Math.min(MAX_SAMPLES, Math.max(1, Math.ceil(Math.max(Math.abs(dx), Math.abs(dy)) / SAMPLE_STEP_DEG)));
  let best = 0;
  let bestAngle = at(0);
  for (let i = 1; i <= n; i++) {
    const angle = at(i / n);
    if (angle < bestAngle) [best, bestAngle] = [i, angle];
  }
  let lo = Math.max(0, best - 1) / n;
  let hi = Math.min(n, best + 1) / n;
  let x1 = hi - GOLDEN * (hi - lo);
  let x2 = lo + GOLDEN * (hi - lo);
  let f1 = at(x1);
  let f2 = at(x2);
  for (let i = 0; i < REFINE_STEPS; i++) {
    if (f1 < f2) {
      [hi, x2, f2] = [x2, x1, f1];
      x1 = hi - GOLDEN * (hi - lo);
      f1 = at(x1);
    } else {
      [lo, x1, f1] = [x1, x2, f2];
      x2 = lo + GOLDEN * (hi - lo);
      f2 = at(x2);
    }
  }
  return Math.min(bestAngle, f1, f2);
}

/** A cheap lower bound of the angle from p to the edge: two points are at least their latitudes apart. */
function edgeLowerBound(p: Position, a: Position, b: Position): number {
  const lo = Math.min(a[1], b[1]);
  const hi = Math.max(a[1], b[1]);
  return (p[1] < lo ? lo - p[1] : p[1] > hi ? p[1] - hi : 0) * RAD;
}

/** Even-odd rule over all rings, so holes are outside; planar in lon/lat like the predicates. */
function isInsidePolygon(p: Position, rings: Position[][]): boolean {
  let inside = false;
  for (const ring of rings) {
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
      const a = ring[i];
      const b = ring[j];
      if (!a || !b) continue;
      if ((a[1] > p[1]) !== (b[1] > p[1]) && p[0] < ((b[0] - a[0]) * (p[1] - a[1])) / (b[1] - a[1]) + a[0]) {
        inside = !inside;
      }
    }
  }
  return inside;
}

/** The smallest central angle from p to any part of shape, ending early once it is ≤ stopAt. */
function closestAngle(p: Position, shape: Shape, stopAt: number): number {
  let best = Infinity;
  const isDone = (): boolean => best <= stopAt;
  const toPoint = (q: Position): void => {
    best = Math.min(best, centralAngle(p[0], p[1], q[0], q[1]));
  };
  const toLine = (line: Position[]): void => {
    if (line.length === 1 && line[0]) toPoint(line[0]);
    for (let i = 1; i < line.length && !isDone(); i++) {
      const a = line[i - 1];
      const b = line[i];
      if (a && b && edgeLowerBound(p, a, b) < best) best = Math.min(best, edgeAngle(p, a, b));
    }
  };
  const toPolygon = (rings: Position[][]): void => {
    if (isInsidePolygon(p, rings)) best = 0;
    for (const ring of rings) if (!isDone()) toLine(ring);
  };
  const toShape = (g: Shape): void => {
    switch (g.type) {
      case 'Point': toPoint(g.coordinates); return;
      case 'MultiPoint': for (const q of g.coordinates) toPoint(q); return;
      case 'LineString': toLine(g.coordinates); return;
      case 'MultiLineString': for (const l of g.coordinates) if (!isDone()) toLine(l); return;
      case 'Polygon': toPolygon(g.coordinates); return;
      case 'MultiPolygon': for (const r of g.coordinates) if (!isDone()) toPolygon(r); return;
      case 'GeometryCollection': for (const m of g.geometries) if (!isDone()) toShape(m); return;
      default: assertNever(g, 'geometry');
    }
  };
  toShape(shape);
  return best;
}

/**
 * The minimum distance in metres from `point` to `shape` (0 when the point lies inside a polygon).
 * With `stopAt`, the walk may end early at the first distance found that is ≤ stopAt: the result is
 * then an upper bound that is itself ≤ stopAt, which is all a threshold test needs.
 */
export function distanceToShapeMetres(point: Position, shape: Shape, stopAt = -1): number {
  return closestAngle(point, shape, stopAt / EARTH_RADIUS_M) * EARTH_RADIUS_M;
}
