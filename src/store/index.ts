// The store module's public surface: the only place in edgeld that talks to SQLite.
// Other modules get domain types back; SQL and row shapes never leave this folder.

export type {
  DeliveryOutcome,
  DeliveryState,
  DiskStats,
  DueEntity,
  EntityListQuery,
  EntityArchive,
  EntityRepository,
  HistoryInstance,
  HistoryRepository,
  ReadScope,
  Store,
  StoreReader,
  StoreOptions,
  StoredSubscription,
  SubscriptionRepository,
  TxContext,
} from './types.js';
export type { AttributeInfo, DiscoveryRepository, TypeAttributes, TypeInfo } from './entities/discovery.js';
export type { CommandRecord, CommandRepository, CommandState } from './commands/commands.js';
export type { DeviceCommand, DeviceContext, DeviceRecord, DeviceRepository } from './devices/devices.js';
export type { DownlinkRecord, FederationCounters, FederationProgress, FederationRepository, ParkedChanges } from './federation/federation.js';
export type { IdentityRepository } from './identity/identity.js';


export type { ChangeJournal, JournalEntry, JournalSources, PruneReport, ReadOptions } from './journal/journal.js';
export type { RegistrationKeys, RegistrationRepository, RegistrationSelection, StoredRegistration } from './registrations/registrations.js';
export type { NewNotification, NotificationQueue, QueuedNotification } from './subscriptions/notification-queue.js';
export type {
  HistoryEditor, HistoryReadOptions, HistoryReader, HistoryRetention, HistorySeries, HistoryWindow, PeriodGrid, PeriodStats,
  SeriesFilter, TimedInstance, TimeOrder, TimeProperty,
} from './history/history-types.js';
/** The per-minute and per-hour summaries of history. */
export { ROLLUP_TIERS, TIER_MS } from './history/rollups.js';
export type { RollupRepository, RollupTier } from './history/history-types.js';

export type { DailyWritten, StorageUsage, TierBytes } from './storage-usage.js';

/** Opens (creating when needed) the database at opts.path, applies pragmas and pending migrations. */
export { openStore } from './open.js';
export { StoreLockedError } from './lock.js';
export { StoreFileModeError } from './file-modes.js';
/** How the last run ended (a marker next to the database), and what recovery resumes with after an unclean stop. */
export { describeRecovery, readRecovery, readRunState, type Recovery, type RunState, type UncleanStop } from './run-state.js';

/** The read scope of a principal (every use case's reads go through it). */
export { readScopeOf } from './read-scope.js';
export {
  createJournalFeed, type ConsumerBatch, type ConsumerRetry, type JournalConsumer, type JournalFeed, type JournalFeedOptions, type JournalFollower,
} from './journal/journal-follower.js';
export type { PermissionFilter, PermissionRepository } from './identity/permissions.js';
export type { SubjectKind, SubjectRecord, SubjectRepository } from './identity/subjects.js';
