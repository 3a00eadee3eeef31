// Entity use cases: the single write path for HTTP, MQTT and batch operations.
export { createEntityService } from './service.js';
export type { Actor, EntityService, EntityServiceDeps, EntityListQuery, UpdateOutcome, UpdateResult, NotUpdated } from './service.js';
export type { AttributeChange } from './history.js';
