// The store module's public surface: the only place in edgeld that talks to SQLite.
// Other modules get domain types back; SQL and row shapes never leave this folder.

export type {
  ContextPersistence,
  DiskStats,
  EntityListQuery,
  EntityRepository,
  HistoryInstance,
  HistoryRepository,
  PersistedContext,
  Store,
  StoreOptions,
  TxContext,
} from './types.js';

/** Opens (creating when needed) the database at opts.path, applies pragmas and pending migrations. */
export { openStore } from './open.js';
