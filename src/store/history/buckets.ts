// History time buckets: one table per UTC month or day, created on first write and catalogued (with
// bounds of the other time columns, to skip buckets on reads); retention drops whole tables.

import type BetterSqlite3 from 'better-sqlite3';
import type { CacheGroup, TxCache } from '../tx-cache.js';
import { INSTANCE_PREFIX } from '../../ngsi/index.js';
import { ROW_COLUMNS, encodeInstanceId, isCanonicalInstanceId, type HistoryRow } from './history-codec.js';

export type BucketSize = 'day' | 'month';

/** Inclusive bounds of a time column over a bucket's rows; conservative (never narrower than the data). */
export interface TimeBounds {
  min: number;
  max: number;
}

export interface BucketRange {
  name: string;
  startMs: number;
  endMs: number;
}

/** A catalogued bucket with the bounds of created_at, modified_at and deleted_at (absent: no such row). */
export interface BucketInfo extends BucketRange {
  created?: TimeBounds;
  modified?: TimeBounds;
  deleted?: TimeBounds;
}

/** A stored row together with its insertion order inside its bucket. */
export type StoredHistoryRow = HistoryRow & { rid: number };

export interface BucketTable {
  readonly name: string;
  insert(row: HistoryRow): void;
  /**
   * Inserts `count` rows given as flat columns (ROW_COLUMNS values a row, in the order of
   * INSERT_COLUMNS), several to a statement (see ROWS_PER_INSERT). A row's instance_id may be the
   * id's text: a canonical one is stored as its 16 bytes, as encodeInstanceId would give them.
   */
  insertMany(values: readonly unknown[], count: number): void;
  /** Rows of the given series ids, ordered by (t, insertion). */
  rowsOfSeries(seriesIds: number[]): StoredHistoryRow[];
  /**
   * False when the table surely holds no row of the series at instant t: t is past the latest
   * instant of the series the table ever held (one look-up per series, then kept as rows go in).
   */
  mayHold(series: number, t: number): boolean;
}

/**
 * Series whose latest instant a table keeps. NOTE: an upper bound, never too low: every row goes in
 * through `insert`, which raises it; a deletion or a rollback leaves it higher than needed, which
 * only costs the look-up it would have saved.
 */
const LATEST_KEPT = 20_000;

export interface BucketCatalogue {
  /** The table for instant t, created (in the caller's transaction) when missing. */
  tableFor(t: number): BucketTable;
  /** The existing table for instant t, if any. */
  existingFor(t: number): BucketTable | undefined;
  /** Existing buckets, oldest first, with their time-column bounds (shared: do not modify). */
  list(): readonly BucketInfo[];
  /** An existing bucket's table. */
  table(name: string): BucketTable;
  /** Widens a bucket's catalogued bounds to cover a row written without `insert` (an updated row). */
  cover(name: string, row: HistoryRow): void;
  /** Drops a bucket table and its catalogue entry (in the caller's transaction). */
  drop(name: string): void;
  /** Changes whenever a bucket is dropped: statements prepared on bucket tables must be forgotten. */
  generation(): number;
}

/** The columns of a StoredHistoryRow, as a bucket table is selected. */
export const STORED_ROW_COLUMNS = 'rowid AS rid, series, t, observed_at, created_at, modified_at, deleted_at, instance_id, value, num, sub';

const DROPPED = 'dropped';
const NAME = /^history_\d{6}(\d{2})?$/;
const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** Bounds are kept to the hour: a write inside known bounds costs no catalogue update. */
const GRAIN_MS = 3_600_000;
const floorGrain = (ms: number): number => Math.floor(ms / GRAIN_MS) * GRAIN_MS;
const ceilGrain = (ms: number): number => floorGrain(ms) + GRAIN_MS - 1;

/** The bucket holding instant t (UTC). */
export function bucketOf(t: number, size: BucketSize): BucketRange {
  if (!Number.isFinite(t)) throw new RangeError(`history instant is not a finite number: ${t}`);
  const d = new Date(t);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  if (y < 0 || y > 9999) throw new RangeError(`history instant out of range: ${t}`);
  if (size === 'month') {
    return { name: `history_${pad(y, 4)}${pad(m + 1)}`, startMs: Date.UTC(y, m, 1), endMs: Date.UTC(y, m + 1, 1) };
  }
  const day = d.getUTCDate();
  return {
    name: `history_${pad(y, 4)}${pad(m + 1)}${pad(day)}`,
    startMs: Date.UTC(y, m, day),
    endMs: Date.UTC(y, m, day + 1),
  };
}

/** Checks a bucket table name before it is spliced into SQL (table names cannot be bound parameters). */
export function checkBucketName(name: string): string {
  if (!NAME.test(name)) throw new Error(`invalid history bucket name: ${name}`);
  return name;
}

/**
 * Indexes of a bucket table: (series, t) for writes, observedAt reads and retention, and the deletion
 * rows by deletedAt.
 * NOTE: createdAt and modifiedAt have no index of their own: each would cost a random index page on
 * every reading to serve rare reads. Those reads take the series' rows through (series, t), in the
 * buckets whose catalogued bounds overlap the window only.
 */
function bucketIndexSql(name: string): string {
  const n = checkBucketName(name);
  return `
    CREATE INDEX IF NOT EXISTS ${n}_series_t ON ${n} (series, t);
    CREATE INDEX IF NOT EXISTS ${n}_series_deleted ON ${n} (series, deleted_at) WHERE deleted_at IS NOT NULL;`;
}

/**
 * NOTE: a rowid table plus indexes on (series, time) rather than WITHOUT ROWID. Rows arrive in time
 * order, so the table grows by appending to its last page (one dirty page per batch), and only the
 * small index entries (series, time, rowid) land inside the trees. A WITHOUT ROWID table clustered on
 * (series, t, ...) would insert whole rows mid-tree, splitting more and larger pages, and would
 * need a random instance_id in its key, losing insertion order for equal t.
 */
function createTableSql(name: string): string {
  return `
    CREATE TABLE IF NOT EXISTS ${checkBucketName(name)} (
      series      INTEGER NOT NULL REFERENCES series (id),
      t           INTEGER NOT NULL,
      observed_at INTEGER,
      created_at  INTEGER NOT NULL,
      modified_at INTEGER NOT NULL,
      deleted_at  INTEGER,
      instance_id BLOB    NOT NULL,
      value       TEXT,
      num         REAL,
      sub         TEXT
    );${bucketIndexSql(name)}`;
}

/**
 * Rows of one multi-row INSERT. NOTE: a statement run costs about as much as binding its ten values
 * again (the call into the driver, the step, the reset): bulk writes of 32 rows to a statement took
 * history inserts from about 3.6 to 1.7 µs a row; past 32 it gained little more.
 */
export const ROWS_PER_INSERT = 32;
const INSERT_COLUMNS = 'series, t, observed_at, created_at, modified_at, deleted_at, instance_id, value, num, sub';
/** Index of instance_id among a row's values. */
const ID_COLUMN = 6;
/**
 * One row of the multi-row INSERT: the instance id is bound twice, as the canonical id whose 16
 * bytes SQLite decodes (unhex skipping the dashes) or, for any other id, as the value stored.
 * NOTE: decoded in SQL so that no Buffer is made per row: a 16-byte Buffer is an object of its own
 * on the heap, and a bulk ingest makes one per instance.
 */
const CHUNK_ROW = `(?, ?, ?, ?, ?, ?, coalesce(unhex(substr(?, ${INSTANCE_PREFIX.length + 1}), '-'), ?), ?, ?, ?)`;
const CHUNK_ROW_PARAMS = ROW_COLUMNS + 1;

type RowValues = [number, number, number | null, number, number, number | null, Buffer | string, string | null, number | null, string | null];

/**
 * Reports the rows of a bulk insert: the bounds widened once for all of them (a bulk write's rows
 * share their times mostly), and each series' latest instant raised once per run of its rows.
 */
function coverRows(
  values: readonly unknown[], count: number, raiseLatest: (series: number, t: number) => void,
  onInsert: (created: number, modified: number, deleted: number | null) => void,
): void {
  let lowCreated = Infinity;
  let highCreated = -Infinity;
  let lowModified = Infinity;
  let highModified = -Infinity;
  let lowDeleted: number | null = null;
  let highDeleted: number | null = null;
  let series = -1;
  let last = -Infinity;
  for (let v = 0; v < count * ROW_COLUMNS; v += ROW_COLUMNS) {
    const rowSeries = values[v] as number;
    const t = values[v + 1] as number;
    if (rowSeries !== series) {
      if (series !== -1) raiseLatest(series, last);
      series = rowSeries;
      last = t;
    } else if (t > last) last = t;
    const created = values[v + 3] as number;
    const modified = values[v + 4] as number;
    const deleted = values[v + 5] as number | null;
    if (created < lowCreated) lowCreated = created;
    if (created > highCreated) highCreated = created;
    if (modified < lowModified) lowModified = modified;
    if (modified > highModified) highModified = modified;
    if (deleted !== null) {
      if (lowDeleted === null || deleted < lowDeleted) lowDeleted = deleted;
      if (highDeleted === null || deleted > highDeleted) highDeleted = deleted;
    }
  }
  if (count > 0) {
    raiseLatest(series, last);
    onInsert(lowCreated, lowModified, lowDeleted);
    onInsert(highCreated, highModified, highDeleted);
  }
}

function prepareTable(db: BetterSqlite3.Database, name: string, onInsert: (created: number, modified: number, deleted: number | null) => void): BucketTable {
  checkBucketName(name);
  // NOTE: positional parameters: binding by name costs a property look-up per column and row.
  const insert = db.prepare<RowValues>(`INSERT INTO ${name} (${INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  let insertChunk: BetterSqlite3.Statement<unknown[]> | undefined;
  let chunkParams: unknown[] | undefined;
  const select = db.prepare<[string], StoredHistoryRow>(
    `SELECT ${STORED_ROW_COLUMNS}
     FROM ${name} WHERE series IN (SELECT value FROM json_each(?)) ORDER BY series, t, rowid`,
  );
  const latestOf = db.prepare<[number], number | null>(`SELECT max(t) FROM ${name} WHERE series = ?`).pluck();
  let latest = new Map<number, number>();
  const raiseLatest = (series: number, t: number): void => {
    const known = latest.get(series);
    if (known !== undefined && t > known) latest.set(series, t);
  };
  const inserted = (series: number, t: number, created: number, modified: number, deleted: number | null): void => {
    raiseLatest(series, t);
    onInsert(created, modified, deleted);
  };
  const insertChunkAt = (values: readonly unknown[], first: number): void => {
    insertChunk ??= db.prepare<unknown[]>(
      `INSERT INTO ${name} (${INSERT_COLUMNS}) VALUES ${Array.from({ length: ROWS_PER_INSERT }, () => CHUNK_ROW).join(', ')}`,
    );
    const params = (chunkParams ??= new Array<unknown>(ROWS_PER_INSERT * CHUNK_ROW_PARAMS));
    let p = 0;
    const end = (first + ROWS_PER_INSERT) * ROW_COLUMNS;
    for (let v = first * ROW_COLUMNS; v < end; v += ROW_COLUMNS) {
      for (let c = 0; c < ID_COLUMN; c++) params[p++] = values[v + c];
      // A Buffer is an id encoded already: stored as it is.
      const id = values[v + ID_COLUMN] as Buffer | string;
      const isCanonical = typeof id === 'string' && isCanonicalInstanceId(id);
      params[p++] = isCanonical ? id : null;
      params[p++] = isCanonical ? null : id;
      for (let c = ID_COLUMN + 1; c < ROW_COLUMNS; c++) params[p++] = values[v + c];
    }
    insertChunk.run(params);
  };
  const insertOne = (row: HistoryRow): void => {
    insert.run(row.series, row.t, row.observed_at, row.created_at, row.modified_at, row.deleted_at, encodedId(row.instance_id), row.value, row.num, row.sub);
  };
  return {
    name,
    insert: (row) => {
      insertOne(row);
      inserted(row.series, row.t, row.created_at, row.modified_at, row.deleted_at);
    },
    insertMany: (values, count) => {
      let i = 0;
      for (; i + ROWS_PER_INSERT <= count; i += ROWS_PER_INSERT) insertChunkAt(values, i);
      for (; i < count; i++) {
        const v = i * ROW_COLUMNS;
        insert.run(values[v] as number, values[v + 1] as number, values[v + 2] as number | null, values[v + 3] as number, values[v + 4] as number,
          values[v + 5] as number | null, encodedId(values[v + 6] as Buffer | string), values[v + 7] as string | null,
          values[v + 8] as number | null, values[v + 9] as string | null);
      }
      coverRows(values, count, raiseLatest, onInsert);
    },
    rowsOfSeries: (ids) => (ids.length === 0 ? [] : select.all(JSON.stringify(ids))),
    mayHold(series, t) {
      let known = latest.get(series);
      if (known === undefined) {
        if (latest.size >= LATEST_KEPT) latest = new Map();
        known = latestOf.get(series) ?? Number.NEGATIVE_INFINITY;
        latest.set(series, known);
      }
      return t <= known;
    },
  };
}

/** The stored form of an instance_id value: a canonical id's text as its 16 bytes. */
const encodedId = (id: Buffer | string): Buffer | string => (typeof id === 'string' ? encodeInstanceId(id) : id);

interface CatalogueRow {
  name: string;
  start_ms: number;
  end_ms: number;
  created_min: number | null;
  created_max: number | null;
  modified_min: number | null;
  modified_max: number | null;
  deleted_min: number | null;
  deleted_max: number | null;
}

type Bounds = Pick<BucketInfo, 'created' | 'modified' | 'deleted'>;

const boundsOf = (min: number | null, max: number | null): TimeBounds | undefined =>
  min === null || max === null ? undefined : { min, max };

function widen(b: TimeBounds | undefined, at: number | null): TimeBounds | undefined {
  if (at === null) return b;
  if (b && b.min <= at && at <= b.max) return b;
  return { min: Math.min(b?.min ?? at, floorGrain(at)), max: Math.max(b?.max ?? at, ceilGrain(at)) };
}

const CATALOGUE_COLUMNS = 'name, start_ms, end_ms, created_min, created_max, modified_min, modified_max, deleted_min, deleted_max';

type CatalogueStatements = ReturnType<typeof prepareCatalogueStatements>;

function prepareCatalogueStatements(db: BetterSqlite3.Database) {
  return {
    exists: db.prepare<[string], number>('SELECT 1 FROM history_buckets WHERE name = ?').pluck(),
    register: db.prepare<[string, number, number]>('INSERT INTO history_buckets (name, start_ms, end_ms) VALUES (?, ?, ?)'),
    unregister: db.prepare<[string]>('DELETE FROM history_buckets WHERE name = ?'),
    getOne: db.prepare<[string], CatalogueRow>(`SELECT ${CATALOGUE_COLUMNS} FROM history_buckets WHERE name = ?`),
    listAll: db.prepare<[], CatalogueRow>(`SELECT ${CATALOGUE_COLUMNS} FROM history_buckets ORDER BY start_ms, name`),
    saveBounds: db.prepare<[number | null, number | null, number | null, number | null, number | null, number | null, string]>(
      `UPDATE history_buckets SET created_min = ?, created_max = ?, modified_min = ?, modified_max = ?,
         deleted_min = ?, deleted_max = ? WHERE name = ?`,
    ),
  };
}

function readCatalogue(st: CatalogueStatements): BucketInfo[] {
  return st.listAll.all().map((r) => {
    const info: BucketInfo = { name: r.name, startMs: r.start_ms, endMs: r.end_ms };
    const created = boundsOf(r.created_min, r.created_max);
    const modified = boundsOf(r.modified_min, r.modified_max);
    const deleted = boundsOf(r.deleted_min, r.deleted_max);
    if (created) info.created = created;
    if (modified) info.modified = modified;
    if (deleted) info.deleted = deleted;
    return info;
  });
}

/** The catalogue's change count: any change (even one later rolled back) makes list() read again. */
interface CatalogueState {
  changes: number;
}

/**
 * The catalogued time bounds of each bucket, widened (to the grain) as rows arrive; `bounds` is the
 * transaction-aware cache of them.
 */
function createBoundsKeeper(st: CatalogueStatements, bounds: TxCache<string, Bounds>, state: CatalogueState): (name: string, createdAt: number, modifiedAt: number, deletedAt: number | null) => void {
  const boundsFor = (name: string): Bounds => {
    const cached = bounds.get(name);
    if (cached) return cached;
    const row = st.getOne.get(name);
    const b: Bounds = {};
    const created = boundsOf(row?.created_min ?? null, row?.created_max ?? null);
    const modified = boundsOf(row?.modified_min ?? null, row?.modified_max ?? null);
    const deleted = boundsOf(row?.deleted_min ?? null, row?.deleted_max ?? null);
    if (created) b.created = created;
    if (modified) b.modified = modified;
    if (deleted) b.deleted = deleted;
    bounds.set(name, b);
    return b;
  };

  const coverTimes = (name: string, createdAt: number, modifiedAt: number, deletedAt: number | null): void => {
    const old = boundsFor(name);
    const created = widen(old.created, createdAt);
    const modified = widen(old.modified, modifiedAt);
    const deleted = widen(old.deleted, deletedAt);
    if (created === old.created && modified === old.modified && deleted === old.deleted) return;
    const next: Bounds = {};
    if (created) next.created = created;
    if (modified) next.modified = modified;
    if (deleted) next.deleted = deleted;
    state.changes += 1;
    st.saveBounds.run(created?.min ?? null, created?.max ?? null, modified?.min ?? null, modified?.max ?? null,
      deleted?.min ?? null, deleted?.max ?? null, name);
    bounds.set(name, next);
  };

  return coverTimes;
}

export function createBucketCatalogue(db: BetterSqlite3.Database, size: BucketSize, caches: CacheGroup): BucketCatalogue {
  // Prepared statements of buckets whose table is known to exist; DROPPED once dropped (look again).
  // NOTE: a marker, not null: a pending entry must hide the committed one until COMMIT.
  const tables = caches.create<string, BucketTable | typeof DROPPED>();
  const bounds = caches.create<string, Bounds>();
  let dropped = 0;
  /** The range bucketOf gave last (a pure function of t and size: no invalidation needed). */
  let lastRange: BucketRange | undefined;
  // The catalogue as last read outside a transaction, and the change count it reflects: reads of
  // many attributes list it once.
  const state: CatalogueState = { changes: 0 };
  let listed: { changes: number; list: readonly BucketInfo[] } | undefined;
  const st = prepareCatalogueStatements(db);
  const coverTimes = createBoundsKeeper(st, bounds, state);
  const cover = (name: string, row: HistoryRow): void => coverTimes(name, row.created_at, row.modified_at, row.deleted_at);

  const known = (name: string): BucketTable | undefined => {
    const t = tables.get(name);
    return t === DROPPED ? undefined : t;
  };

  /** The bucket of instant t. NOTE: writes come in time order mostly: the bucket of the last one is asked again. */
  const rangeOf = (t: number): BucketRange =>
    (lastRange !== undefined && t >= lastRange.startMs && t < lastRange.endMs ? lastRange : (lastRange = bucketOf(t, size)));

  const table = (name: string): BucketTable => {
    let t = known(name);
    if (!t) {
      t = prepareTable(db, name, (created, modified, deleted) => coverTimes(name, created, modified, deleted));
      tables.set(name, t);
    }
    return t;
  };

  return {
    tableFor(t) {
      const range = rangeOf(t);
      const cached = known(range.name);
      if (cached) return cached;
      if (st.exists.get(range.name) === undefined) {
        if (!db.inTransaction) throw new Error('history buckets are created inside a transaction');
        state.changes += 1;
        db.exec(createTableSql(range.name));
        st.register.run(range.name, range.startMs, range.endMs);
      }
      return table(range.name);
    },
    existingFor(t) {
      const name = rangeOf(t).name;
      return known(name) ?? (st.exists.get(name) === undefined ? undefined : table(name));
    },
    list() {
      if (listed && listed.changes === state.changes) return listed.list;
      const list = readCatalogue(st);
      if (!db.inTransaction) listed = { changes: state.changes, list };
      return list;
    },
    table,
    cover,
    drop(name) {
      if (!db.inTransaction) throw new Error('history buckets are dropped inside a transaction');
      state.changes += 1;
      db.exec(`DROP TABLE IF EXISTS ${checkBucketName(name)}`);
      st.unregister.run(name);
      tables.set(name, DROPPED);
      bounds.set(name, {});
      dropped += 1;
    },
    generation: () => dropped,
  };
}
