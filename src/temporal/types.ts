// The temporal domain: what a temporal request asks for (NGSI-LD §5.7.3-5.7.4, §6.18-6.24), the
// representations (§4.5.7-4.5.9), aggregation methods (§4.5.19) and what a read hands back.

import type { EntityFilter, EntityId, Iri, JsonObject } from '../ngsi/index.js';
import type { TimeProperty } from '../store/index.js';

export type { TimeProperty };

/** NGSI-LD §4.11 timerel: before (t < timeAt), after (t >= timeAt), between (timeAt <= t < endTimeAt). */
export type Timerel = 'before' | 'after' | 'between';

export type TemporalFormat = 'normalized' | 'temporalValues' | 'aggregatedValues';

export const AGGR_METHODS = ['totalCount', 'distinctCount', 'sum', 'avg', 'min', 'max', 'stddev', 'sumsq'] as const;
export type AggrMethod = (typeof AGGR_METHODS)[number];

/** An ISO 8601 duration; calendar parts (years, months) have no fixed length. */
export interface Duration {
  years: number;
  months: number;
  /** Days, hours, minutes and seconds (weeks as 7 days), in milliseconds. */
  fixedMs: number;
}

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

/** How the result is shown. */
export interface TemporalView {
  format: TemporalFormat;
  sysAttrs: boolean;
  /** options=audit: `sub` on normalized instances read on createdAt/modifiedAt/deletedAt. */
  audit: boolean;
  aggrMethods: AggrMethod[];
  /** Aggregation period; undefined: the whole requested range. */
  aggrPeriod?: Duration;
  /** `attrs`: only these attributes. */
  attrs?: Set<Iri>;
  /** `pick` / `omit` of top-level members: 'id', 'type' or attribute IRIs. */
  pick?: Set<string>;
  omit?: Set<string>;
  /** `datasetId`: only these instances ('@none' is the default instance). */
  datasetIds?: Set<string>;
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
}

/**
 * The temporal range a truncated answer covers (NGSI-LD §6.3.10): with ascending pagination every
 * instance with start <= t < end is in it; with lastN (descending) every instance with end <= t and
 * below start (exclusive when start is the query's own end). `size`: instances of the largest
 * attribute in the whole request, when known.
 */
export interface TemporalRange {
  order: 'asc' | 'desc';
  start: number;
  end: number;
  size?: number;
}

export interface TemporalReadResult {
  entities: JsonObject[];
  range?: TemporalRange;
}

/** Who reads or writes, and where. */
export interface TemporalActor {
  tenant: string;
  subject?: string;
}
