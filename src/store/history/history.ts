// The history repository: attribute instances appended to time buckets under a cached series id
// per (tenant, entity, attribute, datasetId), with the temporal reads, edits and retention on top.

import type BetterSqlite3 from 'better-sqlite3';
import type { EntityId, Iri } from '../../ngsi/index.js';
import type { BucketCatalogue, StoredHistoryRow } from './buckets.js';
import { createRowBatch } from './history-batch.js';
import { decodeInstance } from './history-codec.js';
import { createHistoryEditor, type SeriesKeys } from './history-edit.js';
import { createHistoryReader } from './history-query.js';
import { createRollupRepository } from './rollups.js';
import type { IriDictionary } from '../iris.js';
import type { RunInTx } from '../transactions.js';
import type { CacheGroup } from '../tx-cache.js';
import type { HistoryInstance, HistoryRepository } from '../types.js';
import type { ReadScope } from '../read-scope.js';

interface SeriesRow {
  id: number;
  attr: Iri;
  dataset_id: string | null;
}

interface HistoryDeps {
  db: BetterSqlite3.Database;
  iris: IriDictionary;
  buckets: BucketCatalogue;
  caches: CacheGroup;
  transaction: RunInTx;
}

const REMOVED = -1;

/**
 * The cache key of a series. NOTE: a tenant matches [A-Za-z0-9_-]*, an attribute is a number, a
 * datasetId is a URI (no spaces) and the entity id comes last, so two keys never collide.
 */
const seriesKey = (tenant: string, entityId: string, attrId: number, dataset: string | null): string =>
  `${tenant} ${attrId} ${dataset === null ? '-' : `+${dataset}`} ${entityId}`;

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Series order of listForEntity: attribute IRI, then datasetId with the default instance first. */
function compareSeries(a: SeriesRow, b: SeriesRow): number {
  if (a.attr !== b.attr) return compareText(a.attr, b.attr);
  if (a.dataset_id === b.dataset_id) return 0;
  if (a.dataset_id === null) return -1;
  if (b.dataset_id === null) return 1;
  return compareText(a.dataset_id, b.dataset_id);
}

/** All instances of an entity (optionally one attribute), ordered by (attr, datasetId, time, insertion). */
function entityHistoryLister(db: BetterSqlite3.Database, iris: IriDictionary, buckets: BucketCatalogue): HistoryRepository['listForEntity'] {
  const SERIES_OF = 'SELECT s.id, i.iri AS attr, s.dataset_id FROM series s JOIN iris i ON i.id = s.attr WHERE s.tenant = ? AND s.entity_id = ?';
  const seriesOfEntity = db.prepare<[string, string], SeriesRow>(SERIES_OF);
  const seriesOfAttr = db.prepare<[string, string, number], SeriesRow>(`${SERIES_OF} AND s.attr = ?`);
  return ({ tenant }: ReadScope, entityId: EntityId, attr?: Iri): HistoryInstance[] => {
    let series: SeriesRow[];
    if (attr === undefined) series = seriesOfEntity.all(tenant, entityId);
    else {
      const attrId = iris.lookup(attr);
      series = attrId === undefined ? [] : seriesOfAttr.all(tenant, entityId, attrId);
    }
    if (series.length === 0) return [];
    series.sort(compareSeries);
    const rank = new Map(series.map((s, i) => [s.id, i]));
    const byId = new Map(series.map((s) => [s.id, s]));
    const ids = series.map((s) => s.id);
    const rows: Array<{ row: StoredHistoryRow; bucket: number }> = [];
    buckets.list().forEach((b, bucket) => {
      for (const row of buckets.table(b.name).rowsOfSeries(ids)) rows.push({ row, bucket });
    });
    // Buckets partition time, so (t, bucket, rowid) is insertion order within a series.
    rows.sort((a, b) =>
      (rank.get(a.row.series) ?? 0) - (rank.get(b.row.series) ?? 0) || a.row.t - b.row.t || a.bucket - b.bucket || a.row.rid - b.row.rid);
    return rows.map(({ row }) => {
      const s = byId.get(row.series);
      if (!s) throw new Error(`history row of unknown series ${row.series}`);
      const key: Pick<HistoryInstance, 'entityId' | 'attr' | 'datasetId'> = { entityId, attr: s.attr };
      if (s.dataset_id !== null) key.datasetId = s.dataset_id;
      return decodeInstance(row, key);
    });
  };
}

/** The series of a tenant, or of its entities of a type (retention rules). */
function seriesOfEntities(db: BetterSqlite3.Database): HistoryRepository['seriesOf'] {
  const ofTenant = db.prepare<[string], number>('SELECT id FROM series WHERE tenant = ?').pluck();
  const ofType = db.prepare<[string, string, string], number>(`SELECT s.id FROM series s WHERE s.tenant = ? AND s.entity_id IN (
    SELECT e.id FROM entities e JOIN entity_types et ON et.entity = e.rowid JOIN iris i ON i.id = et.iri WHERE e.tenant = ? AND i.iri = ?)`).pluck();
  return (tenant, type) => (type === undefined ? ofTenant.all(tenant) : ofType.all(tenant, tenant, type));
}

export function createHistoryRepository({ db, iris, buckets, caches, transaction }: HistoryDeps): HistoryRepository {
  // REMOVED (not null: a pending entry must hide the committed one): the series is gone, look again.
  const seriesCache = caches.create<string, number>();
  const findSeries = db.prepare<[string, string, number, string | null], number>(
    'SELECT id FROM series WHERE tenant = ? AND entity_id = ? AND attr = ? AND dataset_id IS ?',
  ).pluck();
  // One statement for a new series (the common case on create); the look-up only when it exists.
  // NOTE: no RETURNING (it costs a temporary table per row): the new rowid, or 0 changes on conflict.
  const insertSeries = db.prepare<[string, string, number, string | null]>(
    'INSERT INTO series (tenant, entity_id, attr, dataset_id) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );

  const seriesId = (tenant: string, entityId: EntityId, attr: Iri, datasetId: string | undefined, isLikelyNew = false): number => {
    const attrId = iris.intern(attr);
    const dataset = datasetId ?? null;
    const key = seriesKey(tenant, entityId, attrId, dataset);
    if (!isLikelyNew) {
      const cached = seriesCache.get(key);
      if (cached !== undefined && cached !== REMOVED) return cached;
    }
    const inserted = insertSeries.run(tenant, entityId, attrId, dataset);
    const id = inserted.changes === 1 ? Number(inserted.lastInsertRowid) : findSeries.get(tenant, entityId, attrId, dataset);
    if (id === undefined) throw new Error(`series of ${entityId} ${attr} neither inserted nor found`);
    seriesCache.set(key, id);
    return id;
  };

  const append: HistoryRepository['append'] = (tenant, instances, opts) => {
    if (instances.length === 0) return;
    const isLikelyNew = opts?.newSeries === true;
    transaction(() => {
      const batch = createRowBatch(buckets);
      for (const inst of instances) batch.add(seriesId(tenant, inst.entityId, inst.attr, inst.datasetId, isLikelyNew), inst);
      batch.flush();
    });
  };

  const keys: SeriesKeys = {
    idOf: seriesId,
    find(tenant, entityId, attr, datasetId) {
      const attrId = iris.lookup(attr);
      if (attrId === undefined) return undefined;
      const dataset = datasetId ?? null;
      const key = seriesKey(tenant, entityId, attrId, dataset);
      const cached = seriesCache.get(key);
      if (cached !== undefined && cached !== REMOVED) return cached;
      const id = findSeries.get(tenant, entityId, attrId, dataset);
      if (id !== undefined) seriesCache.set(key, id);
      return id;
    },
    forget(tenant, removed) {
      for (const s of removed) {
        const attrId = iris.lookup(s.attr);
        if (attrId !== undefined) seriesCache.set(seriesKey(tenant, s.entityId, attrId, s.datasetId ?? null), REMOVED);
      }
    },
  };
  const rollups = createRollupRepository({ db, buckets, transaction });
  const reader = createHistoryReader(db, iris, buckets, rollups);

  return {
    append,
    listForEntity: entityHistoryLister(db, iris, buckets),
    buckets: () => buckets.list().map((b) => b.name),
    rollups,
    seriesOf: seriesOfEntities(db),
    ...reader,
    ...createHistoryEditor({ db, buckets, transaction, keys, reader, rollups }),
  };
}
