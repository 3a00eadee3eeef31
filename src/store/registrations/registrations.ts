// Persistence of context source registrations (NGSI-LD §5.2.9, §5.9): documents per tenant in
// creation order, and their match index (entity type, id, idPattern and attribute names), written in
// the same transaction as the document.

import type BetterSqlite3 from 'better-sqlite3';
import { AlreadyExistsError } from '../../ngsi/index.js';

/** What the match index keeps of one registration. */
export interface RegistrationKeys {
  /** One per EntityInfo; a RegistrationInfo without entities has one with neither type, id nor pattern. */
  entities: ReadonlyArray<{ info: number; type?: string; id?: string; idPattern?: string }>;
  /** One per attribute name; a RegistrationInfo naming none has one without attr. */
  attrs: ReadonlyArray<{ info: number; attr?: string }>;
}

export interface StoredRegistration {
  id: string;
  /** The registrations module's encoding of the model. */
  doc: unknown;
  mode: string;
  owner?: string;
  expiresAt?: number;
  createdAt: number;
  modifiedAt: number;
}

/** Which registrations a listing looks at: any-of each list given (the first list given narrows the read). */
export interface RegistrationSelection {
  types?: readonly string[];
  attrs?: readonly string[];
  ids?: readonly string[];
  /** Only this owner's (a subject that is not an administrator). */
  owner?: string;
  /** Registrations expired at this instant are left out. */
  now: number;
  limit: number;
}

export interface RegistrationRepository {
  /** Throws AlreadyExistsError when the tenant has that id. */
  insert(tenant: string, reg: StoredRegistration, keys: RegistrationKeys): void;
  get(tenant: string, id: string): StoredRegistration | undefined;
  /** Replaces document, mode, expiry and index rows; false when none. */
  replace(tenant: string, reg: StoredRegistration, keys: RegistrationKeys): boolean;
  delete(tenant: string, id: string): boolean;
  /** Live registrations that may match the selection, in creation order, at most `limit` (exact matching is the caller's). */
  candidates(tenant: string, sel: RegistrationSelection): StoredRegistration[];
  /** Live registrations of these modes (conflict checks), at most `limit`. */
  withModes(tenant: string, modes: readonly string[], now: number, limit: number): StoredRegistration[];
  /** Registrations of every tenant whose expiresAt is at or before `now`, oldest expiry first, at most `limit`. */
  expired(now: number, limit: number): Array<{ tenant: string; reg: StoredRegistration }>;
  /** How many registrations each tenant holds, expired ones included (read once at start). */
  countByTenant(): Map<string, number>;
}

interface RegistrationRow {
  seq: number;
  id: string;
  owner: string | null;
  mode: string;
  expires_at: number | null;
  created_at: number;
  modified_at: number;
  doc: string;
}

const COLUMNS = 'r.seq, r.id, r.owner, r.mode, r.expires_at, r.created_at, r.modified_at, r.doc';
const LIVE = '(r.expires_at IS NULL OR r.expires_at > ?) AND (? IS NULL OR r.owner = ?)';

function toStored(r: RegistrationRow): StoredRegistration {
  const out: StoredRegistration = { id: r.id, doc: JSON.parse(r.doc) as unknown, mode: r.mode, createdAt: r.created_at, modifiedAt: r.modified_at };
  if (r.owner !== null) out.owner = r.owner;
  if (r.expires_at !== null) out.expiresAt = r.expires_at;
  return out;
}

type Page = [string, number, string | null, string | null, number];
type Keyed = [string, number, string | null, string | null, string, string, number];

function prepareReads(db: BetterSqlite3.Database) {
  const keyed = (sql: string) => db.prepare<Keyed, RegistrationRow>(
    `SELECT ${COLUMNS} FROM csource_registrations r WHERE r.tenant = ? AND ${LIVE} AND r.seq IN (${sql}) ORDER BY r.seq LIMIT CAST(? AS INTEGER)`,
  );
  return {
    byId: db.prepare<[string, string], RegistrationRow>(`SELECT ${COLUMNS} FROM csource_registrations r WHERE r.tenant = ? AND r.id = ?`),
    all: db.prepare<Page, RegistrationRow>(`SELECT ${COLUMNS} FROM csource_registrations r WHERE r.tenant = ? AND ${LIVE} ORDER BY r.seq LIMIT CAST(? AS INTEGER)`),
    byType: keyed('SELECT registration FROM csource_registration_entities WHERE tenant = ? AND (type = ? OR type IS NULL)'),
    byEntityId: keyed('SELECT registration FROM csource_registration_entities WHERE tenant = ? AND (entity_id = ? OR entity_id IS NULL)'),
    byAttr: keyed('SELECT registration FROM csource_registration_attrs WHERE tenant = ? AND (attr = ? OR attr IS NULL)'),
    expired: db.prepare<[number, number], RegistrationRow & { tenant: string }>(
      `SELECT r.tenant, ${COLUMNS} FROM csource_registrations r WHERE r.expires_at IS NOT NULL AND r.expires_at <= ? ORDER BY r.expires_at LIMIT CAST(? AS INTEGER)`,
    ),
    perTenant: db.prepare<[], { tenant: string; n: number }>('SELECT tenant, COUNT(*) AS n FROM csource_registrations GROUP BY tenant'),
    byMode: db.prepare<[string, string, number, number], RegistrationRow>(
      `SELECT ${COLUMNS} FROM csource_registrations r WHERE r.tenant = ? AND r.mode = ? AND (r.expires_at IS NULL OR r.expires_at > ?) ORDER BY r.seq LIMIT CAST(? AS INTEGER)`,
    ),
  };
}

function prepareWrites(db: BetterSqlite3.Database) {
  return {
    insert: db.prepare<[string, string, string | null, string, number | null, number, number, string]>(
      `INSERT INTO csource_registrations (tenant, id, owner, mode, expires_at, created_at, modified_at, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant, id) DO NOTHING`,
    ),
    replace: db.prepare<[string, number | null, number, string, string, string]>(
      'UPDATE csource_registrations SET mode = ?, expires_at = ?, modified_at = ?, doc = ? WHERE tenant = ? AND id = ?',
    ),
    seqOf: db.prepare<[string, string], number>('SELECT seq FROM csource_registrations WHERE tenant = ? AND id = ?').pluck(),
    remove: db.prepare<[number]>('DELETE FROM csource_registrations WHERE seq = ?'),
    entityRow: db.prepare<[number, string, number, string | null, string | null, string | null]>(
      'INSERT INTO csource_registration_entities (registration, tenant, info, type, entity_id, id_pattern) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    attrRow: db.prepare<[number, string, number, string | null]>('INSERT INTO csource_registration_attrs (registration, tenant, info, attr) VALUES (?, ?, ?, ?)'),
    dropEntities: db.prepare<[number]>('DELETE FROM csource_registration_entities WHERE registration = ?'),
    dropAttrs: db.prepare<[number]>('DELETE FROM csource_registration_attrs WHERE registration = ?'),
  };
}

/** The rows of several keyed reads, each in creation order, merged without duplicates, at most `limit`. */
function mergeRows(lists: RegistrationRow[][], limit: number): StoredRegistration[] {
  if (lists.length === 1) return (lists[0] ?? []).map(toStored);
  const bySeq = new Map<number, RegistrationRow>();
  for (const rows of lists) for (const r of rows) bySeq.set(r.seq, r);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq).slice(0, limit).map(toStored);
}

export function createRegistrationRepository(db: BetterSqlite3.Database): RegistrationRepository {
  const read = prepareReads(db);
  const write = prepareWrites(db);
  const writeKeys = (seq: number, tenant: string, keys: RegistrationKeys): void => {
    write.dropEntities.run(seq);
    write.dropAttrs.run(seq);
    for (const e of keys.entities) write.entityRow.run(seq, tenant, e.info, e.type ?? null, e.id ?? null, e.idPattern ?? null);
    for (const a of keys.attrs) write.attrRow.run(seq, tenant, a.info, a.attr ?? null);
  };
  const removeSeq = (seq: number): void => {
    write.dropEntities.run(seq);
    write.dropAttrs.run(seq);
    write.remove.run(seq);
  };
  return {
    insert(tenant, reg, keys) {
      const result = write.insert.run(tenant, reg.id, reg.owner ?? null, reg.mode, reg.expiresAt ?? null, reg.createdAt, reg.modifiedAt, JSON.stringify(reg.doc));
      if (result.changes === 0) throw new AlreadyExistsError('Already exists', `Context source registration ${reg.id} already exists`);
      writeKeys(Number(result.lastInsertRowid), tenant, keys);
    },
    get(tenant, id) {
      const row = read.byId.get(tenant, id);
      return row && toStored(row);
    },
    replace(tenant, reg, keys) {
      const seq = write.seqOf.get(tenant, reg.id);
      if (seq === undefined) return false;
      write.replace.run(reg.mode, reg.expiresAt ?? null, reg.modifiedAt, JSON.stringify(reg.doc), tenant, reg.id);
      writeKeys(seq, tenant, keys);
      return true;
    },
    delete(tenant, id) {
      const seq = write.seqOf.get(tenant, id);
      if (seq === undefined) return false;
      removeSeq(seq);
      return true;
    },
    candidates(tenant, sel) {
      const owner = sel.owner ?? null;
      const [stmt, values] = sel.types !== undefined ? [read.byType, sel.types]
        : sel.attrs !== undefined ? [read.byAttr, sel.attrs]
          : sel.ids !== undefined ? [read.byEntityId, sel.ids] : [undefined, []];
      if (stmt === undefined) return read.all.all(tenant, sel.now, owner, owner, sel.limit).map(toStored);
      return mergeRows(values.map((v) => stmt.all(tenant, sel.now, owner, owner, tenant, v, sel.limit)), sel.limit);
    },
    withModes: (tenant, modes, now, limit) => mergeRows(modes.map((m) => read.byMode.all(tenant, m, now, limit)), limit),
    expired: (now, limit) => read.expired.all(now, limit).map((r) => ({ tenant: r.tenant, reg: toStored(r) })),
    countByTenant: () => new Map(read.perTenant.all().map((r) => [r.tenant, r.n])),
  };
}
