// Secondary indexes over live entities (query values, geometries, attribute kinds): each is kept in
// sync by the entity repository inside the same transaction as the entity row.

import type { EntityIndexerFactory } from './entity-indexer.js';
import { createGeoIndexer } from './geo-index.js';
import { createAttributeKindIndexer } from './attribute-kinds.js';
import { createQueryValuesIndexer } from './query-values.js';

export type { EntityIndexer, EntityIndexerFactory } from './entity-indexer.js';

/** Every secondary index, in the order they are maintained. */
export const ENTITY_INDEXERS: EntityIndexerFactory[] = [createAttributeKindIndexer, createGeoIndexer, createQueryValuesIndexer];

