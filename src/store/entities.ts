// The entity repository: live entities with soft delete, and the type/attribute indexes kept in
// step with each document (written as a diff, so an update that keeps the shape writes no index page).

import type BetterSqlite3 from 'better-sqlite3';
import { AlreadyExistsError, type Entity, type EntityId, type Iri } from '../ngsi/index.js';
import { decodeEntity, encodeEntityDoc, type EntityRow } from './entity-doc.js';
import type { IriDictionary } from './iris.js';
import type { RunInTx } from './transactions.js';
import type { EntityListQuery, EntityRepository } from './types.js';

const ROW = 'e.id, e.doc, e.created_at, e.modified_at, e.deleted_at';

interface ListParams {
  tenant: string;
  ids?: string;
  types?: string;
  attrs?: string;
  limit?: number;
  offset?: number;
}

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Error && Reflect.get(err, 'code') === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** One prepared statement per filter combination and purpose, built on first use and reused. */
function createListStatements(db: BetterSqlite3.Database) {
  const pages = new Map<string, BetterSqlite3.Statement<[ListParams], EntityRow>>();
  const counts = new Map<string, BetterSqlite3.Statement<[ListParams], number>>();
  /**
   * NOTE: with an id list, look each id up in the live-id index and sort the few hits; left alone
   * the planner prefers walking the tenant's whole creation-order index to avoid that sort.
   */
  const fromOf = (hasIds: boolean): string => (hasIds ? 'entities e INDEXED BY entities_live_id' : 'entities e');
  const whereOf = (hasIds: boolean, hasTypes: boolean, hasAttrs: boolean): string => {
    const where = ['e.tenant = @tenant', 'e.deleted_at IS NULL'];
    if (hasAttrs) {
      where.push('EXISTS (SELECT 1 FROM entity_attrs a WHERE a.entity = e.rowid AND a.iri IN (SELECT value FROM json_each(@attrs)))');
    }
    if (hasIds) where.push('e.id IN (SELECT value FROM json_each(@ids))');
    if (hasTypes) {
      where.push('EXISTS (SELECT 1 FROM entity_types t WHERE t.entity = e.rowid AND t.iri IN (SELECT value FROM json_each(@types)))');
    }
    return where.join(' AND ');
  };
  return {
    page(hasIds: boolean, hasTypes: boolean, hasAttrs: boolean): BetterSqlite3.Statement<[ListParams], EntityRow> {
      const key = `${hasIds}/${hasTypes}/${hasAttrs}`;
      let stmt = pages.get(key);
      if (!stmt) {
        stmt = db.prepare<[ListParams], EntityRow>(
          `SELECT ${ROW} FROM ${fromOf(hasIds)} WHERE ${whereOf(hasIds, hasTypes, hasAttrs)} ORDER BY e.rowid LIMIT @limit OFFSET @offset`,
        );
        pages.set(key, stmt);
      }
      return stmt;
    },
    count(hasIds: boolean, hasTypes: boolean, hasAttrs: boolean): BetterSqlite3.Statement<[ListParams], number> {
      const key = `${hasIds}/${hasTypes}/${hasAttrs}`;
      let stmt = counts.get(key);
      if (!stmt) {
        stmt = db.prepare<[ListParams], number>(`SELECT count(*) FROM ${fromOf(hasIds)} WHERE ${whereOf(hasIds, hasTypes, hasAttrs)}`).pluck();
        counts.set(key, stmt);
      }
      return stmt;
    },
  };
}

export function createEntityRepository(db: BetterSqlite3.Database, iris: IriDictionary, transaction: RunInTx): EntityRepository {
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
    });
  };

  const update = (tenant: string, entity: Entity): boolean =>
    transaction(() => {
      const rowid = liveRowid.get(tenant, entity.id);
      if (rowid === undefined) return false;
      updateRow.run(encodeEntityDoc(entity), entity.createdAt, entity.modifiedAt, entity.deletedAt ?? null, rowid);
      syncIndex('types', rowid, entity.types, false);
      syncIndex('attrs', rowid, Object.keys(entity.attrs), false);
      return true;
    });

  const list = (tenant: string, q: EntityListQuery): { entities: Entity[]; count?: number } => {
    const params: ListParams = { tenant };
    if (q.ids && q.ids.length > 0) params.ids = JSON.stringify(q.ids);
    if (q.types && q.types.length > 0) {
      const known = q.types.map((t) => iris.lookup(t)).filter((id) => id !== undefined);
      // No requested type was ever stored: nothing can match.
      if (known.length === 0) return q.count ? { entities: [], count: 0 } : { entities: [] };
      params.types = JSON.stringify(known);
    }
    if (q.attrs && q.attrs.length > 0) {
      const known = q.attrs.map((a) => iris.lookup(a)).filter((id) => id !== undefined);
      if (known.length === 0) return q.count ? { entities: [], count: 0 } : { entities: [] };
      params.attrs = JSON.stringify(known);
    }
    const hasIds = params.ids !== undefined;
    const hasTypes = params.types !== undefined;
    const hasAttrs = params.attrs !== undefined;
    const out: { entities: Entity[]; count?: number } = { entities: [] };
    if (q.limit > 0) {
      out.entities = listStatements.page(hasIds, hasTypes, hasAttrs).all({ ...params, limit: q.limit, offset: q.offset }).map(decodeEntity);
    }
    if (q.count) out.count = listStatements.count(hasIds, hasTypes, hasAttrs).get(params) ?? 0;
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
    markDeleted: (tenant, id, at) => markDeleted.run(at, tenant, id).changes > 0,
    list,
  };
}
