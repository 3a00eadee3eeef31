// Aggregated temporal reads (NGSI-LD §4.5.19): per series statistics computed in SQL per period,
// turned into method values, with temporal pagination on periods (a period is cut whole).

import type { AggregatedPeriod, AggregatedSeries, AttributeKind, TermMapper } from '../ngsi/index.js';
import type { HistoryReader, HistorySeries, HistoryWindow, PeriodStats } from '../store/index.js';
import { aggregateValue, checkAggregable, statisticsOf } from './aggregation.js';
import { periodsOf, type Periods } from './periods.js';
import type { Slice } from './selection.js';
import type { TemporalRange, TemporalView } from './types.js';

export interface AggregateInput {
  reader: HistoryReader;
  series: readonly HistorySeries[];
  window: HistoryWindow;
  view: TemporalView;
  slice: Slice;
  cap: number;
  mapper: TermMapper;
  /** The kind an attribute series is shown with. */
  kindOf(series: HistorySeries): AttributeKind;
}

/** Aggregated series by series id (series without instances in the window are absent). */
export function selectAggregates(input: AggregateInput): { series: Map<number, AggregatedSeries>; range?: TemporalRange } {
  const { reader, series, window, view, slice, cap } = input;
  const out = new Map<number, AggregatedSeries>();
  if (series.length === 0) return { series: out };
  // Open ends (no timeAt, or no end) are filled by the earliest and latest instance.
  const bounded = window.from !== undefined && window.to !== undefined;
  const extent = bounded ? { min: window.from ?? 0, max: window.to ?? 0 } : reader.extent(series, window);
  if (!extent) return { series: out };
  const periods = periodsOf(window, view.aggrPeriod, extent);
  const sliced = slice.n !== undefined && slice.n <= cap;
  const rows = reader.aggregate(series, window, periods.grid, {
    order: slice.order, skip: slice.skip, limit: sliced ? slice.n ?? cap : cap + 1, stats: statisticsOf(view.aggrMethods),
  });
  const bySeries = new Map<number, PeriodStats[]>();
  for (const r of rows) {
    const list = bySeries.get(r.series) ?? [];
    list.push(r);
    bySeries.set(r.series, list);
  }
  const byId = new Map(series.map((s) => [s.id, s]));
  for (const [id, list] of bySeries) {
    const s = byId.get(id);
    if (s) checkAggregable(view.aggrMethods, list, input.mapper.compactIri(s.attr));
  }
  const asc = slice.order === 'asc';
  let cut: number | undefined;
  if (!sliced) {
    for (const list of bySeries.values()) {
      if (list.length <= cap) continue;
      // Rows are ascending: ascending pagination leaves out the (cap+1)-th; descending keeps the newest cap.
      const own = periods.bounds(list[asc ? cap : 1]!.period).start;
      cut = cut === undefined ? own : asc ? Math.min(cut, own) : Math.max(cut, own);
    }
  }
  for (const [id, list] of bySeries) {
    const s = byId.get(id);
    if (!s) continue;
    const kept = list.map((p) => toPeriod(p, periods, view))
      .filter((p) => cut === undefined || (asc ? p.start < cut : p.start >= cut));
    const agg: AggregatedSeries = { kind: input.kindOf(s), periods: kept };
    if (s.datasetId !== undefined) agg.datasetId = s.datasetId;
    if (kept.length > 0) out.set(id, agg);
  }
  if (cut === undefined) return { series: out };
  return { series: out, range: rangeOf(out, window, periods, asc, cut) };
}

function toPeriod(p: PeriodStats, periods: Periods, view: TemporalView): AggregatedPeriod {
  const { start, end } = periods.bounds(p.period);
  const values: AggregatedPeriod['values'] = {};
  for (const m of view.aggrMethods) values[m] = aggregateValue(m, p);
  return { start, end, values };
}

function rangeOf(kept: Map<number, AggregatedSeries>, window: HistoryWindow, periods: Periods, asc: boolean, cut: number): TemporalRange {
  if (asc) return { order: 'asc', start: window.from ?? periods.bounds(0).start, end: cut };
  let latest = cut;
  for (const s of kept.values()) for (const p of s.periods) latest = Math.max(latest, p.end);
  return { order: 'desc', start: window.to ?? latest, end: cut };
}
