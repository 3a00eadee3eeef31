// Opens the database (directory, pragmas, migrations) and assembles the Store from its parts.

import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { createBucketCatalogue } from './history/buckets.js';
import { createContextPersistence } from './contexts/contexts.js';
import { createCommandRepository } from './commands/commands.js';
import { createDeviceRepository } from './devices/devices.js';
import { createDiscoveryRepository } from './entities/discovery.js';
import { createFederationRepository } from './federation/federation.js';
import { createEntityRepository } from './entities/entities.js';
import { createEntityArchive } from './entities/entity-archive.js';
import { createHistoryRepository } from './history/history.js';
import { createIdentityRepository } from './identity/identity.js';
import { createMqttSessionRepository } from './mqtt/mqtt-sessions.js';
import { createSubscriptionRepository } from './subscriptions/subscriptions.js';
import { createRegistrationRepository } from './registrations/registrations.js';
import { createPermissionRepository } from './identity/permissions.js';
import { createSubjectRepository } from './identity/subjects.js';
import type { ReadFilter } from './read-scope.js';
import { createIriDictionary } from './iris.js';
import { createChangeJournal } from './journal/journal.js';
import { createNotificationQueue } from './subscriptions/notification-queue.js';
import { MIGRATIONS, runMigrations } from './migrations/migrations.js';
import { createTxRunner } from './transactions.js';
import { createCacheGroup } from './tx-cache.js';
import { lockStore } from './lock.js';
import { makePrivateDatabaseFile, makePrivateDir } from './file-modes.js';
import { watchDiskSpace } from './disk-space.js';
import { createStorageUsage } from './storage-usage.js';
import type { DiskStats, Store, StoreOptions } from './types.js';
import { registerSqlFunctions } from './entities/entity-filters.js';
import { registerGeoSqlFunctions } from './entities/geo-sql.js';
import { createStoreCounts } from './store-counts.js';
import { startCheckpointer, type Checkpointer } from './checkpointer.js';

const DEFAULT_BUSY_TIMEOUT_MS = 5000;
/**
 * Bytes the WAL file is trimmed to once it restarts; also the size that sets off a checkpoint
 * (storage.wal-limit-bytes). NOTE: a page changed again before the checkpoint is copied once, so a
 * larger WAL writes fewer bytes per update (README, Disk bytes), at the cost of disk space and of what
 * the start after a crash reads.
 */
const DEFAULT_WAL_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * SQLite's page cache of the main connection, in KiB. NOTE: it fills up under any sustained write
 * and stays resident; 4 MiB instead of 8 took 4-6 MiB off the largest RSS of the benchmark, and a
 * page not in it is one read() from the kernel's file cache.
 */
const CACHE_KIB = 4096;

const isMemory = (path: string): boolean => path === ':memory:' || path === '';

/**
 * NOTE: synchronous=NORMAL in WAL mode syncs only at checkpoints: a power cut may lose the last
 * commits but never corrupts, and it saves an fsync per commit on the SD card.
 * journal_size_limit keeps the WAL from staying large on disk after a burst.
 * NOTE: a file database checkpoints on a worker thread (checkpointer.ts), not in the commit that
 * crosses wal_autocheckpoint: that commit would copy about 4 MiB and fsync twice on the main thread,
 * a stall of several ms in the middle of the event loop.
 * NOTE: foreign keys are declared (they document the schema) but not enforced: checking them cost a
 * B-tree seek per reference on every insert, about a tenth of a batch upsert. The repositories keep
 * references whole (a test runs PRAGMA foreign_key_check after a mixed workload), and the one
 * physical delete of entity rows removes their type rows itself instead of relying on CASCADE.
 */
function applyPragmas(db: Database.Database, busyTimeoutMs: number, walLimitBytes: number, isFile: boolean): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  db.pragma('foreign_keys = OFF');
  db.pragma(`cache_size = -${CACHE_KIB}`);
  db.pragma('temp_store = MEMORY');
  db.pragma(`journal_size_limit = ${Math.trunc(walLimitBytes)}`);
  if (isFile) db.pragma('wal_autocheckpoint = 0');
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function pragmaNumber(db: Database.Database, name: string): number {
  const v: unknown = db.pragma(name, { simple: true });
  return typeof v === 'number' ? v : 0;
}

/** Takes the store lock, opens the database, applies the pragmas and the pending migrations. */
function openDatabase(
  path: string, log: StoreOptions['log'], busyTimeoutMs: number, walLimitBytes: number,
): { db: Database.Database; lock: ReturnType<typeof lockStore> | undefined } {
  // Taken before the database is opened: a second broker must not even run migrations.
  if (!isMemory(path)) makePrivateDatabaseFile(`${path}.lock`, log);
  const lock = isMemory(path) ? undefined : lockStore(path);
  let db: Database.Database;
  try {
    if (!isMemory(path)) makePrivateDatabaseFile(path, log);
    db = new Database(path, { timeout: busyTimeoutMs });
  } catch (err) {
    lock?.release();
    throw err;
  }
  try {
    applyPragmas(db, busyTimeoutMs, walLimitBytes, !isMemory(path));
    registerSqlFunctions(db);
    registerGeoSqlFunctions(db);
    runMigrations(db, MIGRATIONS, log);
  } catch (err) {
    db.close();
    lock?.release();
    throw err;
  }
  return { db, lock };
}

export function openStore(opts: StoreOptions): Store {
  const { path, log } = opts;
  if (!isMemory(path)) makePrivateDir(dirname(path));
  const busyTimeoutMs = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const walLimitBytes = opts.walLimitBytes ?? DEFAULT_WAL_LIMIT_BYTES;
  const { db, lock } = openDatabase(path, log, busyTimeoutMs, walLimitBytes);

  const caches = createCacheGroup(db);
  const runner = createTxRunner(db, caches, log, opts.commitWindowMs ?? 0);
  const iris = createIriDictionary(db, caches);
  const buckets = createBucketCatalogue(db, opts.historyBucket, caches);
  log.info('store opened', { path, journalMode: db.pragma('journal_mode', { simple: true }), schema: MIGRATIONS[MIGRATIONS.length - 1]?.version });

  const checkpointHere = (mode: 'PASSIVE' | 'TRUNCATE'): void => {
    // `mode` is one of two literals, not input.
    db.pragma(`wal_checkpoint(${mode})`);
  };
  // NOTE: the worker's connection is a second one in this process; the store lock (lock.ts) is a
  // separate file, so it neither needs nor takes it, and it runs no migrations (they ran above).
  const checkpointer: Checkpointer | undefined = isMemory(path)
    ? undefined
    : startCheckpointer({ db, path, busyTimeoutMs, walLimitBytes, writes: runner, log });
  const checkpoint = (mode: 'PASSIVE' | 'TRUNCATE' = 'TRUNCATE'): void => {
    if (mode === 'PASSIVE' && checkpointer?.request()) return;
    checkpointHere(mode);
  };
  const disk = isMemory(path) ? undefined : watchDiskSpace({ dir: dirname(path), minFreeBytes: opts.minFreeBytes ?? 0, clock: opts.clock, log });

  const permissions = createPermissionRepository(db);
  const readFilter: ReadFilter = (scope) => (scope.assignees === undefined ? undefined : permissions.readFilter(scope.tenant, scope.assignees));
  const entities = createEntityRepository(db, iris, runner.atomic, readFilter);
  const history = createHistoryRepository({ db, iris, buckets, caches, transaction: runner.atomic });
  const usage = createStorageUsage(db, isMemory(path) ? undefined : { path, busyTimeoutMs });
  const store: Store = {
    transaction: runner.transaction,
    write: runner.write,
    entities,
    archive: createEntityArchive(db, iris, entities, runner.atomic, readFilter),
    history,
    contexts: createContextPersistence(db),
    discovery: createDiscoveryRepository(db, iris, readFilter),
    journal: createChangeJournal(db, runner.atomic, {
      live: (tenant, id) => entities.get({ tenant }, id),
      instance: (tenant, id, attr, datasetId, instanceId) => history.findInstanceOf(tenant, id, attr, datasetId, instanceId),
    }),
    notifications: createNotificationQueue(db, runner.atomic),
    subscriptions: createSubscriptionRepository(db),
    registrations: createRegistrationRepository(db),
    permissions,
    subjects: createSubjectRepository(db),
    identity: createIdentityRepository(db),
    devices: createDeviceRepository(db),
    commands: createCommandRepository(db),
    mqttSessions: createMqttSessionRepository(db, runner.atomic),
    federation: createFederationRepository(db, runner.atomic),
    flush() {
      if (!db.open) return Promise.resolve();
      try {
        runner.flushQueue();
        return Promise.resolve();
      } catch (err) {
        return Promise.reject(err);
      }
    },
    checkpoint,
    close() {
      if (!db.open) return;
      runner.shutdown();
      usage.close();
      checkpointer?.stop();
      try {
        checkpointHere('TRUNCATE');
      } catch (err) {
        log.warn('checkpoint at close failed', { err });
      }
      db.close();
      lock?.release();
      log.info('store closed', { path });
    },
    isOpen: () => db.open,
    hasRoom: () => !usage.isOverBudget() && (disk === undefined || disk.hasRoom()),
    freeDiskBytes: () => disk?.freeBytes(),
    usage,
    diskStats(): DiskStats {
      const dbBytes = pragmaNumber(db, 'page_count') * pragmaNumber(db, 'page_size');
      return { dbBytes, walBytes: isMemory(path) ? 0 : fileSize(`${path}-wal`) };
    },
    ...createStoreCounts(db, buckets),
  };
  return store;
}
