// Draws GeoJSON geometries without tiles or network: a simple fitted projection (equirectangular,
// longitudes shrunk by the cosine of the middle latitude) into an SVG viewBox. Pure: no DOM.

export interface Shape {
  kind: 'point' | 'line' | 'polygon';
  /** SVG path data for lines and polygons; empty for points. */
  d: string;
  /** The point itself, for points. */
  x: number;
  y: number;
  /** Index of the feature this shape belongs to. */
  feature: number;
}

export interface Fitted {
  width: number;
  height: number;
  shapes: Shape[];
  bounds: { west: number; south: number; east: number; north: number };
  /** Longitude and latitude to viewBox units. */
  project(lon: number, lat: number): [number, number];
}

type Position = [number, number];
type Flat = { kind: Shape['kind']; rings: Position[][]; feature: number };

const isPosition = (p: unknown): p is Position =>
  Array.isArray(p) && p.length >= 2 && typeof p[0] === 'number' && typeof p[1] === 'number' && Number.isFinite(p[0]) && Number.isFinite(p[1]);
const positions = (v: unknown): Position[] => (Array.isArray(v) ? v.filter(isPosition) : []);
const lists = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A geometry as point, line and polygon parts (GeometryCollections and Multi* split up). */
function flatten(g: unknown, feature: number, depth = 0): Flat[] {
  if (typeof g !== 'object' || g === null || depth > 4) return [];
  const { type, coordinates: c, geometries } = g as { type?: unknown; coordinates?: unknown; geometries?: unknown };
  switch (type) {
    case 'Point':
      return isPosition(c) ? [{ kind: 'point', rings: [[c]], feature }] : [];
    case 'MultiPoint':
      return positions(c).map((p) => ({ kind: 'point', rings: [[p]], feature }));
    case 'LineString':
      return [{ kind: 'line', rings: [positions(c)], feature }];
    case 'MultiLineString':
      return lists(c).map((l) => ({ kind: 'line', rings: [positions(l)], feature }));
    case 'Polygon':
      return [{ kind: 'polygon', rings: lists(c).map(positions), feature }];
    case 'MultiPolygon':
      return lists(c).map((p) => ({ kind: 'polygon', rings: lists(p).map(positions), feature }));
    case 'GeometryCollection':
      return lists(geometries).flatMap((x) => flatten(x, feature, depth + 1));
    default:
      return [];
  }
}

/** Smallest span shown, in degrees: a single point gets a neighbourhood of a few hundred metres. */
const MIN_SPAN = 0.004;

/** Fits every geometry into a `width`-wide box with `pad` units of margin; the height follows the shape. */
export function fitGeometries(geometries: readonly unknown[], width = 600, pad = 24, maxHeight = 360): Fitted | undefined {
  const flat = geometries.flatMap((g, i) => flatten(g, i));
  const all = flat.flatMap((f) => f.rings.flat());
  if (all.length === 0) return undefined;
  let west = Infinity, east = -Infinity, south = Infinity, north = -Infinity;
  for (const [lon, lat] of all) {
    west = Math.min(west, lon); east = Math.max(east, lon);
    south = Math.min(south, lat); north = Math.max(north, lat);
  }
  const grow = (lo: number, hi: number): [number, number] => {
    const mid = (lo + hi) / 2;
    const span = Math.max(hi - lo, MIN_SPAN) * 1.1;
    return [mid - span / 2, mid + span / 2];
  };
  [west, east] = grow(west, east);
  [south, north] = grow(south, north);
  const k = Math.cos((((south + north) / 2) * Math.PI) / 180) || 1e-6;
  const spanX = (east - west) * k;
  const spanY = north - south;
  const inner = width - 2 * pad;
  const scale = Math.min(inner / spanX, (maxHeight - 2 * pad) / spanY);
  const height = Math.round(spanY * scale + 2 * pad);
  const offsetX = (width - spanX * scale) / 2;
  const at = (lon: number, lat: number): Position => [offsetX + (lon - west) * k * scale, pad + (north - lat) * scale];
  const project = ([lon, lat]: Position): Position => at(lon, lat);
  const round = (n: number): string => (Math.round(n * 10) / 10).toString();
  const shapes: Shape[] = flat.map((f) => {
    if (f.kind === 'point') {
      const [x, y] = project(f.rings[0]?.[0] ?? [0, 0]);
      return { kind: 'point', d: '', x, y, feature: f.feature };
    }
    const d = f.rings.filter((r) => r.length > 0).map((r) => {
      const path = r.map((p, i) => `${i === 0 ? 'M' : 'L'}${project(p).map(round).join(',')}`).join('');
      return f.kind === 'polygon' ? `${path}Z` : path;
    }).join('');
    return { kind: f.kind, d, x: 0, y: 0, feature: f.feature };
  });
  return { width, height, shapes, bounds: { west, south, east, north }, project: at };
}

/** A round step in degrees that cuts `span` into a few parts (1, 2 or 5 times a power of ten). */
export function gridStep(span: number, parts = 4): number {
  const raw = span / parts;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  return step;
}

/** The meridians and parallels at round degrees inside the fitted bounds, with their values. */
export function graticule(f: Fitted): { meridians: Array<{ lon: number; x: number }>; parallels: Array<{ lat: number; y: number }> } {
  const { west, east, south, north } = f.bounds;
  const step = gridStep(Math.min(east - west, north - south));
  const values = (lo: number, hi: number): number[] => {
    const out: number[] = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi && out.length < 50; v += step) out.push(Math.round(v / step) * step);
    return out;
  };
  return {
    meridians: values(west, east).map((lon) => ({ lon, x: f.project(lon, north)[0] })),
    parallels: values(south, north).map((lat) => ({ lat, y: f.project(west, lat)[1] })),
  };
}
