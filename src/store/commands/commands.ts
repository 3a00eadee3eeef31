// Persistence of the commands issued to devices (edge.md §6): one row per command, from the write
// that issued it (PENDING) through its delivery to its answer (OK, ERROR) or its end (EXPIRED).

import type BetterSqlite3 from 'better-sqlite3';
import type { Json } from '../../ngsi/index.js';

/** The states of a command; PENDING and DELIVERED are open (it may still be delivered or answered). */
export type CommandState = 'PENDING' | 'DELIVERED' | 'OK' | 'ERROR' | 'EXPIRED';

/** One command as stored. */
export interface CommandRecord {
  id: string;
  tenant: string;
  deviceId: string;
  entityId: string;
  name: string;
  /** The expanded name of the command attribute. */
  attr: string;
  value: Json;
  issuedAt: number;
  expiresAt: number;
  state: CommandState;
}

export interface CommandRepository {
  /** Records a new command (an id already stored is left as it is). */
  insert(c: CommandRecord): void;
  /**
   * Moves a command from one of the states `from` to `to`; false when it is in none of them (so an
   * answer, a delivery or an expiry is applied once).
   */
  transition(id: string, from: readonly CommandState[], to: CommandState, at: number): boolean;
  /** The open commands (PENDING or DELIVERED) in the order of their expiry (then id) after `after`, at most `limit`. */
  open(after: { expiresAt: number; id: string }, limit: number): CommandRecord[];
  get(id: string): CommandRecord | undefined;
  /** Removes at most `limit` finished commands (OK, ERROR, EXPIRED) that finished before `before`; returns how many. */
  pruneFinished(before: number, limit: number): number;
  /** The latest commands issued through an entity, newest first, at most `limit`. */
  recent(tenant: string, entityId: string, limit: number): CommandRecord[];
}

interface CommandRow {
  id: string;
  tenant: string;
  device_id: string;
  entity_id: string;
  name: string;
  attr: string;
  value: string;
  issued_at: number;
  expires_at: number;
  state: CommandState;
}

const COLUMNS = 'id, tenant, device_id, entity_id, name, attr, value, issued_at, expires_at, state';

const toRecord = (r: CommandRow): CommandRecord => ({
  id: r.id, tenant: r.tenant, deviceId: r.device_id, entityId: r.entity_id, name: r.name, attr: r.attr,
  // NOTE: written by this file with JSON.stringify of a Json value.
  value: JSON.parse(r.value) as Json,
  issuedAt: r.issued_at, expiresAt: r.expires_at, state: r.state,
});

export function createCommandRepository(db: BetterSqlite3.Database): CommandRepository {
  const insert = db.prepare<[string, string, string, string, string, string, string, number, number, CommandState]>(
    `INSERT INTO commands (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
  );
  /** One statement per set of states a command may leave (two sets are in use), prepared on first use. */
  const moves = new Map<string, BetterSqlite3.Statement<unknown[]>>();
  const moveFrom = (from: readonly CommandState[]): BetterSqlite3.Statement<unknown[]> => {
    const key = from.join(',');
    let st = moves.get(key);
    if (st === undefined) {
      st = db.prepare(`UPDATE commands SET state = ?, answered_at = ? WHERE id = ? AND state IN (${from.map(() => '?').join(', ')})`);
      moves.set(key, st);
    }
    return st;
  };
  const open = db.prepare<[number, number, string, number], CommandRow>(
    `SELECT ${COLUMNS} FROM commands WHERE state IN ('PENDING', 'DELIVERED') AND (expires_at > ? OR (expires_at = ? AND id > ?))
     ORDER BY expires_at, id LIMIT CAST(? AS INTEGER)`,
  );
  const byId = db.prepare<[string], CommandRow>(`SELECT ${COLUMNS} FROM commands WHERE id = ?`);
  // NOTE: the state list is that of the index commands_finished (migration 25): a range scan of it.
  const prune = db.prepare<[number, number]>(
    `DELETE FROM commands WHERE id IN (SELECT id FROM commands WHERE state IN ('OK', 'ERROR', 'EXPIRED') AND answered_at < ?
     ORDER BY answered_at LIMIT CAST(? AS INTEGER))`,
  );
  const recent = db.prepare<[string, string, number], CommandRow>(
    `SELECT ${COLUMNS} FROM commands WHERE tenant = ? AND entity_id = ? ORDER BY issued_at DESC, id DESC LIMIT CAST(? AS INTEGER)`,
  );
  return {
    insert: (c) => void insert.run(c.id, c.tenant, c.deviceId, c.entityId, c.name, c.attr, JSON.stringify(c.value), c.issuedAt, c.expiresAt, c.state),
    transition: (id, from, to, at) => from.length > 0 && moveFrom(from).run(to, at, id, ...from).changes > 0,
    open: (after, limit) => open.all(after.expiresAt, after.expiresAt, after.id, limit).map(toRecord),
    get: (id) => {
      const row = byId.get(id);
      return row && toRecord(row);
    },
    pruneFinished: (before, limit) => prune.run(before, limit).changes,
    recent: (tenant, entityId, limit) => recent.all(tenant, entityId, limit).map(toRecord),
  };
}
