// The entity repository: live entities with soft delete, and the type/attribute indexes kept in
// step with each document (written as a diff, so an update that keeps the shape writes no index page).

import type BetterSqlite3 from 'better-sqlite3';
import { AlreadyExistsError, type Entity, type EntityId, type Iri } from '../ngsi/index.js';
import { decodeEntity, encodeEntityDoc, type EntityRow } from './entity-doc.js';
import type { IriDictionary } from './iris.js';
import type { RunInTx } from './transactions.js';
import type { EntityListQuery, EntityRepository } from './types.js';
import { ENTITY_INDEXERS } from './entity-indexes.js';
import { MATCH_NOTHING, translateFilter, type FilterContext } from './entity-filters.js';

const ROW = 'e.id, e.doc, e.created_at, e.modified_at, e.deleted_at';

type ListParams = Record<string, unknown>;

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Error && Reflect.get(err, 'code') === 'SQLITE_CONSTRAINT_UNIQUE';
}

const STATEMENT_CACHE_SIZE = 128;

/**
 * Page and count statements, cached by their SQL text (the filter combination, never values).
 * NOTE: with an id list, look each id up in the live-id index and sort the few hits; left alone
 * the planner prefers walking the tenant's whole creation-order index to avoid that sort.
 */
function createListStatements(db: BetterSqlite3.Database) {
  const cache = new Map<string, BetterSqlite3.Statement<[ListParams], unknown>>();
  const prepare = (sql: string): BetterSqlite3.Statement<[ListParams], unknown> => {
    let stmt = cache.get(sql);
    if (!stmt) {
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value ?? '');
      stmt = db.prepare<[ListParams], unknown>(sql);
      cache.set(sql, stmt);
    }
    return stmt;
  };
  return {
    page(from: string, where: string): BetterSqlite3.Statement<[ListParams], EntityRow> {
      // NOTE: the statement selects exactly the EntityRow columns (ROW).
      return prepare(`SELECT ${ROW} FROM ${from} WHERE ${where} ORDER BY e.rowid LIMIT @limit OFFSET @offset`) as BetterSqlite3.Statement<[ListParams], EntityRow>;
    },
    prepare,
  };
}

export function createEntityRepository(db: BetterSqlite3.Database, iris: IriDictionary, transaction: RunInTx): EntityRepository {
  const indexers = ENTITY_INDEXERS.map((make) => make(db, iris));
  const getRow = db.prepare<[string, string], EntityRow>(`SELECT ${ROW} FROM entities e WHERE tenant = ? AND id = ? AND deleted_at IS NULL`);
  const getMany = db.prepare<[string, string], EntityRow>(
    `SELECT ${ROW} FROM entities e WHERE tenant = ? AND deleted_at IS NULL AND id IN (SELECT value FROM json_each(?))`,
  );
  const liveRowid = db.prepare<[string, string], number>('SELECT rowid FROM entities WHERE tenant = ? AND id = ? AND deleted_at IS NULL').pluck();
  const insertRow = db.prepare<[string, string, string, number, number, number | null]>(
    'INSERT INTO entities (tenant, id, doc, created_at, modified_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const updateRow = db.prepare<[string, number, number, number | null, number]>(
    'UPDATE entities SET doc = ?, created_at = ?, modified_at = ?, deleted_at = ? WHERE rowid = ?',
  );
  const markDeleted = db.prepare<[number, string, string]>(
    'UPDATE entities SET deleted_at = ? WHERE tenant = ? AND id = ? AND deleted_at IS NULL',
  );
  const index = {
    types: {
      list: db.prepare<[number], number>('SELECT iri FROM entity_types WHERE entity = ?').pluck(),
      add: db.prepare<[number, number]>('INSERT INTO entity_types (entity, iri) VALUES (?, ?)'),
      remove: db.prepare<[number, number]>('DELETE FROM entity_types WHERE entity = ? AND iri = ?'),
    },
    attrs: {
      list: db.prepare<[number], number>('SELECT iri FROM entity_attrs WHERE entity = ?').pluck(),
      add: db.prepare<[number, number]>('INSERT INTO entity_attrs (entity, iri) VALUES (?, ?)'),
      remove: db.prepare<[number, number]>('DELETE FROM entity_attrs WHERE entity = ? AND iri = ?'),
    },
  };
  const listStatements = createListStatements(db);

  /** Makes the index rows of `rowid` equal to `iriList`, touching only what differs. */
  const syncIndex = (which: 'types' | 'attrs', rowid: number, iriList: Iri[], isNew: boolean): void => {
    const stmts = index[which];
    const wanted = new Set(iriList.map((iri) => iris.intern(iri)));
    const present = new Set(isNew ? [] : stmts.list.all(rowid));
    for (const id of present) if (!wanted.has(id)) stmts.remove.run(rowid, id);
    for (const id of wanted) if (!present.has(id)) stmts.add.run(rowid, id);
  };

  const insert = (tenant: string, entity: Entity): void => {
    transaction(() => {
      let rowid: number;
      try {
        rowid = Number(insertRow.run(tenant, entity.id, encodeEntityDoc(entity), entity.createdAt, entity.modifiedAt, entity.deletedAt ?? null).lastInsertRowid);
      } catch (err) {
        // Only the partial unique index on live (tenant, id) can fail this insert with UNIQUE.
        if (isUniqueViolation(err)) throw new AlreadyExistsError('Already exists', `Entity ${entity.id} already exists`, { cause: err });
        throw err;
      }
      syncIndex('types', rowid, entity.types, true);
      syncIndex('attrs', rowid, Object.keys(entity.attrs), true);
      for (const ix of indexers) ix.write(rowid, entity, true);
    });
  };

  const update = (tenant: string, entity: Entity): boolean =>
    transaction(() => {
      const rowid = liveRowid.get(tenant, entity.id);
      if (rowid === undefined) return false;
      updateRow.run(encodeEntityDoc(entity), entity.createdAt, entity.modifiedAt, entity.deletedAt ?? null, rowid);
      syncIndex('types', rowid, entity.types, false);
      syncIndex('attrs', rowid, Object.keys(entity.attrs), false);
      for (const ix of indexers) ix.write(rowid, entity, false);
      return true;
    });

  const list = (tenant: string, q: EntityListQuery): { entities: Entity[]; count?: number } => {
    const params: ListParams = { tenant };
    const where = ['e.tenant = @tenant', 'e.deleted_at IS NULL'];
    const none = q.count ? { entities: [], count: 0 } : { entities: [] };
    const hasIds = q.ids !== undefined && q.ids.length > 0;
    if (hasIds) {
      params['ids'] = JSON.stringify(q.ids);
      where.push('e.id IN (SELECT value FROM json_each(@ids))');
    }
    for (const [key, table, list] of [['types', 'entity_types', q.types], ['attrs', 'entity_attrs', q.attrs]] as const) {
      if (!list || list.length === 0) continue;
      const known = list.map((t) => iris.lookup(t)).filter((id) => id !== undefined);
      // No requested IRI was ever stored: nothing can match.
      if (known.length === 0) return none;
      params[key] = JSON.stringify(known);
      where.push(`EXISTS (SELECT 1 FROM ${table} x WHERE x.entity = e.rowid AND x.iri IN (SELECT value FROM json_each(@${key})))`);
    }
    let n = 0;
    const fctx: FilterContext = { db, iris, param: (prefix) => `${prefix}${n++}` };
    for (const filter of q.filters ?? []) {
      const fragment = translateFilter(filter, fctx);
      if (fragment === MATCH_NOTHING) return none;
      where.push(`(${fragment.sql})`);
      Object.assign(params, fragment.params);
    }
    const from = hasIds ? 'entities e INDEXED BY entities_live_id' : 'entities e';
    const whereSql = where.join(' AND ');
    const out: { entities: Entity[]; count?: number } = { entities: [] };
    if (q.limit > 0) {
      out.entities = listStatements.page(from, whereSql).all({ ...params, limit: q.limit, offset: q.offset }).map(decodeEntity);
    }
    if (q.count) {
      // NOTE: a count statement returns one row with column n.
      const row = listStatements.prepare(`SELECT count(*) AS n FROM ${from} WHERE ${whereSql}`).get(params) as { n: number } | undefined;
      out.count = row?.n ?? 0;
    }
    return out;
  };

  return {
    get: (tenant, id) => {
      const row = getRow.get(tenant, id);
      return row && decodeEntity(row);
    },
    getMany: (tenant, ids) => {
      const out = new Map<EntityId, Entity>();
      if (ids.length === 0) return out;
      for (const row of getMany.all(tenant, JSON.stringify(ids))) out.set(row.id, decodeEntity(row));
      return out;
    },
    exists: (tenant, id) => liveRowid.get(tenant, id) !== undefined,
    insert,
    update,
    markDeleted: (tenant, id, at) => transaction(() => {
      const rowid = liveRowid.get(tenant, id);
      if (rowid === undefined) return false;
      markDeleted.run(at, tenant, id);
      for (const ix of indexers) ix.remove(rowid);
      return true;
    }),
    list,
  };
}
