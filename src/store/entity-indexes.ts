// Secondary indexes over live entities (query values, geometries, attribute kinds): each is kept in
// sync by the entity repository inside the same transaction as the entity row.

import type BetterSqlite3 from 'better-sqlite3';
import type { Entity } from '../ngsi/index.js';
import type { IriDictionary } from './iris.js';
import { createGeoIndexer } from './geo-index.js';
import { createAttributeKindIndexer } from './attribute-kinds.js';
import { createQueryValuesIndexer } from './query-values.js';

export interface EntityIndexer {
  readonly name: string;
  /**
   * The entity row `rowid` was inserted (isNew) or its document replaced. `previous`, when given, is
   * the state the index was last written from: an indexer may then diff in memory, and touch only
   * the attributes whose instances changed, instead of reading its rows back.
   */
  write(rowid: number, entity: Entity, isNew: boolean, previous?: Entity): void;
  /** The entity row `rowid` stopped being live (soft delete) or is gone. */
  remove(rowid: number): void;
}

export type EntityIndexerFactory = (db: BetterSqlite3.Database, iris: IriDictionary) => EntityIndexer;

/** Every secondary index, in the order they are maintained. */
export const ENTITY_INDEXERS: EntityIndexerFactory[] = [createAttributeKindIndexer, createGeoIndexer, createQueryValuesIndexer];

