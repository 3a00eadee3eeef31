// The temporal domain: what a temporal request asks for (NGSI-LD §5.7.3-5.7.4, §6.18-6.24), the
// representations (§4.5.7-4.5.9), aggregation methods (§4.5.19) and what a read hands back.

import type { EntityFilter, EntityId, Iri, JsonObject } from '../ngsi/index.js';
import type { AggrMethod, Duration, TemporalEntity, TemporalFormat, TemporalView, TimeProperty } from '../ngsi/index.js';

export { AGGR_METHODS } from '../ngsi/index.js';
export type { AggrMethod, Duration, TemporalFormat, TemporalView, TimeProperty };

/** NGSI-LD §4.11 timerel: before (t < timeAt), after (t >= timeAt), between (timeAt <= t < endTimeAt). */
export type Timerel = 'before' | 'after' | 'between';




/** The time filter and slicing of a temporal request. */
export interface TemporalQuery {
  timerel?: Timerel;
  timeAt?: number;
  endTimeAt?: number;
  timeproperty: TimeProperty;
  /** The newest N instances (per attribute), returned oldest first. */
  lastN?: number;
  /** The oldest N instances (per attribute). */
  firstN?: number;
  /** Instances skipped (after ordering) before firstN/lastN apply. */
  offsetN: number;
}


export interface TemporalRequest {
  query: TemporalQuery;
  view: TemporalView;
}

/** Which entities a temporal query covers (types and attrs any-of, every filter must hold). */
export interface TemporalSelection {
  types?: Iri[];
  ids?: EntityId[];
  filters?: EntityFilter[];
  /** orderBy=id (NGSI-LD v1.9 §5.7.4.4): entities in id order instead of creation order. */
  orderById?: 'asc' | 'desc';
}

/**
 * The temporal range of a cut answer (NGSI-LD §6.3.10), sent as `Content-Range: date-time
 * <start>-<end>/<size>`; `end` is the instant of the last instance returned, and the instances of
 * one instant are never split between two answers. Continuation rule, which loses and repeats nothing:
 * - ascending (no lastN): the answer holds every instance with t <= end (from start on); ask again
 *   with the same parameters but `timerel=after&timeAt=<end + 1 ms>`, or `timerel=between` so
 *   (a `before` query becomes `between` with endTimeAt = its timeAt);
 * - descending (lastN): start > end and the answer holds every instance with t >= end (up to
 *   start); ask again with `timerel=before&timeAt=<end>`, or `between` keeping timeAt and with
 *   `endTimeAt=<end>` (an `after` query becomes `between`).
 * Leave offsetN out when continuing. `size` is lastN (or firstN) when given; unknown ('*') otherwise.
 */
export interface TemporalRange {
  order: 'asc' | 'desc';
  start: number;
  end: number;
  size?: number;
}

export interface TemporalReadResult {
  entities: TemporalEntity[];
  range?: TemporalRange;
  /**
   * Set only when an answer by observedAt holds no instance while instances of the same entities and
   * attributes were modified in the window: they carry no observedAt, and timeproperty=modifiedAt lists them.
   */
  withoutObservedAt?: true;
  /**
   * The instant before which raw instances were removed (retention, disk budget), when the window
   * starts before it: aggregations by whole minutes or hours there come from the rollups.
   */
  rawDroppedBefore?: number;
}

