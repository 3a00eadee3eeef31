// The time window of a temporal request (NGSI-LD §4.11): timerel, timeAt and endTimeAt as a
// half-open range over the chosen timeproperty.

import type { HistoryWindow } from '../store/index.js';
import type { TemporalQuery } from './types.js';

/** NGSI-LD §4.11: the instants a timerel selects, as a half-open window. */
export function windowOf(q: TemporalQuery): HistoryWindow {
  const w: HistoryWindow = { timeproperty: q.timeproperty };
  if ((q.timerel === 'after' || q.timerel === 'between') && q.timeAt !== undefined) w.from = q.timeAt;
  if (q.timerel === 'before' && q.timeAt !== undefined) w.to = q.timeAt;
  if (q.timerel === 'between' && q.endTimeAt !== undefined) w.to = q.endTimeAt;
  return w;
}
