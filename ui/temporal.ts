// The chart's questions to the temporal API (GET /ngsi-ld/v1/temporal/entities/{id}) and the series
// read from its answers: raw instances for the last hour, averages per minute for a day and per hour
// for a month (NGSI-LD §6.19.3.1, temporalValues and aggregatedValues). Pure: no DOM.

export type RangeName = '1h' | '24h' | '30d';

export interface Range {
  label: string;
  spanMs: number;
  /** The aggregation period (aggrPeriodDuration); none: raw instances. */
  period?: string;
}

export const RANGES: Readonly<Record<RangeName, Range>> = {
  '1h': { label: 'Hour · raw', spanMs: 3_600_000 },
  '24h': { label: 'Day · avg/min', spanMs: 86_400_000, period: 'PT1M' },
  '30d': { label: 'Month · avg/hour', spanMs: 30 * 86_400_000, period: 'PT1H' },
};

export const RANGE_NAMES = Object.keys(RANGES) as RangeName[]; // NOTE: the keys of RANGES, typed

/** The query parameters of one chart: only those the broker's temporal retrieve accepts. */
export function temporalParams(range: RangeName, attr: string, now: number): Record<string, string> {
  const { spanMs, period } = RANGES[range];
  const params: Record<string, string> = { timerel: 'after', timeAt: new Date(now - spanMs).toISOString(), attrs: attr };
  if (period === undefined) return { ...params, format: 'temporalValues' };
  return { ...params, format: 'aggregatedValues', aggrMethods: 'avg', aggrPeriodDuration: period };
}

/** x in epoch seconds (uPlot's time scale), y the value; null where a period has no average. */
export interface Series { xs: number[]; ys: Array<number | null> }

type Row = readonly unknown[];

/** The attribute's temporal member: the default instance of a multi-attribute, else the first. */
function memberOf(body: unknown, attr: string): Record<string, unknown> | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const raw = (body as Record<string, unknown>)[attr];
  const list = (Array.isArray(raw) ? raw : [raw]).filter((m): m is Record<string, unknown> => typeof m === 'object' && m !== null);
  return list.find((m) => m['datasetId'] === undefined) ?? list[0];
}

const rowsOf = (v: unknown): Row[] => (Array.isArray(v) ? v.filter((r): r is Row => Array.isArray(r)) : []);

/** The series of `attr` in a temporalValues (`values`) or aggregatedValues (`avg`) answer, sorted by time. */
export function seriesOf(body: unknown, attr: string): Series {
  const member = memberOf(body, attr);
  const aggregated = member !== undefined && 'avg' in member;
  const points: Array<[number, number | null]> = [];
  for (const row of rowsOf(aggregated ? member['avg'] : member?.['values'])) {
    // values: [value, observedAt]; avg: [value, periodStart, periodEnd].
    const [value, at] = row;
    const t = typeof at === 'string' ? Date.parse(at) : NaN;
    if (Number.isNaN(t)) continue;
    const y = typeof value === 'number' && Number.isFinite(value) ? value : null;
    if (y === null && !aggregated) continue;
    points.push([t / 1000, y]);
  }
  points.sort((a, b) => a[0] - b[0]);
  return { xs: points.map((p) => p[0]), ys: points.map((p) => p[1]) };
}
