// The temporal domain shared by the temporal reads and their rendering (NGSI-LD §4.5.7-4.5.9,
// §4.5.19, §4.11): the time properties, the representation asked for, and what a temporal read
// hands back as domain values (entities, instances and aggregated periods), before any rendering.

import type { HistoryInstance } from '../history-instance.js';
import type { AttributeKind } from '../vocab.js';
import type { Entity, Iri, Json } from '../model.js';

/** The instant a temporal query filters and orders on (NGSI-LD §4.11 `timeproperty`). */
export type TimeProperty = 'observedAt' | 'createdAt' | 'modifiedAt' | 'deletedAt';

/** An instance with the value of the window's time property. */
export interface TimedInstance {
  time: number;
  instance: HistoryInstance;
}

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

/** One period of one series, with the value of each requested method. */
export interface AggregatedPeriod {
  start: number;
  end: number;
  values: Record<string, Json>;
}

export interface AggregatedSeries {
  datasetId?: string;
  kind: AttributeKind;
  periods: AggregatedPeriod[];
}

/** One attribute of a temporal entity: its instances in the window, or its aggregated periods. */
export type TemporalAttribute =
  | {
    attr: Iri;
    instances: TimedInstance[];
    /** The kind shown for deletion instances (they carry none): the attribute's current or last recorded one. */
    kind?: AttributeKind;
  }
  | { attr: Iri; aggregated: AggregatedSeries[] };

/** A temporal entity as read: its latest document and its attributes, in series order. */
export interface TemporalEntity {
  entity: Entity;
  attributes: TemporalAttribute[];
}
