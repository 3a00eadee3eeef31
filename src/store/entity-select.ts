// One listing engine for entity rows: the where clause of an EntityListQuery (ids, types, attributes,
// filters) over `entities e`, a page in creation order and an optional count, with statements cached
// by their SQL text (the filter combination, never values).

import type BetterSqlite3 from 'better-sqlite3';
import type { Entity } from '../ngsi/index.js';
import { ROW, decodeEntity, type EntityRow } from './entity-doc.js';
import { MATCH_NOTHING, translateFilter, type FilterContext } from './entity-filters.js';
import type { IriDictionary } from './iris.js';
import type { EntityListQuery } from './types.js';

const STATEMENT_CACHE_SIZE = 128;

export interface SelectScope {
  /** Conditions every row must meet besides the query (tenant, liveness, …); `@tenant` is bound. */
  base: string[];
  /** The clause for `attrs` (entities having any of the IRI ids in `@attrs`). */
  attrsClause: string;
  /** FROM clause to use when the query lists ids (an index hint). */
  fromWithIds?: string;
}

export type EntitySelect = (tenant: string, q: EntityListQuery, scope: SelectScope) => { entities: Entity[]; count?: number };

export function createEntitySelect(db: BetterSqlite3.Database, iris: IriDictionary): EntitySelect {
  const cache = new Map<string, BetterSqlite3.Statement<[Record<string, unknown>], unknown>>();
  const prepare = (sql: string): BetterSqlite3.Statement<[Record<string, unknown>], unknown> => {
    let stmt = cache.get(sql);
    if (!stmt) {
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value ?? '');
      stmt = db.prepare<[Record<string, unknown>], unknown>(sql);
      cache.set(sql, stmt);
    }
    return stmt;
  };

  return (tenant, q, scope) => {
    const none = q.count ? { entities: [], count: 0 } : { entities: [] };
    const params: Record<string, unknown> = { tenant };
    const where = [...scope.base];
    const hasIds = q.ids !== undefined && q.ids.length > 0;
    if (hasIds) {
      params['ids'] = JSON.stringify(q.ids);
      where.push('e.id IN (SELECT value FROM json_each(@ids))');
    }
    const clauses = [
      ['types', q.types, 'EXISTS (SELECT 1 FROM entity_types x WHERE x.entity = e.rowid AND x.iri IN (SELECT value FROM json_each(@types)))'],
      ['attrs', q.attrs, scope.attrsClause],
    ] as const;
    for (const [key, list, clause] of clauses) {
      if (!list || list.length === 0) continue;
      const known = list.map((t) => iris.lookup(t)).filter((id) => id !== undefined);
      // No requested IRI was ever stored: nothing can match.
      if (known.length === 0) return none;
      params[key] = JSON.stringify(known);
      where.push(clause);
    }
    let n = 0;
    const fctx: FilterContext = { db, iris, param: (prefix) => `${prefix}${n++}` };
    for (const filter of q.filters ?? []) {
      const fragment = translateFilter(filter, fctx);
      if (fragment === MATCH_NOTHING) return none;
      where.push(`(${fragment.sql})`);
      Object.assign(params, fragment.params);
    }
    const from = hasIds && scope.fromWithIds ? scope.fromWithIds : 'entities e';
    const whereSql = where.join(' AND ');
    const out: { entities: Entity[]; count?: number } = { entities: [] };
    if (q.limit > 0) {
      // NOTE: the statement selects exactly the EntityRow columns (ROW).
      const rows = prepare(`SELECT ${ROW} FROM ${from} WHERE ${whereSql} ORDER BY e.rowid LIMIT @limit OFFSET @offset`)
        .all({ ...params, limit: q.limit, offset: q.offset }) as EntityRow[];
      out.entities = rows.map(decodeEntity);
    }
    if (q.count) {
      // NOTE: a count statement returns one row with column n.
      const row = prepare(`SELECT count(*) AS n FROM ${from} WHERE ${whereSql}`).get(params) as { n: number } | undefined;
      out.count = row?.n ?? 0;
    }
    return out;
  };
}
