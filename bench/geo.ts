// Distance arithmetic on [lon, lat] points, shared by the ceiling's near query and the bench's checks.

/** Mean Earth radius (IUGG), as GeoJSON distance calculations commonly use. */
export const EARTH_RADIUS_M = 6_371_008.8;
export const METRES_PER_DEGREE = (Math.PI / 180) * EARTH_RADIUS_M;
export function toRadians(deg: number): number {
  return (deg * Math.PI) / 180;
}

/** Great-circle distance in metres between two [lon, lat] points. */
export function haversineMetres(lon1: number, lat1: number, lon2: number, lat2: number): number {
  const dLat = toRadians(lat2 - lat1);
  const dLon = toRadians(lon2 - lon1);
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(toRadians(lat1)) * Math.cos(toRadians(lat2)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** A lon/lat box holding every point within `metres` of [lon, lat] (away from the poles). */
export function boxAround(lon: number, lat: number, metres: number): { minLon: number; maxLon: number; minLat: number; maxLat: number } {
  // NOTE: a little wider than the circle: a great circle bows away from the parallel it crosses.
  const reach = metres * 1.001;
  const dLat = reach / METRES_PER_DEGREE;
  const dLon = reach / (METRES_PER_DEGREE * Math.cos(toRadians(Math.abs(lat) + dLat)));
  return { minLon: lon - dLon, maxLon: lon + dLon, minLat: lat - dLat, maxLat: lat + dLat };
}
