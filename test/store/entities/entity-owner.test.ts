// The owner of an entity id held in the entity's row (interface 2.6 rule 4): read back as an `own`
// permission by every lookup of the permission repository, beside the permissions held in rows
// (including owners granted before owners moved into the entity rows).

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/lib/index.js';
import type { EntityId, Permission } from '../../../src/ngsi/index.js';
import { MIGRATIONS, runMigrations } from '../../../src/store/migrations/migrations.js';
import { createPermissionRepository, type PermissionRepository } from '../../../src/store/identity/permissions.js';

const T0 = Date.UTC(2024, 0, 15);
const ROOM = 'urn:ngsi-ld:Room:1' as EntityId;
const HALL = 'urn:ngsi-ld:Room:2' as EntityId;

describe('entity owners in entity rows', () => {
  let db: Database.Database;
  let repo: PermissionRepository;
  const row = (id: EntityId, at: number, deletedAt: number | null = null, tenant = ''): number =>
    Number(db.prepare('INSERT INTO entities (tenant, id, doc, created_at, modified_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(tenant, id, '{}', at, at, deletedAt).lastInsertRowid);
  const grant = (id: string, target: Permission['target'], assignee: string, action: Permission['action'], at: number): void =>
    repo.insert('', { id, target, assignee, action, createdAt: at, modifiedAt: at });
  const ids = (list: Permission[]): string[] => list.map((p) => p.id);

  beforeEach(() => {
    db = new Database(':memory:');
    runMigrations(db, MIGRATIONS, silentLogger);
    repo = createPermissionRepository(db);
  });
  afterEach(() => db.close());

  it('grants the owner in the live row, with no permission row, and reads it back as an own permission', () => {
    const rowid = row(ROOM, T0);
    repo.own('', ROOM, 'alice', T0 + 5);
    expect(db.prepare('SELECT count(*) FROM permissions').pluck().get()).toBe(0);
    expect(db.prepare('SELECT owner, owned_at FROM entities WHERE rowid = ?').get(rowid)).toEqual({ owner: 'alice', owned_at: T0 + 5 });

    const own = repo.targeting('', ROOM);
    expect(own).toEqual([{
      id: `urn:ngsi-ld:Permission:owner-${rowid}-${(T0 + 5).toString(36)}`, target: { id: ROOM }, assignee: 'alice', action: 'own',
      createdAt: T0 + 5, modifiedAt: T0 + 5,
    }]);
    const [p] = own as [Permission];
    expect(repo.get('', p.id)).toEqual(p);
    expect(repo.get('other', p.id)).toBeUndefined();
    expect(repo.applicableTo('', ['alice'], ROOM)).toEqual([p]);
    expect(repo.applicableTo('', ['bob'], ROOM)).toEqual([]);
    expect(repo.findSame('', { target: { id: ROOM }, assignee: 'alice', action: 'own' })).toEqual(p);
    expect(repo.findSame('', { target: { id: ROOM }, assignee: 'bob', action: 'own' })).toBeUndefined();
    expect(repo.ownedBy('alice')).toEqual([{ tenant: '', id: ROOM }]);
  });

  it('answers no permission for an owner id whose row is gone or was used again', () => {
    const rowid = row(ROOM, T0);
    repo.own('', ROOM, 'alice', T0);
    const [p] = repo.targeting('', ROOM) as [Permission];
    db.prepare('DELETE FROM entities WHERE rowid = ?').run(rowid);
    expect(repo.get('', p.id)).toBeUndefined();
    // The same row id again, owned at another time: the old id does not name it.
    db.prepare('INSERT INTO entities (rowid, tenant, id, doc, created_at, modified_at) VALUES (?, ?, ?, ?, ?, ?)').run(rowid, '', HALL, '{}', T0, T0);
    repo.own('', HALL, 'bob', T0 + 1);
    expect(repo.get('', p.id)).toBeUndefined();
    expect(repo.get('', `urn:ngsi-ld:Permission:owner-${rowid}-${(T0 + 1).toString(36)}`)?.assignee).toBe('bob');
  });

  it('still finds a permission row whose id only looks like an owner id', () => {
    row(ROOM, T0);
    grant('urn:ngsi-ld:Permission:owner-7-x', { id: ROOM }, 'bob', 'read', T0);
    expect(repo.get('', 'urn:ngsi-ld:Permission:owner-7-x')?.assignee).toBe('bob');
  });

  it('lists owners and permission rows together in order of creation time, the owner first on a tie', () => {
    row(ROOM, T0);
    row(HALL, T0);
    grant('urn:ngsi-ld:Permission:before', { id: ROOM }, 'bob', 'read', T0 - 1);
    repo.own('', ROOM, 'alice', T0);
    grant('urn:ngsi-ld:Permission:scope', { scopes: ['/a'] }, 'alice', 'own', T0);
    repo.own('', HALL, 'alice', T0 + 1);
    grant('urn:ngsi-ld:Permission:after', { id: HALL }, 'carol', 'admin', T0 + 2);
    const [room, hall] = [repo.targeting('', ROOM).find((p) => p.action === 'own'), repo.targeting('', HALL).find((p) => p.action === 'own')];
    expect(ids(repo.list('', {}))).toEqual(['urn:ngsi-ld:Permission:before', room?.id, 'urn:ngsi-ld:Permission:scope', hall?.id, 'urn:ngsi-ld:Permission:after']);
    // Each filter applies to owners too; owners have no assigner and the highest action.
    expect(ids(repo.list('', { assignees: ['alice'] }))).toEqual([room?.id, 'urn:ngsi-ld:Permission:scope', hall?.id]);
    expect(ids(repo.list('', { targetIds: [HALL] }))).toEqual([hall?.id, 'urn:ngsi-ld:Permission:after']);
    expect(ids(repo.list('', { minAction: 'own' }))).toEqual([room?.id, 'urn:ngsi-ld:Permission:scope', hall?.id]);
    expect(ids(repo.list('', { assigner: 'alice' }))).toEqual([]);
    expect(ids(repo.list('other', {}))).toEqual([]);
  });

  it('lets the owner read every row of the id, deleted lives included, through the owner index', () => {
    const first = row(ROOM, T0, T0 + 10);
    db.prepare('UPDATE entities SET owner = ?, owned_at = ? WHERE rowid = ?').run('alice', T0, first);
    const second = row(ROOM, T0 + 20);
    const other = row(HALL, T0);
    row(ROOM, T0, null, 'other');
    const filter = repo.readFilter('', ['alice', 'urn:ngsi-ld:Subject:authenticated']);
    if (filter === undefined) throw new Error('expected a rowid list');
    const sql = `SELECT e.rowid FROM entities e WHERE ${filter.sql} ORDER BY e.rowid`;
    expect(db.prepare(sql).pluck().all(filter.params)).toEqual([first, second]);
    expect(db.prepare(sql).pluck().all(filter.params)).not.toContain(other);
    const plan = db.prepare<[Record<string, unknown>], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`).all(filter.params).map((r) => r.detail);
    expect(plan.join('\n')).toMatch(/USING (COVERING )?INDEX entities_owner \(owner=\?/);
  });

  it('spares a subject that owns nothing the owner branch, until it owns something', () => {
    const room = row(ROOM, T0);
    const readable = (): number[] => {
      const filter = repo.readFilter('', ['bob']);
      if (filter === undefined) throw new Error('expected a rowid list');
      return db.prepare(`SELECT e.rowid FROM entities e WHERE ${filter.sql}`).pluck().all(filter.params) as number[];
    };
    expect(readable()).toEqual([]);
    expect(repo.readFilter('', ['bob'])?.sql).not.toMatch(/entities_owner/);
    // The cached filter of bob goes: the same filter again would hide what bob now owns.
    repo.own('', ROOM, 'bob', T0);
    expect(readable()).toEqual([room]);
    expect(repo.readFilter('', ['bob'])?.sql).toMatch(/entities_owner/);
  });

  it('forgets the owner of a removed subject, and reads an owner granted as a permission row as before', () => {
    row(ROOM, T0);
    row(HALL, T0);
    repo.own('', ROOM, 'alice', T0);
    grant('urn:ngsi-ld:Permission:legacy', { id: HALL }, 'alice', 'own', T0);
    expect(repo.ownedBy('alice')).toEqual([{ tenant: '', id: HALL }, { tenant: '', id: ROOM }]);
    expect(ids(repo.targeting('', HALL))).toEqual(['urn:ngsi-ld:Permission:legacy']);
    expect(repo.removeAssignedTo('alice')).toBe(2);
    expect(repo.ownedBy('alice')).toEqual([]);
    expect(repo.targeting('', ROOM)).toEqual([]);
    expect(repo.list('', {})).toEqual([]);
  });
});
