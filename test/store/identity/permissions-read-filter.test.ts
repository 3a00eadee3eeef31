// The permission repository's read filter and listings: a subject's readable entities are found from
// its own permissions through the assignee index, however many permissions others hold, and a
// listing prepares one statement per combination of filters.

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/lib/index.js';
import type { EntityId } from '../../../src/ngsi/index.js';
import { MIGRATIONS, runMigrations } from '../../../src/store/migrations/migrations.js';
import { createPermissionRepository, type PermissionRepository } from '../../../src/store/identity/permissions.js';

const T0 = Date.UTC(2024, 0, 15);
const ASSIGNEES = ['reader', 'authenticated', 'public'];
const assetId = (n: number): EntityId => `urn:ngsi-ld:Asset:${n}` as EntityId; // NOTE: a well-formed URI

describe('permission repository', () => {
  let db: Database.Database;
  let repo: PermissionRepository;

  beforeEach(() => {
    db = new Database(':memory:');
    runMigrations(db, MIGRATIONS, silentLogger);
    repo = createPermissionRepository(db);
    const entity = db.prepare('INSERT INTO entities (tenant, id, doc, created_at, modified_at) VALUES (?, ?, ?, ?, ?)');
    for (let n = 0; n < 300; n++) {
      entity.run('', assetId(n), '{}', T0, T0);
      // Others' permissions outnumber the reader's: the owner of every entity, and the reader on every 100th.
      repo.insert('', { id: `urn:ngsi-ld:Permission:o${n}`, target: { id: assetId(n) }, assignee: 'owner', action: 'own', createdAt: T0, modifiedAt: T0 });
      if (n % 100 === 0) {
        repo.insert('', { id: `urn:ngsi-ld:Permission:r${n}`, target: { id: assetId(n) }, assignee: 'reader', action: 'read', createdAt: T0, modifiedAt: T0 });
      }
    }
  });

  afterEach(() => {
    vi.restoreAllMocks();
    db.close();
  });

  /** The filter as a statement listing the ids it lets through. */
  function readable(): { sql: string; params: Record<string, unknown> } {
    const filter = repo.readFilter('', ASSIGNEES);
    if (filter === undefined) throw new Error('expected a rowid list');
    return { sql: `SELECT e.id FROM entities e WHERE ${filter.sql} ORDER BY e.rowid`, params: filter.params };
  }

  it('lets through exactly the entities the assignees hold a permission on', () => {
    const { sql, params } = readable();
    expect(db.prepare(sql).pluck().all(params)).toEqual([assetId(0), assetId(100), assetId(200)]);
  });

  it('seeks the assignees\' permissions in the assignee index instead of walking every permission of the tenant', () => {
    const { sql, params } = readable();
    const plan = db.prepare<[Record<string, unknown>], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`).all(params).map((r) => r.detail);
    expect(plan).toContain('SEARCH p USING COVERING INDEX permissions_assignee (tenant=? AND assignee=?)');
    expect(plan.join('\n')).not.toMatch(/permissions_target/);
  });

  it('prepares a listing statement once per combination of filters', () => {
    const prepare = vi.spyOn(db, 'prepare');
    for (let n = 0; n < 3; n++) {
      expect(repo.list('', { targetIds: [assetId(n * 100)] })).toHaveLength(2);
      expect(repo.list('', { targetIds: [assetId(n * 100)], minAction: 'own' })).toHaveLength(1);
    }
    // Two for the permission rows, one for the owners in entity rows (the action does not narrow owners).
    expect(prepare).toHaveBeenCalledTimes(3);
  });
});
