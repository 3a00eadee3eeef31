// The query data set: Meter entities with a temperature and a point location on a 100 m grid around
// a centre, placed by a seeded shuffle.

import { haversineMetres, METRES_PER_DEGREE, toRadians } from './geo.js';
import { seededRandom } from './random.js';

export const METER_COUNT = 10_000;
export const GRID_SIDE = 100;
export const GRID_STEP_M = 100;
export const CENTRE: readonly [number, number] = [4.83, 45.75];

/**
 * Grid cell of every meter: a seeded permutation, so location does not follow the id or the
 * temperature. Cell centres sit half a step off the centre, so no point lies within a few metres of
 * the 500 m query radius and both targets agree on the matches whatever their Earth model.
 */
function shuffledCells(): Int32Array {
  const cells = Int32Array.from({ length: METER_COUNT }, (_, i) => i);
  const random = seededRandom(7);
  for (let i = cells.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const a = cells[i] ?? 0;
    cells[i] = cells[j] ?? 0;
    cells[j] = a;
  }
  return cells;
}

const CELLS = shuffledCells();

/** [lon, lat] of meter n (n below METER_COUNT; beyond, the cells repeat). */
export function meterPoint(n: number): [number, number] {
  const cell = CELLS[n % METER_COUNT] ?? 0;
  const [lon0, lat0] = CENTRE;
  const half = (GRID_SIDE - 1) / 2;
  const dLat = GRID_STEP_M / METRES_PER_DEGREE;
  const dLon = GRID_STEP_M / (METRES_PER_DEGREE * Math.cos(toRadians(lat0)));
  const round = (v: number) => Math.round(v * 1e7) / 1e7;
  return [round(lon0 + ((cell % GRID_SIDE) - half) * dLon), round(lat0 + (Math.floor(cell / GRID_SIDE) - half) * dLat)];
}

/** The upsert element of entity n of a type: temperature n % 100 and its grid location. */
export function meterEntity(type: string, n: number): Record<string, unknown> {
  return {
    id: `urn:ngsi-ld:${type}:${n}`,
    type,
    temperature: { type: 'Property', value: n % 100 },
    location: { type: 'GeoProperty', value: { type: 'Point', coordinates: meterPoint(n) } },
  };
}

/** How many meters lie within `metres` of the centre. */
export function countMetersNear(metres: number): number {
  let count = 0;
  for (let n = 0; n < METER_COUNT; n++) {
    const [lon, lat] = meterPoint(n);
    if (haversineMetres(CENTRE[0], CENTRE[1], lon, lat) <= metres) count++;
  }
  return count;
}
