// Distances and search boxes of near queries, checked against an independent haversine and brute
// force sampling written here.

import { describe, expect, it } from 'vitest';
import {
  distanceToShapeMetres, haversineMetres, LOCATION, nearBounds, parseGeoQuery, shapeBounds, toShape, type Bounds, type Entity,
  type Position, type Shape,
} from '../../../src/ngsi/index.js';
import { EDGE_CASES, EDGE_FIXTURES, LYON_CASES, LYON_FIXTURES } from '../../cases/geo-cases.js';
import { mapper } from '../fake-mapper.js';

const R = 6371008.8;
const rad = (deg: number): number => (deg * Math.PI) / 180;

/** Haversine in its atan2 form. */
function referenceMetres([lon1, lat1]: number[], [lon2, lat2]: number[]): number {
  const a = Math.sin(rad((lat2 ?? 0) - (lat1 ?? 0)) / 2) ** 2
    + Math.cos(rad(lat1 ?? 0)) * Math.cos(rad(lat2 ?? 0)) * Math.sin(rad((lon2 ?? 0) - (lon1 ?? 0)) / 2) ** 2;
  return 2 * R * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a));
}

/** Crossing-number test, edges straight in lon/lat. */
function isInside([x, y]: number[], rings: number[][][]): boolean {
  let crossings = 0;
  for (const ring of rings) {
    for (let i = 1; i < ring.length; i++) {
      const [x1 = 0, y1 = 0] = ring[i - 1] ?? [];
      const [x2 = 0, y2 = 0] = ring[i] ?? [];
      if ((y1 <= (y ?? 0)) !== (y2 <= (y ?? 0)) && (x ?? 0) < x1 + ((((y ?? 0) - y1) / (y2 - y1)) * (x2 - x1))) crossings++;
    }
  }
  return crossings % 2 === 1;
}

/** The smallest reference distance to 4000 points along every edge of a line. */
function bruteLine(p: number[], line: number[][]): number {
  let best = Infinity;
  for (let i = 0; i < line.length; i++) {
    const a = line[i] ?? [];
    const b = line[i + 1] ?? a;
    for (let k = 0; k <= 4000; k++) {
      const t = k / 4000;
      best = Math.min(best, referenceMetres(p, [(a[0] ?? 0) + t * ((b[0] ?? 0) - (a[0] ?? 0)), (a[1] ?? 0) + t * ((b[1] ?? 0) - (a[1] ?? 0))]));
    }
  }
  return best;
}

function bruteDistance(p: number[], shape: Shape): number {
  switch (shape.type) {
    case 'Point': return referenceMetres(p, shape.coordinates);
    case 'MultiPoint': return Math.min(...shape.coordinates.map((q) => referenceMetres(p, q)));
    case 'LineString': return bruteLine(p, shape.coordinates);
    case 'MultiLineString': return Math.min(...shape.coordinates.map((l) => bruteLine(p, l)));
    case 'Polygon': return isInside(p, shape.coordinates) ? 0 : Math.min(...shape.coordinates.map((r) => bruteLine(p, r)));
    case 'MultiPolygon': return Math.min(...shape.coordinates.map((poly) => bruteDistance(p, { type: 'Polygon', coordinates: poly })));
    case 'GeometryCollection': return Math.min(...shape.geometries.map((g) => bruteDistance(p, g)));
  }
}

const shapesOf = (e: Entity): Shape[] =>
  (e.attrs[LOCATION] ?? []).flatMap((a) => (a.kind === 'GeoProperty' ? [toShape(a.value)] : [])).filter((s) => s !== undefined);

const closeTo = (actual: number, reference: number): void => {
  expect(Math.abs(actual - reference)).toBeLessThanOrEqual(Math.max(0.005 * reference, 0.5));
};

describe('haversineMetres', () => {
  it('agrees with the reference between Lyon and Paris, across the antimeridian and over the pole', () => {
    const pairs: Array<[Position, Position]> = [
      [[4.8320, 45.7578], [2.2945, 48.8584]],
      [[179.99, 0], [-179.99, 0]],
      [[0, 89.99], [180, 89.99]],
      [[-73.9857, 40.7484], [151.2153, -33.8568]],
    ];
    for (const [a, b] of pairs) closeTo(haversineMetres(a, b), referenceMetres(a, b));
    // One degree of a meridian on the mean sphere: R·π/180.
    expect(haversineMetres([0, 0], [0, 1])).toBeCloseTo(111_195.08, 1);
  });
});

describe('distanceToShapeMetres', () => {
  const nearCases = [...LYON_CASES.map((c) => [c, LYON_FIXTURES] as const), ...EDGE_CASES.map((c) => [c, EDGE_FIXTURES] as const)]
    .filter(([c]) => typeof c.input.georel === 'string' && c.input.georel.startsWith('near'));

  for (const [c, fixtures] of nearCases) {
    it(`is within 0.5 % of brute force for every fixture, and the expected ids follow from it: ${c.name}`, () => {
      const query = parseGeoQuery(c.input, mapper);
      if (query.georel !== 'near') throw new Error('not a near case');
      const center = query.geometry.coordinates;
      const { bound, metres } = query.distance;
      const matching: string[] = [];
      for (const e of fixtures) {
        const distances = shapesOf(e).map((s) => {
          const reference = bruteDistance(center, s);
          closeTo(distanceToShapeMetres(center, s), reference);
          return reference;
        });
        if (distances.some((d) => (bound === 'maxDistance' ? d <= metres : d >= metres))) matching.push(e.id.split(':').pop() ?? '');
      }
      expect(matching).toEqual(c.expected);
    });
  }

  it('is 0 inside a polygon and the distance to the hole edge inside its hole', () => {
    const holed: Shape = { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], [[0.4, 0.4], [0.6, 0.4], [0.6, 0.6], [0.4, 0.6], [0.4, 0.4]]] };
    expect(distanceToShapeMetres([0.2, 0.2], holed)).toBe(0);
    closeTo(distanceToShapeMetres([0.5, 0.5], holed), referenceMetres([0.5, 0.5], [0.4, 0.5]));
  });

  it('follows long edges straight in lon/lat, also near the poles', () => {
    const line: Shape = { type: 'LineString', coordinates: [[-170, 80], [170, 80]] };
    const points: Position[] = [[0, 79], [175, 81], [-179, 85]];
    for (const p of points) closeTo(distanceToShapeMetres(p, line), bruteLine(p, line.coordinates));
  });

  it('may stop at the first distance under stopAt, and that distance is under it', () => {
    const points: Shape = { type: 'MultiPoint', coordinates: [[0, 0.01], [0, 0.001], [0, 0]] };
    const d = distanceToShapeMetres([0, 0], points, 2000);
    expect(d).toBeLessThanOrEqual(2000);
    expect(distanceToShapeMetres([0, 0], points)).toBe(0);
  });
});

/** The point `metres` away from `center` at `bearing` degrees, on the sphere. */
function destination([lon, lat]: Position, bearing: number, metres: number): Position {
  const d = metres / R;
  const phi = Math.asin(Math.sin(rad(lat)) * Math.cos(d) + Math.cos(rad(lat)) * Math.sin(d) * Math.cos(rad(bearing)));
  const dLon = Math.atan2(Math.sin(rad(bearing)) * Math.sin(d) * Math.cos(rad(lat)), Math.cos(d) - Math.sin(rad(lat)) * Math.sin(phi));
  const lon2 = ((lon + (dLon * 180) / Math.PI + 540) % 360) - 180;
  return [lon2, (phi * 180) / Math.PI];
}

const inAny = ([lon, lat]: Position, boxes: Bounds[]): boolean =>
  boxes.some((b) => lon >= b.minLon && lon <= b.maxLon && lat >= b.minLat && lat <= b.maxLat);

describe('nearBounds', () => {
  it('covers the circle of every radius around centres everywhere on the globe', () => {
    const centres: Position[] = [[4.83, 45.76], [179.99, 0], [-179.9, -30], [0, 89.99], [120, -89.5], [-45, 70], [179.5, 65], [10, 0]];
    for (const centre of centres) {
      for (const metres of [0, 10, 1000, 50_000, 700_000, 5_000_000]) {
        const boxes = nearBounds(centre, metres);
        for (let bearing = 0; bearing < 360; bearing += 5) {
          expect(inAny(destination(centre, bearing, metres), boxes), `${String(centre)} ${metres} m ${bearing}°`).toBe(true);
        }
      }
    }
  });

  it('splits at the antimeridian and spans all longitudes around a pole', () => {
    expect(nearBounds([179.99, 0], 5000)).toHaveLength(2);
    expect(nearBounds([-179.99, 0], 5000)).toHaveLength(2);
    expect(nearBounds([0, 89.99], 5000)).toEqual([expect.objectContaining({ minLon: -180, maxLon: 180, maxLat: 90 })]);
    const [lyon] = nearBounds([4.83, 45.76], 1000);
    expect(lyon && lyon.maxLon - lyon.minLon).toBeLessThan(0.03);
  });
});

describe('shapeBounds', () => {
  it('bounds every position of every member', () => {
    expect(shapeBounds({ type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1, 2] }, { type: 'LineString', coordinates: [[-3, 5], [4, -6, 100]] }] }))
      .toEqual({ minLon: -3, maxLon: 4, minLat: -6, maxLat: 5 });
    expect(shapeBounds({ type: 'GeometryCollection', geometries: [] })).toBeUndefined();
  });
});
