// The contract of a secondary index over live entities, kept in sync inside the entity write's
// transaction. A leaf of its own, so the indexers and their registry do not import each other.

import type BetterSqlite3 from 'better-sqlite3';
import type { Entity } from '../../ngsi/index.js';
import type { IriDictionary } from '../iris.js';

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
