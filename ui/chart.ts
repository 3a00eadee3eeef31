// The time-series chart (uPlot) of one numeric attribute. It records on its element how many points
// it last drew (data-points), which the page's tests read, and follows its element's width.

import uPlot from 'uplot';
import { h } from './dom.js';
import type { Series } from './temporal.js';

export interface Chart {
  readonly el: HTMLElement;
  /** Replaces the series; `label` names it in the legend; the time axis spans at least `from` (epoch s) to now. */
  set(series: Series, label: string, from: number): void;
  /** Adds one point at the end (a live update), keeping the order by time. */
  append(x: number, y: number): void;
  destroy(): void;
}

const HEIGHT = 280;
const STROKE = '#2563eb';
const AXIS = { stroke: '#64748b', grid: { stroke: '#e2e8f0', width: 1 }, ticks: { stroke: '#cbd5e1', width: 1 } };

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** Seconds the x scale spans now. */
const spanOf = (u: uPlot): number => (u.scales['x']?.max ?? 0) - (u.scales['x']?.min ?? 0);

/** A tick of the time axis in local time, 24-hour: `14:05`, with the day when the range spans days. */
export function timeLabel(epochSeconds: number, spanSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  const day = `${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}`;
  const time = `${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
  if (spanSeconds > 7 * 86_400) return day;
  return spanSeconds > 86_400 ? `${day} ${time}` : time;
}

function optionsOf(label: string, width: number, pointCount: number, from: number, el: HTMLElement): uPlot.Options {
  return {
    width, height: HEIGHT,
    // The whole range asked for, even where it has no instance; live points push its end on.
    scales: { x: { time: true, range: (_u, min, max) => [Math.min(min ?? from, from), Math.max(max ?? 0, Date.now() / 1000)] } },
    series: [
      { label: 'Time', value: (_u, v) => (v === null ? '–' : `${timeLabel(v, 2 * 86_400)}:${pad2(new Date(v * 1000).getSeconds())}`) },
      { label, stroke: STROKE, width: 2, fill: 'rgba(37, 99, 235, 0.08)', spanGaps: false, points: { show: pointCount <= 120, size: 5 } },
    ],
    axes: [{ ...AXIS, values: (u, splits) => splits.map((t) => timeLabel(t, spanOf(u))) }, { ...AXIS, size: 60 }],
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },
    hooks: {
      draw: [(u) => {
        const ys = u.data[1] ?? [];
        el.dataset['points'] = String(ys.filter((y) => y !== null && y !== undefined).length);
      }],
    },
  };
}

export function createChart(): Chart {
  const el = h('div', { class: 'chart', 'data-points': '0' });
  let plot: uPlot | undefined;
  let data: [number[], Array<number | null>] = [[], []];
  let label = '';
  let from = 0;
  const widthOf = (): number => Math.max(320, Math.floor(el.clientWidth || el.parentElement?.clientWidth || 640));
  const build = (): void => {
    plot?.destroy();
    plot = new uPlot(optionsOf(label, widthOf(), data[0].length, from, el), data, el);
  };
  const resize = new ResizeObserver(() => plot?.setSize({ width: widthOf(), height: HEIGHT }));
  resize.observe(el);
  return {
    el,
    set(series, name, start) {
      data = [series.xs, series.ys];
      label = name;
      from = start;
      build();
    },
    append(x, y) {
      const [xs, ys] = data;
      const last = xs[xs.length - 1];
      if (last !== undefined && x < last) {
        const at = xs.findIndex((t) => t > x);
        xs.splice(at, 0, x);
        ys.splice(at, 0, y);
      } else {
        xs.push(x);
        ys.push(y);
      }
      if (plot) plot.setData(data);
      else build();
    },
    destroy() {
      resize.disconnect();
      plot?.destroy();
      plot = undefined;
    },
  };
}
