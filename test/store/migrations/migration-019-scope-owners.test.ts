// Migration 19: the `own` permissions by scope a first write used to make are removed; every other
// permission stays.

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/lib/index.js';
import { MIGRATIONS, runMigrations } from '../../../src/store/migrations/migrations.js';

describe('migration 19: no owner of a scope', () => {
  it('removes the own permissions by scope and keeps those by entity id and every granted permission', () => {
    const db = new Database(':memory:');
    try {
      runMigrations(db, MIGRATIONS.filter((m) => m.version < 19), silentLogger);
      const insert = db.prepare(`INSERT INTO permissions (tenant, id, target_id, target_types, target_scopes, assignee, assigner, action, created_at, modified_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 0)`);
      insert.run('', 'squat', null, null, '["/plantA"]', 'bob', null, 3);
      insert.run('t2', 'squat-t2', null, null, '["/plantB"]', 'bob', null, 3);
      insert.run('', 'ownRoom', 'urn:ngsi-ld:Room:1', null, null, 'alice', null, 3);
      insert.run('', 'adminScope', null, null, '["/plantA"]', 'carol', 'root', 2);
      insert.run('', 'readType', null, '["https://example.org/Room"]', null, 'dave', 'root', 0);
      expect(runMigrations(db, MIGRATIONS, silentLogger)).toBeGreaterThanOrEqual(1);
      const left = db.prepare<[], string>('SELECT id FROM permissions ORDER BY seq').pluck().all();
      expect(left).toEqual(['ownRoom', 'adminScope', 'readType']);
    } finally {
      db.close();
    }
  });
});
