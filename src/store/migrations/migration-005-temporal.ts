// Migration 5: temporal reads (NGSI-LD §5.7.3-5.7.4): catalogue bounds of createdAt/modifiedAt/deletedAt
// per bucket, an index per time property in existing buckets, and an index on every entity row by id.

import type BetterSqlite3 from 'better-sqlite3';

// NOTE: frozen copies of the bucket name check and the bucket indexes this migration creates; the
// live ones (history/buckets.ts) may change, what this migration did may not.
const BUCKET_NAME = /^history_\d{6}(\d{2})?$/;

function checkBucketName(name: string): string {
  if (!BUCKET_NAME.test(name)) throw new Error(`invalid history bucket name: ${name}`);
  return name;
}

function bucketIndexSql(name: string): string {
  const n = checkBucketName(name);
  return `
    CREATE INDEX IF NOT EXISTS ${n}_series_t ON ${n} (series, t);
    CREATE INDEX IF NOT EXISTS ${n}_series_deleted ON ${n} (series, deleted_at) WHERE deleted_at IS NOT NULL;`;
}

const BOUND_COLUMNS = ['created_min', 'created_max', 'modified_min', 'modified_max', 'deleted_min', 'deleted_max'];

export function up(db: BetterSqlite3.Database): void {
  for (const column of BOUND_COLUMNS) db.exec(`ALTER TABLE history_buckets ADD COLUMN ${column} INTEGER`);
  // Soft-deleted rows stay for temporal reads: find the latest row of an id, whatever its state.
  db.exec('CREATE INDEX entities_tenant_id ON entities (tenant, id)');
  const names = db.prepare<[], string>('SELECT name FROM history_buckets').pluck().all();
  const save = db.prepare(`UPDATE history_buckets SET created_min = @cmin, created_max = @cmax,
    modified_min = @mmin, modified_max = @mmax, deleted_min = @dmin, deleted_max = @dmax WHERE name = @name`);
  for (const name of names) {
    const table = checkBucketName(name);
    db.exec(bucketIndexSql(table));
    // Exact bounds of the rows already there (the catalogue of new rows keeps them to the hour).
    const bounds = db.prepare<[], Record<string, number | null>>(`SELECT min(created_at) AS cmin, max(created_at) AS cmax, min(modified_at) AS mmin,
      max(modified_at) AS mmax, min(deleted_at) AS dmin, max(deleted_at) AS dmax FROM ${table}`).get();
    save.run({ ...(bounds ?? {}), name });
  }
}
