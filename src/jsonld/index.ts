// The jsonld module: JSON-LD contexts for the broker. Loads contexts (bundled, persisted, fetched),
// caches resolved contexts, and turns each into fast term maps (expand/compact without jsonld per request).

export type {
  ContextEntryInfo, ContextInput, ContextKind, ContextPersistence, ContextService, ContextServiceOptions,
  PersistedContext, ResolvedContext,
} from './types.js';
export { createContextService } from './context-service.js';
export { HOSTED_CONTEXT_PATH } from './context-store.js';
