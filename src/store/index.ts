// The store module's public surface: the only place in edgeld that talks to SQLite.
// Other modules get domain types back; SQL and row shapes never leave this folder.

export type {
  ContextPersistence,
  DeliveryOutcome,
  DeliveryState,
  DiskStats,
  EntityListQuery,
  EntityArchive,
  EntityRepository,
  HistoryInstance,
  HistoryRepository,
  PersistedContext,
  ReadScope,
  Store,
  StoreReader,
  StoreOptions,
  StoredSubscription,
  SubscriptionRepository,
  TxContext,
} from './types.js';
export type { AttributeInfo, DiscoveryRepository, TypeAttributes, TypeInfo } from './discovery.js';
export type { DeviceContext, DeviceRecord, DeviceRepository } from './devices.js';
export type { FederationCounters, FederationProgress, FederationRepository, ParkedChanges } from './federation.js';
export type { IdentityClient, IdentityRepository, IdentityUser, SigningKeyRecord } from './identity.js';
export type {
  MqttPacketRecord, MqttQueuedPacket, MqttSessionRepository, MqttStoredSubscription, MqttSubscriptionRecord, MqttWillRecord,
} from './mqtt-sessions.js';


export type { ChangeJournal, JournalEntry, JournalSources, PruneReport, ReadOptions } from './journal.js';
export type { NewNotification, NotificationQueue, QueuedNotification } from './notification-queue.js';
export type {
  HistoryEditor, HistoryReadOptions, HistoryReader, HistoryRetention, HistorySeries, HistoryWindow, PeriodGrid, PeriodStats,
  TimedInstance, TimeOrder, TimeProperty,
} from './history-types.js';

/** Opens (creating when needed) the database at opts.path, applies pragmas and pending migrations. */
export { openStore } from './open.js';
export { StoreLockedError } from './lock.js';

/** The read scope of a principal (every use case's reads go through it). */
export { readScopeOf } from './read-scope.js';
export {
  createJournalFeed, type ConsumerBatch, type ConsumerRetry, type JournalConsumer, type JournalFeed, type JournalFeedOptions, type JournalFollower,
} from './journal-follower.js';
export type { PermissionFilter, PermissionRepository } from './permissions.js';
export type { SubjectKind, SubjectRecord, SubjectRepository } from './subjects.js';
