// Entities as temporal reads see them (NGSI-LD §5.7.3-5.7.4): the latest stored document of an id,
// live or soft-deleted, listings over those, and the permanent removal of every row of an id.

import type BetterSqlite3 from 'better-sqlite3';
import type { Entity, EntityId } from '../ngsi/index.js';
import { decodeEntity, type EntityRow } from './entity-doc.js';
import { MATCH_NOTHING, translateFilter, type FilterContext } from './entity-filters.js';
import type { IriDictionary } from './iris.js';
import type { RunInTx } from './transactions.js';
import type { EntityListQuery, EntityRepository } from './types.js';

export interface EntityArchive {
  /** The latest document stored for the id: the live entity, else the most recently deleted one. */
  latest(tenant: string, id: EntityId): Entity | undefined;
  /**
   * The latest document of every id matching the query, in order of that document's creation. Unlike
   * the live listing, `attrs` matches entities having history of one of the attributes.
   */
  list(tenant: string, q: EntityListQuery): { entities: Entity[]; count?: number };
  /** Removes every row of the id, live or deleted; false when there was none. */
  purge(tenant: string, id: EntityId, at: number): boolean;
}

const ROW = 'e.id, e.doc, e.created_at, e.modified_at, e.deleted_at';

export function createEntityArchive(
  db: BetterSqlite3.Database, iris: IriDictionary, entities: EntityRepository, transaction: RunInTx,
): EntityArchive {
  const latest = db.prepare<[string, string], EntityRow>(
    `SELECT ${ROW} FROM entities e WHERE e.tenant = ? AND e.id = ? ORDER BY e.rowid DESC LIMIT 1`,
  );
  const removeAll = db.prepare<[string, string]>('DELETE FROM entities WHERE tenant = ? AND id = ?');
  const cache = new Map<string, BetterSqlite3.Statement<[Record<string, unknown>], unknown>>();
  const prepare = (sql: string): BetterSqlite3.Statement<[Record<string, unknown>], unknown> => {
    let stmt = cache.get(sql);
    if (!stmt) {
      if (cache.size >= 64) cache.delete(cache.keys().next().value ?? '');
      stmt = db.prepare<[Record<string, unknown>], unknown>(sql);
      cache.set(sql, stmt);
    }
    return stmt;
  };

  const list = (tenant: string, q: EntityListQuery): { entities: Entity[]; count?: number } => {
    const none = q.count ? { entities: [], count: 0 } : { entities: [] };
    const params: Record<string, unknown> = { tenant };
    // Only the latest row of each id (uses entities_tenant_id).
    const where = ['e.tenant = @tenant', 'NOT EXISTS (SELECT 1 FROM entities n WHERE n.tenant = e.tenant AND n.id = e.id AND n.rowid > e.rowid)'];
    if (q.ids && q.ids.length > 0) {
      params['ids'] = JSON.stringify(q.ids);
      where.push('e.id IN (SELECT value FROM json_each(@ids))');
    }
    for (const [key, list, clause] of [
      ['types', q.types, 'EXISTS (SELECT 1 FROM entity_types x WHERE x.entity = e.rowid AND x.iri IN (SELECT value FROM json_each(@types)))'],
      ['attrs', q.attrs, `EXISTS (SELECT 1 FROM series s WHERE s.tenant = e.tenant AND s.entity_id = e.id
        AND s.attr IN (SELECT value FROM json_each(@attrs)))`],
    ] as const) {
      if (!list || list.length === 0) continue;
      const known = list.map((t) => iris.lookup(t)).filter((id) => id !== undefined);
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
    const whereSql = where.join(' AND ');
    const out: { entities: Entity[]; count?: number } = { entities: [] };
    if (q.limit > 0) {
      // NOTE: the statement selects exactly the EntityRow columns (ROW).
      const rows = prepare(`SELECT ${ROW} FROM entities e WHERE ${whereSql} ORDER BY e.rowid LIMIT @limit OFFSET @offset`)
        .all({ ...params, limit: q.limit, offset: q.offset }) as EntityRow[];
      out.entities = rows.map(decodeEntity);
    }
    if (q.count) {
      // NOTE: a count statement returns one row with column n.
      const row = prepare(`SELECT count(*) AS n FROM entities e WHERE ${whereSql}`).get(params) as { n: number } | undefined;
      out.count = row?.n ?? 0;
    }
    return out;
  };

  return {
    latest: (tenant, id) => {
      const row = latest.get(tenant, id);
      return row && decodeEntity(row);
    },
    list,
    purge: (tenant, id, at) => transaction(() => {
      // The live row first leaves the secondary indexes, as a soft delete does; then every row goes.
      entities.markDeleted(tenant, id, at);
      return removeAll.run(tenant, id).changes > 0;
    }),
  };
}
