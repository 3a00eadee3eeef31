// Temporal use cases (NGSI-LD §5.7.3-5.7.4, §5.6.11-5.6.16): temporal retrieve and query over the
// history buckets, aggregation, temporal writes, and the history retention job body.

/** Builds the temporal service from the store, the change emitter, the clock and the per-attribute cap. */
export { createTemporalService, type TemporalService, type TemporalServiceDeps } from './service.js';
/** Parses the temporal request parameters (timerel, timeAt, lastN, ..., format, aggregation). */
export { parseAggregation, parseTemporalFormat, parseTemporalQuery, type RawTemporalParams } from './request.js';
/** Parses temporal write bodies (attributes as arrays of instances with observedAt). */
export { parseTemporalAttributes, parseTemporalEntity, type TemporalEntityInput, type TemporalInstanceInput } from './parse.js';
/** ISO 8601 durations (aggrPeriodDuration, history.retention). */
export { addDuration, parseDuration } from './duration.js';
/** The retention job body, for tests and the scheduler. */
export { runRetention, type RetentionDeps, type RetentionReport, type RetentionRule, type LevelRetention } from './retention.js';
/** The rollup job body, for tests and the scheduler. */
export { runRollups, type RollupReport } from './rollups.js';
/** The history policy (rollups, retention per level, tenant and type) from the configuration. */
export { historyPolicyOf, removesHistory, type HistoryPolicy } from './policy.js';
/** The disk budget (storage.max-bytes) and the figures of GET /edgeld/v1/storage. */
export { createDiskBudget, type BudgetLevel, type DiskBudget } from './disk-budget.js';
export { reportStorage, tiersAgeSeconds, type StorageReport } from './storage-report.js';
export type { TemporalPage } from './read.js';
export type {
  AggrMethod, Duration, TemporalFormat, TemporalQuery, TemporalRange, TemporalReadResult, TemporalRequest,
  TemporalSelection, TemporalView, TimeProperty, Timerel,
} from './types.js';

