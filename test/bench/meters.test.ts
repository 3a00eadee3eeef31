// The query data set: deterministic, and no meter close enough to the near radius for two Earth
// models to disagree on it.

import { describe, expect, it } from 'vitest';
import { boxAround, haversineMetres } from '../../bench/geo.js';
import { CENTRE, METER_COUNT, countMetersNear, meterEntity, meterPoint } from '../../bench/meters.js';

describe('meters', () => {
  const distances = Array.from({ length: METER_COUNT }, (_, n) => {
    const [lon, lat] = meterPoint(n);
    return haversineMetres(CENTRE[0], CENTRE[1], lon, lat);
  });

  it('puts 80 meters within 500 m of the centre and none within 4 m of that radius', () => {
    expect(countMetersNear(500)).toBe(80);
    expect(distances.filter((d) => Math.abs(d - 500) < 4)).toEqual([]);
  });

  it('spreads the meters over about 10 km, each in its own cell', () => {
    expect(Math.max(...distances)).toBeGreaterThan(6_900);
    expect(new Set(Array.from({ length: METER_COUNT }, (_, n) => meterPoint(n).join(','))).size).toBe(METER_COUNT);
  });

  it('builds the same entity for the same number', () => {
    expect(meterEntity('Meter', 42)).toEqual(meterEntity('Meter', 42));
    expect(meterEntity('Meter', 142)).toMatchObject({ id: 'urn:ngsi-ld:Meter:142', temperature: { value: 42 } });
  });

  it('has a box around a point that holds every meter near it', () => {
    const box = boxAround(CENTRE[0], CENTRE[1], 500);
    const near = Array.from({ length: METER_COUNT }, (_, n) => meterPoint(n)).filter(([lon, lat]) => haversineMetres(CENTRE[0], CENTRE[1], lon, lat) <= 500);
    expect(near.every(([lon, lat]) => lon >= box.minLon && lon <= box.maxLon && lat >= box.minLat && lat <= box.maxLat)).toBe(true);
  });
});
