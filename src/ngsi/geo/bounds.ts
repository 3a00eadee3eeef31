// Bounding boxes in lon/lat degrees: of a geometry (edges are straight in lon/lat, RFC 7946 §3.1.1,
// so the vertices bound it), and of the region within a distance of a point on the sphere.

import { EARTH_RADIUS_M } from './distance.js';
import { positionsOf, type Position, type Shape } from './shapes.js';

export interface Bounds {
  minLon: number;
  maxLon: number;
  minLat: number;
  maxLat: number;
}

const DEG = 180 / Math.PI;
/** Slack on the search radius: 0.1 % plus about 1 cm, far beyond the rounding of the math below. */
const RELATIVE_MARGIN = 1e-3;
const ABSOLUTE_MARGIN_M = 0.01;

/** The bounding box of a shape's positions; undefined for an empty collection. */
export function shapeBounds(shape: Shape): Bounds | undefined {
  let b: Bounds | undefined;
  for (const [lon, lat] of positionsOf(shape)) {
    if (!b) b = { minLon: lon, maxLon: lon, minLat: lat, maxLat: lat };
    else {
      b.minLon = Math.min(b.minLon, lon);
      b.maxLon = Math.max(b.maxLon, lon);
      b.minLat = Math.min(b.minLat, lat);
      b.maxLat = Math.max(b.maxLat, lat);
    }
  }
  return b;
}

/**
 * Boxes that together cover every point within `metres` of `center` on the sphere (a spherical
 * cap), with a safety margin. A cap reaching a pole spans every longitude; a cap crossing the
 * antimeridian is split into two boxes, one each side of ±180°.
 */
export function nearBounds(center: Position, metres: number): Bounds[] {
  const [lon, lat] = center;
  const r = (metres * (1 + RELATIVE_MARGIN) + ABSOLUTE_MARGIN_M) / EARTH_RADIUS_M;
  const rDeg = r * DEG;
  const minLat = lat - rDeg;
  const maxLat = lat + rDeg;
  if (minLat <= -90 || maxLat >= 90) {
    return [{ minLon: -180, maxLon: 180, minLat: Math.max(-90, minLat), maxLat: Math.min(90, maxLat) }];
  }
  // The widest longitude span of a cap of angular radius r centred at latitude φ: asin(sin r / cos φ).
  const ratio = Math.sin(r) / Math.cos(lat / DEG);
  if (!(ratio < 1)) return [{ minLon: -180, maxLon: 180, minLat, maxLat }];
  const dLon = Math.asin(ratio) * DEG;
  const west = lon - dLon;
  const east = lon + dLon;
  if (west < -180) return [{ minLon: west + 360, maxLon: 180, minLat, maxLat }, { minLon: -180, maxLon: east, minLat, maxLat }];
  if (east > 180) return [{ minLon: west, maxLon: 180, minLat, maxLat }, { minLon: -180, maxLon: east - 360, minLat, maxLat }];
  return [{ minLon: west, maxLon: east, minLat, maxLat }];
}
