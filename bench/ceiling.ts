// The benchmark ceiling: a bare Hono + better-sqlite3 server doing the least work each request needs.
// Started as a child process with SERVER_PORT, SERVER_HOST and STORAGE_DIR, like the broker. Query,
// batch and temporal endpoints live in ceiling-query.ts and ceiling-temporal.ts.

import { serve } from '@hono/node-server';
import Database from 'better-sqlite3';
import { Hono } from 'hono';
import { join } from 'node:path';
import { registerQueryRoutes } from './ceiling-query.js';
import { registerTemporalRoutes } from './ceiling-temporal.js';
import { isRecord } from './json.js';

const port = Number(process.env.SERVER_PORT ?? '0');
const host = process.env.SERVER_HOST ?? '127.0.0.1';
const dir = process.env.STORAGE_DIR ?? '.';

const db = new Database(join(dir, 'ceiling.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
// NOTE: the history index mirrors what a queryable history table needs; without it the ceiling
// would flatter itself on updates.
db.exec(`
  CREATE TABLE IF NOT EXISTS entities (id TEXT PRIMARY KEY, doc TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS history (
    entity_id TEXT NOT NULL, attr TEXT NOT NULL, value TEXT NOT NULL, observed_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS history_by_attr ON history (entity_id, attr, observed_at);
`);

const insertEntity = db.prepare<[string, string]>('INSERT INTO entities (id, doc) VALUES (?, ?)');
const selectEntity = db.prepare<[string], { doc: string }>('SELECT doc FROM entities WHERE id = ?');
const updateAttr = db.prepare<[string, string, string]>(
  'UPDATE entities SET doc = json_set(doc, ?, json(?)) WHERE id = ?',
);
const insertHistory = db.prepare<[string, string, string, number]>(
  'INSERT INTO history (entity_id, attr, value, observed_at) VALUES (?, ?, ?, ?)',
);
const updateWithHistory = db.transaction((id: string, attr: string, value: string): boolean => {
  const changed = updateAttr.run(`$."${attr}".value`, value, id).changes;
  if (changed === 0) return false;
  insertHistory.run(id, attr, value, Date.now());
  return true;
});

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Error && 'code' in err && err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

const app = new Hono();

app.get('/ready', (c) => c.text('ok'));

app.post('/ngsi-ld/v1/entities', async (c) => {
  const body: unknown = await c.req.json();
  if (!isRecord(body) || typeof body.id !== 'string') return c.body(null, 400);
  try {
    insertEntity.run(body.id, JSON.stringify(body));
  } catch (err) {
    if (isUniqueViolation(err)) return c.body(null, 409);
    throw err;
  }
  return c.body(null, 201, { Location: `/ngsi-ld/v1/entities/${body.id}` });
});

app.get('/ngsi-ld/v1/entities/:id', (c) => {
  const row = selectEntity.get(c.req.param('id'));
  if (!row) return c.body(null, 404);
  return c.body(row.doc, 200, { 'Content-Type': 'application/json' });
});

app.patch('/ngsi-ld/v1/entities/:id/attrs/:attr', async (c) => {
  const body: unknown = await c.req.json();
  if (!isRecord(body) || !('value' in body)) return c.body(null, 400);
  const updated = updateWithHistory(c.req.param('id'), c.req.param('attr'), JSON.stringify(body.value));
  return c.body(null, updated ? 204 : 404);
});

registerQueryRoutes(app, db);
registerTemporalRoutes(app, db);

const server = serve({ fetch: app.fetch, port, hostname: host });

function shutdown(): void {
  server.close(() => {
    db.close();
    process.exit(0);
  });
  // Keep-alive sockets from the load generator would hold close() open.
  if ('closeAllConnections' in server) server.closeAllConnections();
}

process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
