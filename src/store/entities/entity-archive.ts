// Entities as temporal reads see them (NGSI-LD §5.7.3-5.7.4): the latest stored document of an id,
// live or soft-deleted, listings over those, and the permanent removal of every row of an id.

import type BetterSqlite3 from 'better-sqlite3';
import type { Entity, EntityId } from '../../ngsi/index.js';
import { ROW, decodeEntity, typesOfDoc, type EntityRow } from './entity-doc.js';
import { createEntitySelect, type SelectScope } from './entity-select.js';
import type { IriDictionary } from '../iris.js';
import type { RunInTx } from '../transactions.js';
import type { EntityArchive, EntityListQuery, EntityRepository } from '../types.js';
import type { ReadFilter, ReadScope } from '../read-scope.js';



export function createEntityArchive(
  db: BetterSqlite3.Database, iris: IriDictionary, entities: EntityRepository, transaction: RunInTx, readFilter: ReadFilter,
): EntityArchive {
  const latest = db.prepare<[string, string], EntityRow>(
    `SELECT ${ROW} FROM entities e WHERE e.tenant = ? AND e.id = ? ORDER BY e.rowid DESC LIMIT 1`,
  );
  const removeAll = db.prepare<[string, string]>('DELETE FROM entities WHERE tenant = ? AND id = ?');
  // Type rows outlive a soft delete (temporal reads select deleted entities by type): they go here,
  // found through each row's document (the type rows are keyed by type first).
  const rowsOfId = db.prepare<[string, string], { rowid: number; doc: string }>(
    'SELECT rowid, doc FROM entities WHERE tenant = ? AND id = ?',
  );
  const removeType = db.prepare<[number, number]>('DELETE FROM entity_types WHERE iri = ? AND entity = ?');
  const removeTypes = (tenant: string, id: EntityId): void => {
    for (const row of rowsOfId.all(tenant, id)) {
      for (const type of typesOfDoc(row.doc)) {
        const iri = iris.lookup(type);
        if (iri !== undefined) removeType.run(iri, row.rowid);
      }
    }
  };
  const select = createEntitySelect(db, iris);
  const LATEST: SelectScope = {
    // Only the latest row of each id (uses entities_tenant_id).
    base: ['e.tenant = @tenant', 'NOT EXISTS (SELECT 1 FROM entities n WHERE n.tenant = e.tenant AND n.id = e.id AND n.rowid > e.rowid)'],
    attrsClause: `EXISTS (SELECT 1 FROM series s WHERE s.tenant = e.tenant AND s.entity_id = e.id
        AND s.attr IN (SELECT value FROM json_each(@attrs)))`,
  };
  const list = (scope: ReadScope, q: EntityListQuery): { entities: Entity[]; count?: number } => select(scope.tenant, q, LATEST, readFilter(scope));

  return {
    latest: ({ tenant }, id) => {
      const row = latest.get(tenant, id);
      return row && decodeEntity(row);
    },
    list,
    purge: (tenant, id, at) => transaction(() => {
      // The live row first leaves the secondary indexes, as a soft delete does; then every row goes.
      entities.markDeleted(tenant, id, at);
      removeTypes(tenant, id);
      return removeAll.run(tenant, id).changes > 0;
    }),
  };
}
