// Persistence of permissions (interface 2.6) and the read filter of a subject as SQL: the entities
// a list of assignees may read, as a rowid list the query planner can start from, so a subject who
// may read 10 of 100,000 entities is answered at the speed of an indexed lookup.

import type BetterSqlite3 from 'better-sqlite3';
import { ACTIONS, AlreadyExistsError, NO_SCOPE, type Action, type EntityId, type Permission, type PermissionTarget } from '../../ngsi/index.js';
import type { SqlFragment } from '../sql-fragment.js';

interface PermissionRow {
  id: string;
  target_id: string | null;
  target_types: string | null;
  target_scopes: string | null;
  assignee: string;
  assigner: string | null;
  action: number;
  created_at: number;
  modified_at: number;
}

const COLUMNS = 'id, target_id, target_types, target_scopes, assignee, assigner, action, created_at, modified_at';

/** What a listing of permissions selects; every member narrows (AND). */
export interface PermissionFilter {
  /** Permissions whose target is one of these entity ids. */
  targetIds?: readonly EntityId[];
  assignees?: readonly string[];
  assigner?: string;
  /** Least action (interface 4.7: asking `write` also returns admin and own). */
  minAction?: Action;
}

export interface PermissionRepository {
  /** Inserts a permission; AlreadyExists when its id is taken. */
  insert(tenant: string, p: Permission): void;
  /**
   * Makes the subject the owner of the live entity: its `own` permission, kept in the entity's row
   * and read back as a permission like the others.
   */
  own(tenant: string, entityId: EntityId, subject: string, now: number): void;
  get(tenant: string, id: string): Permission | undefined;
  replace(tenant: string, p: Permission): boolean;
  delete(tenant: string, id: string): boolean;
  /** A permission with the same assignee and action whose target has the same members (interface 5 rule 6). */
  findSame(tenant: string, p: Pick<Permission, 'assignee' | 'action' | 'target'>): Permission | undefined;
  /** Permissions of the tenant matching the filter, in creation order. */
  list(tenant: string, filter: PermissionFilter): Permission[];
  /** Permissions of any of the assignees that may apply to the entity: on its id, or by types/scopes. */
  applicableTo(tenant: string, assignees: readonly string[], entityId: EntityId): Permission[];
  /** The permissions of any of the assignees by types/scopes (no id target). */
  byTypesOrScopes(tenant: string, assignees: readonly string[]): Permission[];
  /** Every permission on the entity id (whoever holds it). */
  targeting(tenant: string, entityId: EntityId): Permission[];
  /** Removes every permission targeting the entity (it is gone for good). */
  removeForEntity(tenant: string, entityId: EntityId): number;
  /** Entities (of every tenant) whose owner is the subject. */
  ownedBy(subject: string): Array<{ tenant: string; id: EntityId }>;
  /** Removes every permission assigned to the subject, in every tenant. */
  removeAssignedTo(subject: string): number;
  /**
   * The entities the assignees may read, as a rowid list over `entities e` (live and deleted rows):
   * undefined when they may read every entity of the tenant.
   */
  readFilter(tenant: string, assignees: readonly string[]): SqlFragment | undefined;
}

const toTarget = (r: PermissionRow): PermissionTarget => {
  if (r.target_id !== null) return { id: r.target_id };
  const out: { types?: string[]; scopes?: string[] } = {};
  if (r.target_types !== null) out.types = JSON.parse(r.target_types) as string[];
  if (r.target_scopes !== null) out.scopes = JSON.parse(r.target_scopes) as string[];
  return out;
};

const toPermission = (r: PermissionRow): Permission => {
  const action = ACTIONS[r.action];
  if (action === undefined) throw new Error(`permission ${r.id}: unknown action ${r.action}`);
  const p = { id: r.id, target: toTarget(r), assignee: r.assignee, action, createdAt: r.created_at, modifiedAt: r.modified_at };
  return r.assigner === null ? p : { ...p, assigner: r.assigner };
};

/** The owner of an entity id, from the row of the entity that holds it. */
interface OwnerRow {
  rowid: number;
  id: string;
  owner: string;
  owned_at: number;
}

const OWNER_COLUMNS = 'rowid, id, owner, owned_at';
const OWNER_PREFIX = 'urn:ngsi-ld:Permission:owner-';
const OWNER_ID = /^urn:ngsi-ld:Permission:owner-([1-9][0-9]{0,15})-([0-9a-z]{1,12})$/;

/** The `own` permission held in an entity row: its id names the row and the time it was granted. */
const ownerPermission = (r: OwnerRow): Permission => ({
  id: `${OWNER_PREFIX}${r.rowid}-${r.owned_at.toString(36)}`, target: { id: r.id }, assignee: r.owner, action: 'own',
  createdAt: r.owned_at, modifiedAt: r.owned_at,
});

/**
 * Permissions held in rows (a) and owners held in entity rows (b), each in creation order, as one list
 * in order of creation time. On a tie the owner comes first: a write grants the owner of a new entity
 * before its specificAccessPolicy.
 */
function mergeByCreation(a: Permission[], b: Permission[]): Permission[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const out: Permission[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push((b[j] as Permission).createdAt <= (a[i] as Permission).createdAt ? b[j++] as Permission : a[i++] as Permission);
  while (i < a.length) out.push(a[i++] as Permission);
  while (j < b.length) out.push(b[j++] as Permission);
  return out;
}

/** A list kept in a canonical order, so equal sets compare equal as JSON. */
const listJson = (list: readonly string[] | undefined): string | null => (list === undefined ? null : JSON.stringify([...new Set(list)].sort()));

const rowValues = (tenant: string, p: Permission): unknown[] => [
  tenant, p.id, p.target.id ?? null, listJson(p.target.types), listJson(p.target.scopes), p.assignee, p.assigner ?? null,
  ACTIONS.indexOf(p.action), p.createdAt, p.modifiedAt,
];

/** Distinct filters kept per (tenant, assignees); any permission write empties the cache. */
const FILTER_CACHE_SIZE = 256;

type PermissionStatements = ReturnType<typeof preparePermissionStatements>;

function preparePermissionStatements(db: BetterSqlite3.Database) {
  return {
    insert: db.prepare(`INSERT INTO permissions (tenant, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, id) DO NOTHING`),
    byId: db.prepare<[string, string], PermissionRow>(`SELECT ${COLUMNS} FROM permissions WHERE tenant = ? AND id = ?`),
    update: db.prepare(`UPDATE permissions SET target_id = ?, target_types = ?, target_scopes = ?, assignee = ?, assigner = ?,
      action = ?, modified_at = ? WHERE tenant = ? AND id = ?`),
    remove: db.prepare<[string, string]>('DELETE FROM permissions WHERE tenant = ? AND id = ?'),
    same: db.prepare<[string, string, number, string | null, string | null, string | null], PermissionRow>(
      `SELECT ${COLUMNS} FROM permissions WHERE tenant = ? AND assignee = ? AND action = ?
         AND target_id IS ? AND target_types IS ? AND target_scopes IS ? LIMIT 1`,
    ),
    onEntity: db.prepare<[string, string, string], PermissionRow>(
      `SELECT ${COLUMNS} FROM permissions WHERE tenant = ? AND target_id = ? AND assignee IN (SELECT value FROM json_each(?))`,
    ),
    wide: db.prepare<[string, string], PermissionRow>(
      `SELECT ${COLUMNS} FROM permissions WHERE tenant = ? AND target_id IS NULL AND assignee IN (SELECT value FROM json_each(?))`,
    ),
    onId: db.prepare<[string, string], PermissionRow>(`SELECT ${COLUMNS} FROM permissions WHERE tenant = ? AND target_id = ?`),
    removeTargeting: db.prepare<[string, string]>('DELETE FROM permissions WHERE tenant = ? AND target_id = ?'),
    owned: db.prepare<[string], { tenant: string; target_id: string }>(
      'SELECT tenant, target_id FROM permissions WHERE assignee = ? AND action = 3 AND target_id IS NOT NULL ORDER BY seq',
    ),
    removeAssigned: db.prepare<[string]>('DELETE FROM permissions WHERE assignee = ?'),
    // NOTE: only these two columns are set, so of the entity's indexes only entities_owner is written.
    setOwner: db.prepare<[string, number, string, string]>(
      'UPDATE entities SET owner = ?, owned_at = ? WHERE tenant = ? AND id = ? AND deleted_at IS NULL',
    ),
    // At most one row of an id holds its owner: later lives of the id find it and grant no other.
    ownerOf: db.prepare<[string, string], OwnerRow>(
      `SELECT ${OWNER_COLUMNS} FROM entities INDEXED BY entities_tenant_id WHERE tenant = ? AND id = ? AND owner IS NOT NULL LIMIT 1`,
    ),
    ownerByRow: db.prepare<[number, string, number], OwnerRow>(
      `SELECT ${OWNER_COLUMNS} FROM entities WHERE rowid = ? AND tenant = ? AND owned_at = ? AND owner IS NOT NULL`,
    ),
    ownedRows: db.prepare<[string], { tenant: string; id: string }>(
      'SELECT tenant, id FROM entities INDEXED BY entities_owner WHERE owner = ? ORDER BY owned_at, rowid',
    ),
    disown: db.prepare<[string]>('UPDATE entities SET owner = NULL, owned_at = NULL WHERE owner = ?'),
    ownsAny: db.prepare<[string, string], number>(
      'SELECT 1 FROM entities INDEXED BY entities_owner WHERE owner IN (SELECT value FROM json_each(?)) AND tenant = ? LIMIT 1',
    ).pluck(),
  };
}

type Listed = <R>(sql: string, params: Record<string, unknown>) => R[];

/**
 * Runs a listing by its SQL text. NOTE: every create by a non-admin lists the permissions on its id,
 * so listing statements are kept by their SQL text: one per combination of filters, never per value.
 */
function createListed(db: BetterSqlite3.Database): Listed {
  const listStatements = new Map<string, BetterSqlite3.Statement<[Record<string, unknown>], unknown>>();
  return <R>(sql: string, params: Record<string, unknown>): R[] => {
    let stmt = listStatements.get(sql);
    if (stmt === undefined) {
      stmt = db.prepare<[Record<string, unknown>], unknown>(sql);
      listStatements.set(sql, stmt);
    }
    return stmt.all(params) as R[];
  };
}

/** The terms of a listing: its tenant, and the target ids and assignees asked for, over the given columns. */
function listTerms(tenant: string, filter: PermissionFilter, targetColumn: string, assigneeColumn: string):
  { where: string[]; params: Record<string, unknown> } {
  const where = ['tenant = @tenant'];
  const params: Record<string, unknown> = { tenant };
  if (filter.targetIds) {
    where.push(`${targetColumn} IN (SELECT value FROM json_each(@targetIds))`);
    params['targetIds'] = JSON.stringify(filter.targetIds);
  }
  if (filter.assignees) {
    where.push(`${assigneeColumn} IN (SELECT value FROM json_each(@assignees))`);
    params['assignees'] = JSON.stringify(filter.assignees);
  }
  return { where, params };
}

function ownersMatching(listed: Listed, tenant: string, filter: PermissionFilter): Permission[] {
  // Own permissions have no assigner (the service grants them).
  if (filter.assigner !== undefined) return [];
  const { where, params } = listTerms(tenant, filter, 'id', 'owner');
  const sql = `SELECT ${OWNER_COLUMNS} FROM entities ${filter.targetIds ? '' : 'INDEXED BY entities_owner '}WHERE owner IS NOT NULL
    AND ${where.join(' AND ')} ORDER BY owned_at, rowid`;
  return listed<OwnerRow>(sql, params).map(ownerPermission);
}

function listPermissions(listed: Listed, tenant: string, filter: PermissionFilter): Permission[] {
  const { where, params } = listTerms(tenant, filter, 'target_id', 'assignee');
  if (filter.assigner !== undefined) {
    where.push('assigner = @assigner');
    params['assigner'] = filter.assigner;
  }
  if (filter.minAction !== undefined) {
    where.push('action >= @minAction');
    params['minAction'] = ACTIONS.indexOf(filter.minAction);
  }
  const rows = listed<PermissionRow>(`SELECT ${COLUMNS} FROM permissions WHERE ${where.join(' AND ')} ORDER BY seq`, params);
  return mergeByCreation(rows.map(toPermission), ownersMatching(listed, tenant, filter));
}

/**
 * The read filter of a tenant's assignees, as SQL over `e`. `ownerless` collects the assignees of a
 * filter built without the owner branch, because none of them owned anything.
 */
function buildReadFilter(st: PermissionStatements, ownerless: Set<string>, tenant: string, assignees: readonly string[]): SqlFragment | undefined {
  const params: Record<string, unknown> = { acc_tenant: tenant, acc_assignees: JSON.stringify(assignees) };
  const parts = [
    `SELECT x.rowid FROM permissions p INDEXED BY permissions_assignee
      JOIN entities x INDEXED BY entities_tenant_id ON x.tenant = p.tenant AND x.id = p.target_id
      WHERE p.tenant = @acc_tenant AND p.target_id IS NOT NULL AND p.assignee IN (SELECT value FROM json_each(@acc_assignees))`,
  ];
  // Every row (every life) of the ids the assignees own. A subject that owns nothing (a reader, a
  // dashboard) is spared the branch until it owns something: own() then empties the cache.
  if (st.ownsAny.get(params['acc_assignees'] as string, tenant) === undefined) {
    for (const a of assignees) ownerless.add(a);
  } else {
    parts.push(`SELECT x.rowid FROM entities o INDEXED BY entities_owner
      JOIN entities x INDEXED BY entities_tenant_id ON x.tenant = o.tenant AND x.id = o.id
      WHERE o.owner IN (SELECT value FROM json_each(@acc_assignees)) AND o.tenant = @acc_tenant`);
  }
  let n = 0;
  for (const p of st.wide.all(tenant, JSON.stringify(assignees)).map(toTarget)) {
    if (p.types === undefined && p.scopes === undefined) return undefined;
    const scopes = p.scopes === undefined ? undefined : scopeSql(p.scopes, `acc_s${n}`, params);
    if (p.types !== undefined) {
      // NOTE: by IRI, not by IRI id: a filter kept in the cache stays right when the type is first stored later.
      params[`acc_t${n}`] = JSON.stringify(p.types);
      parts.push(`SELECT t.entity FROM entity_types t${scopes ? ' JOIN entities x ON x.rowid = t.entity' : ''}
        WHERE t.iri IN (SELECT i.id FROM iris i WHERE i.iri IN (SELECT value FROM json_each(@acc_t${n})))${scopes ? ` AND ${scopes}` : ''}`);
    } else {
      parts.push(`SELECT x.rowid FROM entities x WHERE x.tenant = @acc_tenant AND ${scopes}`);
    }
    n++;
  }
  // NOTE: UNION ALL: the IN list needs no distinct rows, and UNION would sort each branch to merge them.
  return { sql: `e.rowid IN (${parts.join(' UNION ALL ')})`, params, isRowidList: true };
}

/** Read filters kept per (tenant, assignees); any permission write empties the cache (changed). */
function createReadFilters(st: PermissionStatements) {
  let filters = new Map<string, SqlFragment | undefined>();
  let ownerless = new Set<string>();
  return {
    changed(): void {
      if (filters.size > 0) filters = new Map();
      if (ownerless.size > 0) ownerless = new Set();
    },
    /** Whether cached filters were built for this subject without the owner branch. */
    isOwnerless: (subject: string): boolean => ownerless.has(subject),
    get(tenant: string, assignees: readonly string[]): SqlFragment | undefined {
      const key = `${tenant}\u0000${assignees.join('\u0000')}`;
      if (filters.has(key)) return filters.get(key);
      const fragment = buildReadFilter(st, ownerless, tenant, assignees);
      if (filters.size >= FILTER_CACHE_SIZE) filters = new Map();
      filters.set(key, fragment);
      return fragment;
    },
  };
}

export function createPermissionRepository(db: BetterSqlite3.Database): PermissionRepository {
  const st = preparePermissionStatements(db);
  const listed = createListed(db);
  const filters = createReadFilters(st);
  const changed = filters.changed;

  const ownerById = (tenant: string, id: string): Permission | undefined => {
    const m = OWNER_ID.exec(id);
    if (m === null) return undefined;
    const row = st.ownerByRow.get(Number(m[1]), tenant, parseInt(m[2] as string, 36));
    return row && ownerPermission(row);
  };
  const ownerPermissionOf = (tenant: string, entityId: EntityId): Permission | undefined => {
    const row = st.ownerOf.get(tenant, entityId);
    return row && ownerPermission(row);
  };

  return {
    insert(tenant, p) {
      if (st.insert.run(...rowValues(tenant, p)).changes === 0) throw new AlreadyExistsError('Already exists', `Permission ${p.id} already exists`);
      changed();
    },
    own(tenant, entityId, subject, now) {
      st.setOwner.run(subject, now, tenant, entityId);
      // The cached filters select owners by SQL, whatever rows hold them, except those built for
      // subjects that owned nothing.
      if (filters.isOwnerless(subject)) changed();
    },
    get(tenant, id) {
      if (id.startsWith(OWNER_PREFIX)) {
        const owner = ownerById(tenant, id);
        if (owner) return owner;
      }
      const row = st.byId.get(tenant, id);
      return row && toPermission(row);
    },
    replace(tenant, p) {
      const [, , targetId, types, scopes, assignee, assigner, action, , modifiedAt] = rowValues(tenant, p);
      const done = st.update.run(targetId, types, scopes, assignee, assigner, action, modifiedAt, tenant, p.id).changes > 0;
      changed();
      return done;
    },
    delete(tenant, id) {
      const done = st.remove.run(tenant, id).changes > 0;
      changed();
      return done;
    },
    findSame(tenant, p) {
      if (p.action === 'own' && p.target.id !== undefined) {
        const owner = ownerPermissionOf(tenant, p.target.id);
        if (owner && owner.assignee === p.assignee) return owner;
      }
      const row = st.same.get(tenant, p.assignee, ACTIONS.indexOf(p.action), p.target.id ?? null, listJson(p.target.types), listJson(p.target.scopes));
      return row && toPermission(row);
    },
    list: (tenant, filter) => listPermissions(listed, tenant, filter),
    applicableTo(tenant, assignees, entityId) {
      const list = JSON.stringify(assignees);
      const found = [...st.onEntity.all(tenant, entityId, list), ...st.wide.all(tenant, list)].map(toPermission);
      const owner = ownerPermissionOf(tenant, entityId);
      if (owner && assignees.includes(owner.assignee)) found.push(owner);
      return found;
    },
    byTypesOrScopes: (tenant, assignees) => st.wide.all(tenant, JSON.stringify(assignees)).map(toPermission),
    targeting(tenant, entityId) {
      const found = st.onId.all(tenant, entityId).map(toPermission);
      const owner = ownerPermissionOf(tenant, entityId);
      if (owner) found.push(owner);
      return found;
    },
    removeForEntity(tenant, entityId) {
      const n = st.removeTargeting.run(tenant, entityId).changes;
      if (n > 0) changed();
      return n;
    },
    ownedBy: (subject) => [...st.owned.all(subject).map((r) => ({ tenant: r.tenant, id: r.target_id })), ...st.ownedRows.all(subject)],
    removeAssignedTo(subject) {
      const n = st.removeAssigned.run(subject).changes + st.disown.run(subject).changes;
      if (n > 0) changed();
      return n;
    },
    readFilter: (tenant, assignees) => filters.get(tenant, assignees),
  };
}

/** Entities of `x` having one of the scopes (`@none`: no scope at all). */
function scopeSql(scopes: readonly string[], name: string, params: Record<string, unknown>): string {
  const named = scopes.filter((s) => s !== NO_SCOPE);
  const terms: string[] = [];
  if (named.length > 0) {
    params[name] = JSON.stringify(named);
    terms.push(`EXISTS (SELECT 1 FROM json_each(x.doc, '$.scope') s WHERE s.value IN (SELECT value FROM json_each(@${name})))`);
  }
  if (named.length < scopes.length) terms.push(`json_type(x.doc, '$.scope') IS NULL`);
  return terms.length === 1 ? terms[0] as string : `(${terms.join(' OR ')})`;
}

