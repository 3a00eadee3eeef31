// The entity repository: live entities with soft delete, and the type/attribute indexes kept in
// step with each document (written as a diff, so an update that keeps the shape writes no index page).

import type BetterSqlite3 from 'better-sqlite3';
import { AlreadyExistsError, type Entity, type EntityId, type Iri } from '../../ngsi/index.js';
import { ROW, decodeEntity, encodeEntityDoc, typesOfDoc, type EntityRow } from './entity-doc.js';
import type { IriDictionary } from '../iris.js';
import type { RunInTx } from '../transactions.js';
import type { EntityListQuery, EntityRepository } from '../types.js';
import { ENTITY_INDEXERS } from './entity-indexes.js';
import { createEntitySelect, type SelectScope } from './entity-select.js';
import type { ReadFilter, ReadScope } from '../read-scope.js';

type EntityStatements = ReturnType<typeof prepareEntityStatements>;

interface DueRow {
  tenant: string;
  id: EntityId;
  expires_at: number;
}

function prepareEntityStatements(db: BetterSqlite3.Database) {
  return {
    getRow: db.prepare<[string, string], EntityRow>(`SELECT ${ROW} FROM entities e WHERE tenant = ? AND id = ? AND deleted_at IS NULL`),
    getMany: db.prepare<[string, string], EntityRow>(
      `SELECT ${ROW} FROM entities e WHERE tenant = ? AND deleted_at IS NULL AND id IN (SELECT value FROM json_each(?))`,
    ),
    liveRowid: db.prepare<[string, string], number>('SELECT rowid FROM entities WHERE tenant = ? AND id = ? AND deleted_at IS NULL').pluck(),
    insertRow: db.prepare<[string, string, string, number, number, number | null, number, number | null]>(
      'INSERT INTO entities (tenant, id, doc, created_at, modified_at, deleted_at, version, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    // NOTE: deleted_at stays out of SET (the row is live and stays so): SQLite rewrites every index
    // whose columns or partial-index condition name a SET column.
    updateRow: db.prepare<[string, number, number, number, number]>(
      'UPDATE entities SET doc = ?, created_at = ?, modified_at = ?, version = ? WHERE rowid = ?',
    ),
    markDeleted: db.prepare<[number, number, number]>('UPDATE entities SET deleted_at = ?, version = ? WHERE rowid = ?'),
    // NOTE: a statement of its own, run only for transient entities (migration 26): the writes of the
    // others never name expires_at, so they never touch its index.
    setExpiry: db.prepare<[number | null, number]>('UPDATE entities SET expires_at = ? WHERE rowid = ?'),
    markDeletedTransient: db.prepare<[number, number, number]>('UPDATE entities SET deleted_at = ?, version = ?, expires_at = NULL WHERE rowid = ?'),
    due: db.prepare<[number, number], DueRow>(
      'SELECT tenant, id, expires_at FROM entities INDEXED BY entities_expiry WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT CAST(? AS INTEGER)',
    ),
    nextExpiry: db.prepare<[], number | null>(
      'SELECT min(expires_at) FROM entities INDEXED BY entities_expiry WHERE expires_at IS NOT NULL',
    ).pluck(),
    addType: db.prepare<[number, number]>('INSERT INTO entity_types (entity, iri) VALUES (?, ?)'),
    removeType: db.prepare<[number, number]>('DELETE FROM entity_types WHERE iri = ? AND entity = ?'),
    storedDoc: db.prepare<[number], string>('SELECT doc FROM entities WHERE rowid = ?').pluck(),
  };
}

/**
 * Makes the type rows of `rowid` equal to `iriList`, touching only what differs; `before` are the
 * types the rows hold now. (Attribute names live in the attribute-kinds index, kept by its indexer.)
 * NOTE: the rows are keyed (type, entity) only, no entity-leading index: what an entity's rows
 * are comes from its document, never from a look-up.
 */
function syncTypes(st: EntityStatements, iris: IriDictionary, rowid: number, iriList: Iri[], before: readonly Iri[]): void {
  if (before.length === 0) {
    // A new row: every type once (a type list may repeat an IRI only through different terms).
    for (let i = 0; i < iriList.length; i++) {
      const iri = iriList[i]!;
      if (iriList.indexOf(iri) === i) st.addType.run(rowid, iris.intern(iri));
    }
    return;
  }
  const wanted = new Set(iriList.map((iri) => iris.intern(iri)));
  const present = new Set(before.map((iri) => iris.intern(iri)));
  for (const id of present) if (!wanted.has(id)) st.removeType.run(id, rowid);
  for (const id of wanted) if (!present.has(id)) st.addType.run(rowid, id);
}

/** The types of the stored row, from its document. */
function storedTypes(st: EntityStatements, rowid: number): Iri[] {
  const doc = st.storedDoc.get(rowid);
  return doc === undefined ? [] : typesOfDoc(doc);
}

const sameTypes = (a: Iri[], b: Iri[]): boolean => a.length === b.length && a.every((t, i) => t === b[i]);

/** The writes of the repository: a row, its type rows and every index, in one transaction. */
function createEntityWrites(
  db: BetterSqlite3.Database, st: EntityStatements, iris: IriDictionary, transaction: RunInTx,
): Pick<EntityRepository, 'insert' | 'update' | 'markDeleted'> {
  const indexers = ENTITY_INDEXERS.map((make) => make(db, iris));
  /**
   * The version the last write stored: every write of a row's representation stores the next one
   * (see migration 17). NOTE: read once, by a scan, as no index knows the column; a rolled back write
   * leaves a gap, never a number used twice.
   */
  let lastVersion = db.prepare<[], number | null>('SELECT max(version) FROM entities').pluck().get() ?? 0;

  const insert = (tenant: string, entity: Entity): void => {
    transaction(() => {
      // NOTE: one live row per (tenant, id) is checked here rather than by a unique partial index:
      // the check runs inside the write transaction (BEGIN IMMEDIATE: no other writer), and the
      // (tenant, id) index every row needs anyway answers it; a second index on the same key cost
      // a B-tree write per create and a rewrite per soft delete. (A look-up then a plain INSERT
      // costs less than one INSERT … SELECT … WHERE NOT EXISTS.)
      if (st.liveRowid.get(tenant, entity.id) !== undefined) throw new AlreadyExistsError('Already exists', `Entity ${entity.id} already exists`);
      const inserted = st.insertRow.run(
        tenant, entity.id, encodeEntityDoc(entity), entity.createdAt, entity.modifiedAt, entity.deletedAt ?? null, ++lastVersion, entity.expiresAt ?? null,
      );
      const rowid = Number(inserted.lastInsertRowid);
      syncTypes(st, iris, rowid, entity.types, []);
      for (const ix of indexers) ix.write(rowid, entity, true);
    });
  };

  const update = (tenant: string, entity: Entity, previous?: Entity): boolean =>
    transaction(() => {
      const rowid = st.liveRowid.get(tenant, entity.id);
      if (rowid === undefined) return false;
      if (!previous) syncTypes(st, iris, rowid, entity.types, storedTypes(st, rowid));
      else if (!sameTypes(previous.types, entity.types)) syncTypes(st, iris, rowid, entity.types, previous.types);
      st.updateRow.run(encodeEntityDoc(entity), entity.createdAt, entity.modifiedAt, ++lastVersion, rowid);
      // Without `previous` the stored expiry is unknown: written whatever it was.
      if (previous === undefined || previous.expiresAt !== entity.expiresAt) st.setExpiry.run(entity.expiresAt ?? null, rowid);
      for (const ix of indexers) ix.write(rowid, entity, false, previous);
      return true;
    });

  const markDeleted = (tenant: string, id: EntityId, at: number, transient = true): boolean => transaction(() => {
    const rowid = st.liveRowid.get(tenant, id);
    if (rowid === undefined) return false;
    (transient ? st.markDeletedTransient : st.markDeleted).run(at, ++lastVersion, rowid);
    for (const ix of indexers) ix.remove(rowid);
    return true;
  });

  return { insert, update, markDeleted };
}

/**
 * NOTE: with an id list, look each id up in the (tenant, id) index and sort the few hits; left alone
 * the planner prefers walking the whole table in creation order to avoid that sort.
 */
const LIVE: SelectScope = {
  base: ['e.tenant = @tenant', 'e.deleted_at IS NULL'],
  attrsClause: 'EXISTS (SELECT 1 FROM entity_attr_kinds x WHERE x.entity = e.rowid AND x.attr IN (SELECT value FROM json_each(@attrs)))',
  fromWithIds: 'entities e INDEXED BY entities_tenant_id',
};

export function createEntityRepository(
  db: BetterSqlite3.Database, iris: IriDictionary, transaction: RunInTx, readFilter: ReadFilter,
): EntityRepository {
  const st = prepareEntityStatements(db);
  const { insert, update, markDeleted } = createEntityWrites(db, st, iris, transaction);
  const select = createEntitySelect(db, iris);
  const list = (scope: ReadScope, q: EntityListQuery): { entities: Entity[]; count?: number } => select(scope.tenant, q, LIVE, readFilter(scope));

  return {
    get: ({ tenant }, id) => {
      const row = st.getRow.get(tenant, id);
      return row && decodeEntity(row);
    },
    getMany: (scope, ids) => {
      const { tenant } = scope;
      const out = new Map<EntityId, Entity>();
      if (ids.length === 0) return out;
      const access = readFilter(scope);
      if (access !== undefined) {
        for (const e of select(tenant, { ids, limit: ids.length, offset: 0, count: false }, LIVE, access).entities) out.set(e.id, e);
        return out;
      }
      for (const row of st.getMany.all(tenant, JSON.stringify(ids))) out.set(row.id, decodeEntity(row));
      return out;
    },
    exists: ({ tenant }, id) => st.liveRowid.get(tenant, id) !== undefined,
    insert,
    update,
    markDeleted,
    list,
    dueToExpire: (now, limit) => st.due.all(now, limit).map((r) => ({ tenant: r.tenant, id: r.id, expiresAt: r.expires_at })),
    nextExpiry: () => st.nextExpiry.get() ?? undefined,
  };
}
