// The map of GeoProperties: the fitted projection of geo.ts drawn as SVG, with a graticule at round
// degrees. No tiles, no network: the geometry alone, on a plain background.

import { svg } from './dom.js';
import { fitGeometries, graticule } from './geo.js';

export interface MapFeature { geometry: unknown; label: string; href?: string }

const decimals = (step: number): number => Math.max(0, Math.min(6, -Math.floor(Math.log10(step))));

function gridLayer(f: NonNullable<ReturnType<typeof fitGeometries>>): SVGElement {
  const { meridians, parallels } = graticule(f);
  const step = Math.abs((meridians[1]?.lon ?? 0) - (meridians[0]?.lon ?? 0)) || Math.abs((parallels[1]?.lat ?? 0) - (parallels[0]?.lat ?? 0)) || 1;
  const digits = decimals(step);
  const g = svg('g', { class: 'grid' });
  for (const m of meridians) {
    g.append(svg('line', { x1: m.x, x2: m.x, y1: 0, y2: f.height }));
    g.append(svg('text', { x: m.x + 3, y: f.height - 4 }, `${m.lon.toFixed(digits)}°`));
  }
  for (const p of parallels) {
    g.append(svg('line', { x1: 0, x2: f.width, y1: p.y, y2: p.y }));
    g.append(svg('text', { x: 3, y: p.y - 3 }, `${p.lat.toFixed(digits)}°`));
  }
  return g;
}

/** An SVG map of the features, or undefined when none has a geometry it can draw. */
export function renderMap(features: readonly MapFeature[], width = 640): SVGElement | undefined {
  const fitted = fitGeometries(features.map((f) => f.geometry), width);
  if (!fitted) return undefined;
  const root = svg('svg', { class: 'map', viewBox: `0 0 ${fitted.width} ${fitted.height}`, role: 'img', 'aria-label': 'Map of the geo-properties' });
  root.append(svg('rect', { class: 'map-bg', x: 0, y: 0, width: fitted.width, height: fitted.height }));
  root.append(gridLayer(fitted));
  const labelPoints = fitted.shapes.filter((s) => s.kind === 'point').length <= 12;
  // Polygons under lines under points, so that a point is never hidden.
  const order = { polygon: 0, line: 1, point: 2 } as const;
  for (const shape of [...fitted.shapes].sort((a, b) => order[a.kind] - order[b.kind])) {
    const feature = features[shape.feature];
    const title = svg('title', {}, feature?.label ?? '');
    const el = shape.kind === 'point'
      ? svg('g', { class: 'pt' }, svg('circle', { cx: shape.x, cy: shape.y, r: 6 }), title,
        labelPoints ? svg('text', { x: shape.x + 9, y: shape.y + 4 }, feature?.label ?? '') : null)
      : svg('path', { class: shape.kind, d: shape.d }, title);
    root.append(feature?.href ? svg('a', { href: feature.href }, el) : el);
  }
  return root;
}
