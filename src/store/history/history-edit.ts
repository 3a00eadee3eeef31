// Temporal writes on stored history (NGSI-LD §5.6.12-5.6.16): observed instances overwriting the same
// instant, instance edits by id, series removal, and the row-level steps of retention.

import type BetterSqlite3 from 'better-sqlite3';
import { instantOfInstanceId, type EntityId, type Iri } from '../../ngsi/index.js';
import { STORED_ROW_COLUMNS, type BucketCatalogue, type StoredHistoryRow } from './buckets.js';
import { createRowBatch } from './history-batch.js';
import { decodeInstance, encodeInstance, encodeInstanceId } from './history-codec.js';
import { createStatementCache, type StatementCache } from './history-sql.js';
import type { HistoryEditor, HistoryReader, HistoryRetention, HistorySeries, RollupRepository } from './history-types.js';
import { seriesClause } from './series-filter.js';
import type { RunInTx } from '../transactions.js';
import type { HistoryInstance } from '../types.js';
import type { ReadScope } from '../read-scope.js';

export interface SeriesKeys {
  /** The id of a series, created when new (inside the caller's transaction). */
  idOf(tenant: string, entityId: EntityId, attr: Iri, datasetId: string | undefined): number;
  /** The id of a series when it exists (never creates one). */
  find(tenant: string, entityId: EntityId, attr: Iri, datasetId: string | undefined): number | undefined;
  /** Forgets cached ids of series that were removed. */
  forget(tenant: string, series: readonly HistorySeries[]): void;
}

interface EditDeps {
  db: BetterSqlite3.Database;
  buckets: BucketCatalogue;
  transaction: RunInTx;
  keys: SeriesKeys;
  reader: HistoryReader;
  rollups: RollupRepository;
}

const keyOf = (s: HistorySeries): Pick<HistoryInstance, 'entityId' | 'attr' | 'datasetId'> =>
  (s.datasetId === undefined ? { entityId: s.entityId, attr: s.attr } : { entityId: s.entityId, attr: s.attr, datasetId: s.datasetId });

/** What the edits below share: the bucket tables' statements and the editor's deps. */
interface EditContext {
  statements: StatementCache;
  buckets: BucketCatalogue;
  keys: SeriesKeys;
  reader: HistoryReader;
  rollups: RollupRepository;
}

type Located = { table: string; row: StoredHistoryRow; series: HistorySeries };

/** Where an instance is stored: its bucket, row and series. */
function locate(c: EditContext, scope: ReadScope, entityId: EntityId, attr: Iri, instanceId: string): Located | undefined {
  const { statements, buckets } = c;
  const series = c.reader.series(scope, [entityId], [attr]);
  if (series.length === 0) return undefined;
  const params = { ids: JSON.stringify(series.map((s) => s.id)), iid: encodeInstanceId(instanceId) };
  // The instant an id carries (instanceIdAt) leads to its row with one seek on (series, t); an id
  // without one, or a row moved since (an edited observedAt), is looked for by a scan of the series.
  const at = instantOfInstanceId(instanceId);
  const bucket = at === undefined ? undefined : buckets.list().find((b) => at >= b.startMs && at < b.endMs);
  if (at !== undefined && bucket !== undefined) {
    const row = statements.get<StoredHistoryRow>(`SELECT ${STORED_ROW_COLUMNS} FROM ${bucket.name}
      WHERE series IN (SELECT value FROM json_each(@ids)) AND t = @t AND instance_id = @iid LIMIT 1`).get({ ...params, t: at });
    const s = row && series.find((x) => x.id === row.series);
    if (row && s) return { table: bucket.name, row, series: s };
  }
  // NOTE: no index on instance_id (it would cost every history write a B-tree insert).
  for (const b of buckets.list()) {
    const row = statements.get<StoredHistoryRow>(`SELECT ${STORED_ROW_COLUMNS} FROM ${b.name}
      WHERE series IN (SELECT value FROM json_each(@ids)) AND instance_id = @iid LIMIT 1`).get(params);
    const s = row && series.find((x) => x.id === row.series);
    if (row && s) return { table: b.name, row, series: s };
  }
  return undefined;
}

/** Writes observed instances, each replacing a stored one of its series at the same instant (in the caller's transaction). */
function upsertObserved(c: EditContext, tenant: string, instances: readonly HistoryInstance[]): void {
  const { statements, buckets, keys } = c;
  const batch = createRowBatch(buckets);
  // NOTE: the instances of one series mostly come one after another: its id is looked up once.
  let last: HistoryInstance | undefined;
  let series = 0;
  for (let k = 0; k < instances.length; k++) {
    const inst = instances[k]!;
    if (inst.observedAt === undefined) throw new Error('an observed history instance needs observedAt');
    if (last?.entityId !== inst.entityId || last.attr !== inst.attr || last.datasetId !== inst.datasetId) {
      series = keys.idOf(tenant, inst.entityId, inst.attr, inst.datasetId);
      last = inst;
    }
    const t = inst.observedAt;
    // An instant not after one of the same series still in the batch: that row goes in first,
    // so that the look below finds it and this row replaces it.
    if (batch.holdsUpTo(series, t)) batch.flush();
    const existing = buckets.existingFor(t);
    // NOTE: measurements mostly arrive in time order: a later instant than any stored needs no look.
    if (existing?.mayHold(series, t) === true
      && statements.get(`DELETE FROM ${existing.name} WHERE series = @series AND t = @t AND observed_at IS NOT NULL`).run({ series, t }).changes > 0) {
      c.rollups.rowsDeleted(existing.name);
    }
    batch.add(series, inst);
  }
  batch.flush();
}

function findInstanceOf(
  c: EditContext, tenant: string, entityId: EntityId, attr: Iri, datasetId: string | undefined, instanceId: string,
): HistoryInstance | undefined {
  const series = c.keys.find(tenant, entityId, attr, datasetId);
  if (series === undefined) return undefined;
  const at = instantOfInstanceId(instanceId);
  const bucket = at === undefined ? undefined : c.buckets.existingFor(at);
  if (at !== undefined && bucket !== undefined) {
    const row = c.statements.get<StoredHistoryRow>(
      `SELECT ${STORED_ROW_COLUMNS} FROM ${bucket.name} WHERE series = @series AND t = @t AND instance_id = @iid LIMIT 1`)
      .get({ series, t: at, iid: encodeInstanceId(instanceId) });
    if (row) return decodeInstance(row, datasetId === undefined ? { entityId, attr } : { entityId, attr, datasetId });
  }
  // An id carrying no instant, or a row an observedAt edit moved: the search of every series of the attribute.
  const found = locate(c, { tenant }, entityId, attr, instanceId);
  return found && decodeInstance(found.row, keyOf(found.series));
}

export function createHistoryEditor({ db, buckets, transaction, keys, reader, rollups }: EditDeps): HistoryEditor & HistoryRetention {
  const statements = createStatementCache(db, buckets);
  const removeSeriesRows = db.prepare<[string]>('DELETE FROM series WHERE id IN (SELECT value FROM json_each(?))');
  const c: EditContext = { statements, buckets, keys, reader, rollups };

  return {
    upsertObserved(tenant, instances) {
      if (instances.length === 0) return;
      transaction(() => upsertObserved(c, tenant, instances));
    },

    findInstance(scope, entityId, attr, instanceId) {
      const found = locate(c, scope, entityId, attr, instanceId);
      return found && decodeInstance(found.row, keyOf(found.series));
    },

    findInstanceOf: (tenant, entityId, attr, datasetId, instanceId) => findInstanceOf(c, tenant, entityId, attr, datasetId, instanceId),

    modifyInstance: (tenant, entityId, attr, instanceId, change) => transaction(() => {
      const found = locate(c, { tenant }, entityId, attr, instanceId);
      if (!found) return false;
      const updated = change(decodeInstance(found.row, keyOf(found.series)));
      const row = encodeInstance(keys.idOf(tenant, updated.entityId, updated.attr, updated.datasetId), updated);
      statements.get(`DELETE FROM ${found.table} WHERE rowid = @rid`).run({ rid: found.row.rid });
      // The summary the instance leaves is computed again; the one it lands in, when its new row is read.
      rollups.markDirty(found.row.series, found.row.t);
      rollups.rowsDeleted(found.table);
      buckets.tableFor(row.t).insert(row);
      return true;
    }),

    deleteInstance: (tenant, entityId, attr, instanceId) => transaction(() => {
      const found = locate(c, { tenant }, entityId, attr, instanceId);
      if (!found) return false;
      statements.get(`DELETE FROM ${found.table} WHERE rowid = @rid`).run({ rid: found.row.rid });
      rollups.markDirty(found.row.series, found.row.t);
      rollups.rowsDeleted(found.table);
      return true;
    }),

    removeSeries: (tenant, entityId, attr, datasetId) => transaction(() => {
      const all = reader.series({ tenant }, [entityId], attr === undefined ? undefined : [attr]);
      const series = attr === undefined || datasetId === 'all' ? all
        : all.filter((s) => s.datasetId === (datasetId === undefined || datasetId === 'default' ? undefined : datasetId));
      if (series.length === 0) return 0;
      const ids = JSON.stringify(series.map((s) => s.id));
      for (const b of buckets.list()) {
        statements.get(`DELETE FROM ${b.name} WHERE series IN (SELECT value FROM json_each(@ids))`).run({ ids });
        rollups.rowsDeleted(b.name);
      }
      removeSeriesRows.run(ids);
      rollups.removeSeries(series.map((s) => s.id));
      keys.forget(tenant, series);
      return series.length;
    }),

    dropBucketBefore: (horizon) => transaction(() => {
      const oldest = buckets.list().find((b) => b.endMs <= horizon);
      if (oldest) {
        buckets.drop(oldest.name);
        rollups.forgetBucket(oldest.name);
        rollups.noteDropped('raw', oldest.endMs);
      }
      return oldest?.name;
    }),

    pruneBefore: (horizon, limit, filter) => transaction(() => {
      const before = buckets.list().filter((b) => b.startMs < horizon);
      if (before.length === 0) return 0;
      const { clause, params } = seriesClause(filter);
      if (filter?.include === undefined && filter?.exclude === undefined) rollups.noteDropped('raw', horizon);
      let removed = 0;
      for (const b of before) {
        removed += statements.get(`DELETE FROM ${b.name} WHERE rowid IN
          (SELECT rowid FROM ${b.name} WHERE t < @horizon ${clause} LIMIT CAST(@limit AS INTEGER))`).run({ ...params, horizon, limit: limit - removed }).changes;
        rollups.rowsDeleted(b.name);
        if (removed >= limit) break;
      }
      return removed;
    }),
  };
}
