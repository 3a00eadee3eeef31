// The SQL of a series filter (which series a retention deletion touches), shared by the raw rows and
// the summaries.

import type { SeriesFilter } from './history-types.js';

/** The condition (and its parameters) selecting the filter's series, to follow a WHERE. */
export function seriesClause(filter: SeriesFilter | undefined): { clause: string; params: Record<string, unknown> } {
  if (filter?.include !== undefined) return { clause: 'AND series IN (SELECT value FROM json_each(@include))', params: { include: JSON.stringify(filter.include) } };
  if (filter?.exclude !== undefined && filter.exclude.length > 0) {
    return { clause: 'AND series NOT IN (SELECT value FROM json_each(@exclude))', params: { exclude: JSON.stringify(filter.exclude) } };
  }
  return { clause: '', params: {} };
}
