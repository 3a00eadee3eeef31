// Contracts of temporal reads and writes over the history buckets (NGSI-LD §5.7.3-5.7.4, §5.6.11-5.6.16):
// time windows on a time property, ordered reads, per-period statistics, instance edits and retention.

import type { EntityId, Iri } from '../../ngsi/index.js';
import type { HistoryInstance, TimedInstance, TimeProperty } from '../../ngsi/index.js';

export type { TimedInstance, TimeProperty };
import type { ReadScope } from '../read-scope.js';


/** Instances whose time property lies in [from, to); an absent bound is open. */
export interface HistoryWindow {
  timeproperty: TimeProperty;
  from?: number;
  to?: number;
}

/** One series: the history of one attribute instance (entity, attribute, datasetId). */
export interface HistorySeries {
  id: number;
  entityId: EntityId;
  attr: Iri;
  datasetId?: string;
}


export type TimeOrder = 'asc' | 'desc';

export interface HistoryReadOptions {
  order: TimeOrder;
  /** Instances skipped (in that order) before the first one returned. */
  skip: number;
  /** Most instances returned; Infinity for all. */
  limit: number;
}

/**
 * How instants map to aggregation periods: the whole window as one period, fixed-length periods
 * from an origin, or calendar periods given by their ascending start instants.
 */
export type PeriodGrid =
  | { kind: 'whole' }
  | { kind: 'fixed'; origin: number; ms: number }
  | { kind: 'calendar'; starts: readonly number[] };

export interface HistoryAggregateOptions extends HistoryReadOptions {
  /**
   * The members of PeriodStats to compute, all when absent. Series, period and the three counts
   * always are; a member not asked for is null.
   */
  stats?: ReadonlySet<keyof PeriodStats>;
}

/** Statistics of one series over one period, computed in SQL; deletion instances are not counted. */
export interface PeriodStats {
  series: number;
  /** Period index in the grid (0 for the whole window). */
  period: number;
  count: number;
  /** Instances with a number (or boolean, as 0/1). */
  numbers: number;
  /** Property instances whose value is a string. */
  strings: number;
  distinct: number | null;
  sum: number | null;
  sumsq: number | null;
  min: number | null;
  max: number | null;
  minString: string | null;
  maxString: string | null;
  first: number | null;
  last: number | null;
}

export interface HistoryReader {
  /** The series of some entities, optionally only of some attributes, ordered by entity, attribute, datasetId. */
  series(scope: ReadScope, entityIds: EntityId[], attrs?: Iri[]): HistorySeries[];
  /** Instances of the series in the window, merged in time order (then bucket and insertion order). */
  read(series: readonly HistorySeries[], window: HistoryWindow, opts: HistoryReadOptions): TimedInstance[];
  /** The nearest time after (asc) or before (desc) `time` that an instance of the series has in the window. */
  nextTime(series: readonly HistorySeries[], window: HistoryWindow, time: number, order: TimeOrder): number | undefined;
  /** How many instances of the series lie in the window. */
  count(series: readonly HistorySeries[], window: HistoryWindow): number;
  /** Earliest and latest time of the series' instances in the window. */
  extent(series: readonly HistorySeries[], window: HistoryWindow): { min: number; max: number } | undefined;
  /**
   * Per series and period statistics, at most `limit` periods per series after skipping `skip`, in
   * `order` of period; rows come back ordered by series then ascending period.
   */
  aggregate(series: readonly HistorySeries[], window: HistoryWindow, grid: PeriodGrid, opts: HistoryAggregateOptions): PeriodStats[];
}

export interface HistoryEditor {
  /**
   * Appends instances that all carry observedAt; an instance of the same series (attribute and
   * datasetId) at the same observedAt is replaced rather than kept twice (NGSI-LD §5.6.12).
   */
  upsertObserved(tenant: string, instances: HistoryInstance[]): void;
  /** One instance by its instanceId within an attribute of an entity. */
  findInstance(scope: ReadScope, entityId: EntityId, attr: Iri, instanceId: string): HistoryInstance | undefined;
  /**
   * The same, when the instance's datasetId is known too (the change journal records it): its series
   * found in the series cache and its row by one seek on (series, t), without listing the series.
   */
  findInstanceOf(tenant: string, entityId: EntityId, attr: Iri, datasetId: string | undefined, instanceId: string): HistoryInstance | undefined;
  /** Replaces a stored instance by what `change` makes of it (its id kept); false when there is none. */
  modifyInstance(tenant: string, entityId: EntityId, attr: Iri, instanceId: string,
    change: (old: HistoryInstance) => HistoryInstance): boolean;
  /** Deletes one instance by its instanceId within an attribute of an entity; false when there is none. */
  deleteInstance(tenant: string, entityId: EntityId, attr: Iri, instanceId: string): boolean;
  /**
   * Removes the history of an attribute (only its default instance, one datasetId, or with 'all'
   * every datasetId), or of every attribute when attr is undefined. Returns the series removed.
   */
  removeSeries(tenant: string, entityId: EntityId, attr?: Iri, datasetId?: string | 'all' | 'default'): number;
}

export interface HistoryRetention {
  /** Drops the oldest bucket lying entirely before `horizon` (one per call); returns its name. */
  dropBucketBefore(horizon: number): string | undefined;
  /** Deletes up to `limit` rows older than `horizon` in the bucket that straddles it; returns how many. */
  pruneBefore(horizon: number, limit: number): number;
}
