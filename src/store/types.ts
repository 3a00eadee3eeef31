// The store's public contracts: the Store handle, its repositories and the shapes they return.
// Row shapes and SQL stay private to this module; only domain types cross this boundary.

import type { Clock, ContextPersistence, Logger, MqttSessionStore } from '../lib/index.js';
import type { HistoryEditor, HistoryReader, HistoryRetention } from './history/history-types.js';
import type { RollupRepository } from './history/history-types.js';
import type { Entity, EntityFilter, EntityId, HistoryInstance, Iri } from '../ngsi/index.js';

export type { HistoryInstance };
import type { DiscoveryRepository } from './entities/discovery.js';
import type { CommandRepository } from './commands/commands.js';
import type { DeviceRepository } from './devices/devices.js';
import type { FederationRepository } from './federation/federation.js';
import type { IdentityRepository } from './identity/identity.js';
import type { ChangeJournal } from './journal/journal.js';
import type { NotificationQueue } from './subscriptions/notification-queue.js';
import type { RegistrationRepository } from './registrations/registrations.js';
import type { ReadScope } from './read-scope.js';
import type { PermissionRepository } from './identity/permissions.js';
import type { SubjectRepository } from './identity/subjects.js';
import type { TxContext } from './tx-context.js';
import type { StorageUsage } from './storage-usage.js';

export type { TxContext };

export type { ReadScope };

export interface StoreOptions {
  /** Database file path, or ':memory:'. */
  path: string;
  busyTimeoutMs?: number;
  historyBucket: 'day' | 'month';
  log: Logger;
  clock: Clock;
  /** Free bytes below which `hasRoom()` is false (storage.min-free-bytes); 0 or absent: never. */
  minFreeBytes?: number;
  /** WAL size that sets off a checkpoint and that the WAL is trimmed to (storage.wal-limit-bytes); 4 MiB when absent. */
  walLimitBytes?: number;
  /** Milliseconds a queued write waits for others to share its commit (default 0: the next turn). */
  commitWindowMs?: number;
}


export interface DiskStats {
  /** page_count * page_size of the main database. */
  dbBytes: number;
  /** Size of the WAL file; 0 when it does not exist or the database is in memory. */
  walBytes: number;
}

export interface Store {
  /**
   * Runs fn in one IMMEDIATE transaction, synchronously; onCommit hooks run after COMMIT, in order;
   * nothing runs on rollback. Nested calls join the outer transaction inside a SAVEPOINT, so a
   * nested failure the caller catches undoes only the nested writes.
   */
  transaction<T>(fn: (tx: TxContext) => T): T;
  /**
   * Group commit: writes queued in one event-loop turn (or 200 of them) run in ONE transaction.
   * A throwing fn fails alone: the batch is then run again with a SAVEPOINT per write, so only that
   * write is rolled back and only its promise rejects. Promises settle and onCommit hooks run after
   * COMMIT; a failed COMMIT rejects all. NOTE: fn may therefore run twice; it must act only through
   * the store and `tx.onCommit` (no other side effects).
   */
  write<T>(fn: (tx: TxContext) => T): Promise<T>;
  readonly entities: EntityRepository;
  readonly history: HistoryRepository;
  /** Latest documents of ids, live or soft-deleted, for temporal reads; permanent removal. */
  readonly archive: EntityArchive;
  readonly contexts: ContextPersistence;
  /** Entity types and attributes of live entities (NGSI-LD §5.7.5-5.7.9). */
  readonly discovery: DiscoveryRepository;
  /** One row per entity and write, appended in the write's transaction; followed by readers. */
  readonly journal: ChangeJournal;
  /** Notifications waiting for delivery (the notifier's durable queue). */
  readonly notifications: NotificationQueue;
  /** NGSI-LD subscriptions (§5.8) and their delivery counters. */
  readonly subscriptions: SubscriptionRepository;
  /** Context source registrations (§5.2.9) and their match index. */
  readonly registrations: RegistrationRepository;
  /** Permissions of the authorization model (interface 2.6) and the read filter of a subject. */
  readonly permissions: PermissionRepository;
  /** Users and groups known from valid tokens (interface 2.8). */
  readonly subjects: SubjectRepository;
  /** Users, clients and signing keys of the built-in identity provider. */
  readonly identity: IdentityRepository;
  /** MQTT devices: the entity each writes, its measurement mapping and its secret hash. */
  readonly devices: DeviceRepository;
  /** Commands issued to devices, from the write that issued each to its answer or expiry. */
  readonly commands: CommandRepository;
  /** The embedded MQTT broker's retained messages, persistent sessions and wills. */
  readonly mqttSessions: MqttSessionStore;
  /** The federation drain's parked changes and counters. */
  readonly federation: FederationRepository;
  /** Commits what is queued now; resolves when it is committed (used at shutdown). */
  flush(): Promise<void>;
  /**
   * PRAGMA wal_checkpoint: TRUNCATE (the default) waits for readers and empties the WAL file; PASSIVE
   * copies what it can without waiting for anyone, for a periodic job. A file database checkpoints on
   * a worker thread by itself whenever the WAL outgrows journal_size_limit; PASSIVE asks that worker
   * for a checkpoint now and returns (it runs here when there is no worker).
   */
  checkpoint(mode?: 'PASSIVE' | 'TRUNCATE'): void;
  /**
   * Whether the database's file system has more free space than storage.min-free-bytes (always, in
   * memory), and the database is not held at its disk budget (storage.max-bytes, `usage`). Checked
   * before each write; the free-space figure is at most a few seconds old.
   */
  hasRoom(): boolean;
  /** Free bytes of the database's file system by the latest figure; undefined when unknown or in memory. */
  freeDiskBytes(): number | undefined;
  /** Pages in use, bytes per tier (dbstat), the daily figures and the budget's hold on writes. */
  readonly usage: StorageUsage;
  /** Commits what is queued synchronously, checkpoints and closes. Idempotent. */
  close(): void;
  isOpen(): boolean;
  /** Bytes used on disk, for metrics. */
  diskStats(): DiskStats;
  /**
   * Entities not deleted, over all tenants. NOTE: a scan of the entities table; metrics count it once
   * at start-up and follow the change events from there.
   */
  countLiveEntities(): number;
  /**
   * Live entities no subject owns (made while authentication was off): admin-only until an
   * administrator grants rights on them. NOTE: two scans of the entities table, like countLiveEntities;
   * asked once at start-up, with authentication on.
   */
  countOwnerlessEntities(): number;
  /**
   * History rows, estimated from the span of row ids in each time bucket (a few B-tree descents):
   * exact while rows are only appended (and dropped with their bucket); rows deleted from inside a
   * bucket (a temporal entity or instance deleted) still count until retention drops that bucket.
   */
  estimateHistoryRows(): number;
}

/**
 * The store as a reader sees it: no write method. Features that only read (temporal reads, the
 * notifier's look-ups) take this, so writing past the write core does not even type-check.
 */
export interface StoreReader {
  readonly entities: Pick<EntityRepository, 'get' | 'getMany' | 'exists' | 'list'>;
  readonly history: HistoryReader & Pick<HistoryRepository, 'listForEntity' | 'findInstance' | 'rollups'>;
  readonly archive: Pick<EntityArchive, 'latest' | 'list'>;
  readonly discovery: DiscoveryRepository;
  /** The permissions that may apply to one entity (the read check of a single entity). */
  readonly permissions: Pick<PermissionRepository, 'applicableTo'>;
}

export interface EntityListQuery {
  /** Any-of, expanded type IRIs. An empty list means no constraint. */
  types?: Iri[];
  /** Any-of. An empty list means no constraint. */
  ids?: EntityId[];
  /** Any-of, expanded attribute IRIs: entities having at least one of them. */
  attrs?: Iri[];
  /** Further filters (q, scopeQ, geo, type selection, idPattern); all must hold. */
  filters?: EntityFilter[];
  /** Entities in id order instead of creation order (orderBy=id, NGSI-LD v1.9 §4.23). */
  orderById?: 'asc' | 'desc';
  limit: number;
  offset: number;
  count: boolean;
}

/** Entities as temporal reads see them: latest documents, live or soft-deleted; permanent removal. */
export interface EntityArchive {
  /** The latest document stored for the id: the live entity, else the most recently deleted one. */
  latest(scope: ReadScope, id: EntityId): Entity | undefined;
  /**
   * The latest document of every id matching the query, in order of that document's creation. Unlike
   * the live listing, `attrs` matches entities having history of one of the attributes.
   */
  list(scope: ReadScope, q: EntityListQuery): { entities: Entity[]; count?: number };
  /** Removes every row of the id, live or deleted; false when there was none. */
  purge(tenant: string, id: EntityId, at: number): boolean;
}

export interface EntityRepository {
  /** The live entity with that id. */
  get(scope: ReadScope, id: EntityId): Entity | undefined;
  /** The live entities among ids; missing ones are simply absent from the map. */
  getMany(scope: ReadScope, ids: EntityId[]): Map<EntityId, Entity>;
  exists(scope: ReadScope, id: EntityId): boolean;
  /** Throws AlreadyExistsError when a live entity has that id. A soft-deleted id may be created again. */
  insert(tenant: string, entity: Entity): void;
  /** Replaces the document of a live entity (types/attrs indexes kept in sync); false when none. */
  /**
   * `previous`: the stored state this replaces, when the caller read it in the same transaction
   * (secondary indexes then diff in memory instead of reading their rows back).
   */
  update(tenant: string, entity: Entity, previous?: Entity): boolean;
  /**
   * Soft delete: sets deletedAt and keeps the row for temporal reads; false when no live entity.
   * `transient: false` says the entity has no expiresAt (its row then skips clearing one); default true.
   */
  markDeleted(tenant: string, id: EntityId, at: number, transient?: boolean): boolean;
  /** Live entities in creation order; count computed only when asked. */
  list(scope: ReadScope, q: EntityListQuery): { entities: Entity[]; count?: number };
  /** Live entities of every tenant whose expiresAt is at or before `now` (NGSI-LD §4.22), earliest first, at most `limit`. */
  dueToExpire(now: number, limit: number): DueEntity[];
  /** The earliest expiresAt of a live entity, over all tenants; undefined when no entity is transient. */
  nextExpiry(): number | undefined;
}

/** A transient entity whose expiresAt has come. */
export interface DueEntity {
  tenant: string;
  id: EntityId;
  expiresAt: number;
}


/** Appends, reads (history-types), edits and retention of attribute history. */
export interface HistoryRepository extends HistoryReader, HistoryEditor, HistoryRetention {
  /**
   * Appends instances atomically (joins the caller's transaction when there is one). `newSeries`
   * says the instances most likely start their series (the first instances of a created entity):
   * the series is then created first and looked up only when it already exists, without asking
   * the cache, where it would not be.
   */
  append(tenant: string, instances: HistoryInstance[], opts?: { newSeries?: boolean }): void;
  /** All instances of an entity (optionally one attribute), ordered by (attr, datasetId, time, insertion). */
  listForEntity(scope: ReadScope, entityId: EntityId, attr?: Iri): HistoryInstance[];
  /** Names of the bucket tables that exist, oldest first. */
  buckets(): string[];
  /** The per-minute and per-hour summaries of history. */
  readonly rollups: RollupRepository;
  /** The series of a tenant, or of its entities of a type (an expanded IRI; soft-deleted entities included). */
  seriesOf(tenant: string, type?: string): number[];
}

/** What delivering notifications of a subscription has done so far (NGSI-LD §5.2.14 read-only members). */
export interface DeliveryState {
  timesSent: number;
  lastNotification?: number;
  lastSuccess?: number;
  lastFailure?: number;
  /** ok after a success, failed after a failure; absent before the first attempt. */
  status?: 'ok' | 'failed';
  /** Why the last failure failed. */
  lastError?: string;
}

/** One delivery attempt's outcome. */
export interface DeliveryOutcome {
  at: number;
  ok: boolean;
  error?: string;
  /** Notifications this outcome stands for (successes recorded together); default 1. */
  count?: number;
}

/**
 * A stored subscription: its document (the subscriptions module's own JSON encoding of the model,
 * opaque here) and the delivery counters kept beside it so that recording a delivery is cheap.
 */
export interface StoredSubscription {
  id: string;
  doc: unknown;
  createdAt: number;
  modifiedAt: number;
  delivery: DeliveryState;
  /** The subject that created it (authentication on). */
  owner?: string;
  /** A context source registration subscription (NGSI-LD §5.11): listed apart from entity subscriptions. */
  csource?: boolean;
}

export interface SubscriptionRepository {
  /** Throws AlreadyExistsError when the tenant has a subscription with that id. */
  insert(tenant: string, sub: StoredSubscription): void;
  get(tenant: string, id: string): StoredSubscription | undefined;
  /**
   * In creation order, those of `owner` when given; count computed only when asked. Entity
   * subscriptions, or with `csource` the context source registration subscriptions.
   */
  list(tenant: string, page: { limit: number; offset: number; count: boolean }, owner?: string, csource?: boolean): { items: StoredSubscription[]; count?: number };
  /** Replaces the document (delivery counters are kept) and, when given, the owner; false when there is none. */
  replace(tenant: string, id: string, doc: unknown, modifiedAt: number, owner?: string): boolean;
  delete(tenant: string, id: string): boolean;
  /** Every subscription of every tenant, for the in-memory registry at start-up. */
  listAll(): Array<{ tenant: string; sub: StoredSubscription }>;
  /** Counts one delivery attempt; returns the new state, undefined when the subscription is gone. */
  recordDelivery(tenant: string, id: string, outcome: DeliveryOutcome): DeliveryState | undefined;
}
