// Persistence of JSON-LD contexts the broker cached or created, so they survive a restart.

import type BetterSqlite3 from 'better-sqlite3';
import type { ContextPersistence, PersistedContext } from '../../lib/index.js';

interface ContextRow {
  id: string;
  url: string;
  body: string;
  kind: PersistedContext['kind'];
  created_at: number;
}

const toContext = (r: ContextRow): PersistedContext => ({ id: r.id, url: r.url, body: r.body, kind: r.kind, createdAt: r.created_at });

export function createContextPersistence(db: BetterSqlite3.Database): ContextPersistence {
  const COLUMNS = 'id, url, body, kind, created_at';
  const byUrl = db.prepare<[string], ContextRow>(`SELECT ${COLUMNS} FROM contexts WHERE url = ?`);
  const byId = db.prepare<[string], ContextRow>(`SELECT ${COLUMNS} FROM contexts WHERE id = ?`);
  const all = db.prepare<[], ContextRow>(`SELECT ${COLUMNS} FROM contexts ORDER BY created_at, url`);
  const upsert = db.prepare<[ContextRow]>(
    `INSERT INTO contexts (${COLUMNS}) VALUES (@id, @url, @body, @kind, @created_at)
     ON CONFLICT (url) DO UPDATE SET id = excluded.id, body = excluded.body, kind = excluded.kind, created_at = excluded.created_at`,
  );
  const remove = db.prepare<[string]>('DELETE FROM contexts WHERE id = ?');

  return {
    get: (url) => {
      const row = byUrl.get(url);
      return row && toContext(row);
    },
    getById: (id) => {
      const row = byId.get(id);
      return row && toContext(row);
    },
    put: (ctx) => {
      upsert.run({ id: ctx.id, url: ctx.url, body: ctx.body, kind: ctx.kind, created_at: ctx.createdAt });
    },
    delete: (id) => remove.run(id).changes > 0,
    list: () => all.all().map(toContext),
  };
}
