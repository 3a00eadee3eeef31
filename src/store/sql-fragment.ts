// The contract between the entity query and its filter translators (q, geo, ids): SQL fragments
// with named parameters. A leaf of its own, so translators and their registry do not import each other.

import type BetterSqlite3 from 'better-sqlite3';
import type { EntityFilter } from '../ngsi/index.js';
import type { IriDictionary } from './iris.js';

export interface SqlFragment {
  /** A boolean SQL expression over `e` (the entities row); parameters as `@name`. */
  sql: string;
  params: Record<string, unknown>;
  /**
   * The expression is `e.rowid IN (<index search>)` AND-ed with further checks: a list of candidates
   * the planner can start from (the q values index, the attribute index, the R*Tree).
   */
  isRowidList?: boolean;
}

/** A filter that cannot match anything (e.g. an attribute never stored). */
export const MATCH_NOTHING: SqlFragment = { sql: '0', params: {} };

export interface FilterContext {
  db: BetterSqlite3.Database;
  iris: IriDictionary;
  /** A fresh parameter name, unique within the statement. */
  param(prefix: string): string;
}

export type FilterTranslator = (filter: EntityFilter, ctx: FilterContext) => SqlFragment | undefined;
