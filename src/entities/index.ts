// Entity use cases: the single write path for HTTP, MQTT and batch operations.
export { createEntityService } from './service.js';
export type { EntityListQuery } from '../store/index.js';
export type { Actor, EntityService, EntityServiceDeps, UpdateOutcome, UpdateResult, NotUpdated } from './service.js';
export type { AttributeChange } from './history.js';
