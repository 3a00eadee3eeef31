// Entity use cases: the single write path for HTTP, MQTT and batch operations.
export { createEntityService } from './service.js';
export type { EntityListQuery } from '../store/index.js';
export type { EntityService, EntityServiceDeps, UpdateResult, UpsertMode } from './service.js';
/** The write core: the one write path, journaling one change per entity and write. */
export { createWriteCore, type WriteCoreDeps } from './write-core.js';

/** Batch operations (NGSI-LD §5.6.7-5.6.10, §5.6.20) and Delete Entities (§5.6.21) over the entity service. */
export { createBatchService } from './batch.js';
export type { AttributesOf, BatchOutcome, BatchService, BatchServiceDeps, FragmentOf, PurgeProjection, PurgeSelection } from './batch.js';
/** Discovery of entity types and attributes (NGSI-LD §5.7.5-5.7.9). */
export { createDiscoveryService } from './discovery.js';
export type { DiscoveryList, DiscoveryService, DiscoveryServiceDeps } from './discovery.js';
export type { AttributeInfo, TypeAttributes, TypeInfo } from '../store/index.js';
/** The journal pruning job body. */
export { pruneJournal, type JournalPruneDeps } from './journal-housekeeping.js';
/** Permissions on the write path: rights checked and owner permissions granted in the write's transaction. */
export { createWriteAccess, type WriteAccess, type WriteAccessDeps } from './write-access.js';
/** Measurements (MQTT ingestion): observed instances on the one write path. */
export { createMeasurementService, type Measurement, type MeasurementService } from './measurements.js';
/** The live-entity count for metrics: one count at start, then followed through change events. */
export { trackLiveEntities } from './live-count.js';
/** Transient entities (NGSI-LD §4.22): the removal of entities whose expiresAt came, and its alarm. */
export { createEntityExpiry, type EntityExpiry, type EntityExpiryDeps, type EntityExpiryStats } from './expiry.js';
