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

/** Which series a deletion touches: only those included, or all but those excluded (neither: all). */
export interface SeriesFilter {
  include?: readonly number[];
  exclude?: readonly number[];
}

export interface HistoryRetention {
  /** Drops the oldest bucket lying entirely before `horizon` (one per call); returns its name. */
  dropBucketBefore(horizon: number): string | undefined;
  /** Deletes up to `limit` rows older than `horizon` (of the series the filter selects); returns how many. */
  pruneBefore(horizon: number, limit: number, filter?: SeriesFilter): number;
}

// The rollups of history (rollups.ts).

export type RollupTier = 'minute' | 'hour';

/** What the instants of rollup_state name. */
export type DroppedKey = 'raw' | RollupTier;

export interface RollupTable {
  tier: RollupTier;
  name: string;
  startMs: number;
  endMs: number;
}

/** One summary row as stored. */
export interface RollupRow {
  series: number;
  t: number;
  n: number;
  numbers: number;
  strings: number;
  distinct_n: number | null;
  sum: number | null;
  sumsq: number | null;
  min: number | null;
  max: number | null;
  min_s: string | null;
  max_s: string | null;
  first_t: number;
  last_t: number;
  first_num: number | null;
  last_num: number | null;
}

export interface RollupRepository {
  /**
   * Reads up to `limit` raw rows not taken into account yet (in one transaction): marks the minutes
   * and hours they fall in, or adds those before `mergeBefore` to their summaries; a minute closed by
   * `closedBefore` whose rows are all among those read is summarized at once. Returns how many rows
   * it read; 0 when none is left.
   */
  scan(limit: number, mergeBefore: number, closedBefore?: number): number;
  /**
   * Computes again up to `limit` marked summaries of a tier whose period ended by `closedBefore`,
   * stopping after a few milliseconds of work; returns how many (0: none is left).
   */
  roll(tier: RollupTier, closedBefore: number, limit: number): number;
  /** Records that every period of the tier ending by `before` was computed (the job's run is complete). */
  setRolledBefore(tier: RollupTier, before: number): void;
  /** Marks the summaries an instance of a series at `t` belongs to (an edit of stored history). */
  markDirty(series: number, t: number): void;
  /** Removes every summary of the series (their history is gone). */
  removeSeries(ids: readonly number[]): void;
  /**
   * The instant before which the tier's summaries are exact for every period: the run that computed
   * them, the earliest marked period and the earliest raw row not read yet bound it.
   */
  completeBefore(tier: RollupTier): number;
  /** The instant before which rows of `key` were removed (retention, disk budget); undefined when none was. */
  droppedBefore(key: DroppedKey): number | undefined;
  /** Raises the instant before which rows of `key` were removed. */
  noteDropped(key: DroppedKey, before: number): void;
  /** The summaries of the series in [lo, hi) from the tier's tables, ordered by series and t. */
  rows(tier: RollupTier, series: readonly number[], lo: number, hi: number): RollupRow[];
  /** The tier's tables, oldest first. */
  tables(tier?: RollupTier): RollupTable[];
  /** Drops the oldest table of the tier that ends by `horizon`; its name, or undefined when none does. */
  dropTableBefore(tier: RollupTier, horizon: number): string | undefined;
  /** Deletes up to `limit` rows of the tier before `horizon` (of the series the filter selects); returns how many. */
  pruneBefore(tier: RollupTier, horizon: number, limit: number, filter?: SeriesFilter): number;
  /** Rows of the tier (all tables). */
  count(tier: RollupTier): number;
  /** Forgets the watermark of a raw bucket table that is dropped (in the caller's transaction). */
  forgetBucket(name: string): void;
  /**
   * Rows were deleted from a raw bucket table: its watermark comes down to the largest rowid left.
   * NOTE: SQLite gives a new row the largest rowid plus one, so the rowid of a deleted last row is
   * given again: a row written after such a deletion must still be read.
   */
  rowsDeleted(bucket: string): void;
}
